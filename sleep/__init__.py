"""Sleep: learn from what a person asked their coding agents.

Part 1 (this package so far) harvests the user's Claude Code and Codex transcripts, keeps
the prompts a person typed, and redacts secrets locally before anything is shown or stored.
Headless: no textual, typer or skillopt_tui here, and from core only errors, atomic,
file_lock and secrets.
"""
