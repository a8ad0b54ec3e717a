"""`python -m skillopt_tui` is the `skillopt` command: the MCP server runs its long tools as
this module, so they use the same interpreter and installation as the server itself."""

from skillopt_tui.cli.main import main

main()
