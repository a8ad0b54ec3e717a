"""Harvest: read each coding agent's session store into sessions and the tasks a person typed.

Takes: transcript files and agent databases (read-only), cursors from the state directory.
Gives: `harvest.model` sessions and tasks, secrets already masked (`sleep.redact` at the
boundary), and the file edits each turn made. Imports only `sleep.redact` and `sleep.state`.
A new agent is one reader module here (beside `claude.py`, `codex.py`, …) plus one backend
in `core/models/agents/`.
"""
