"""Test doubles, named as such: deterministic stand-ins for real parts (DESIGN §11)."""
