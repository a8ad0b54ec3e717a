"""The offline `capitals` environment (questions written by us; see README.md)."""

from envs.capitals.environment import VERSION, CapitalsEnvironment

__all__ = ["VERSION", "CapitalsEnvironment"]
