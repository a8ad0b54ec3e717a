"""The `--pi-home`, `--opencode-data`, `--copilot-home`, `--vscode-user-dir` and
`--cursor-home` options of the sleep commands (harvest, dry-run, run), defined once."""

from __future__ import annotations

from typing import Annotated

import typer

PiHome = Annotated[
    str | None,
    typer.Option("--pi-home", metavar="DIR", help="pi's agent folder (default ~/.pi/agent)."),
]
OpencodeData = Annotated[
    str | None,
    typer.Option(
        "--opencode-data",
        metavar="DIR",
        help="OpenCode's data folder or opencode.db (default ~/.local/share/opencode).",
    ),
]
CopilotHome = Annotated[
    str | None,
    typer.Option(
        "--copilot-home", metavar="DIR", help="Copilot CLI's folder (default ~/.copilot)."
    ),
]
VscodeUserDir = Annotated[
    str | None,
    typer.Option(
        "--vscode-user-dir",
        metavar="DIR",
        help="VS Code user-data folder(s), comma-separated (default: Code, Code - Insiders).",
    ),
]
CursorHome = Annotated[
    str | None,
    typer.Option("--cursor-home", metavar="DIR", help="Cursor's folder (default ~/.cursor)."),
]
