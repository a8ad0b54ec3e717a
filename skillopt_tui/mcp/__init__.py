"""`skillopt mcp`: the engine as Model Context Protocol tools, for the agents users live in.

A face like the CLI and the TUI: it may import engine code (core/, sleep/), never typer or
textual. The `mcp` SDK is an optional extra (core.install_hint says how to add it).
"""
