"""`skillopt tui --web`: the same Textual app served to a browser (textual-serve), behind a
loopback-only default, a per-start token and a single writing session."""
