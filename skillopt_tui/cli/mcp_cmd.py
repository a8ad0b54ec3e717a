"""`skillopt mcp`: serve the engine's tools over stdio to an agent (Claude Code, Codex,
Copilot, Cursor, Devin). stdout is the protocol: nothing else may print there."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from core.install_hint import install_extra


class McpMissing(UserError):
    """The optional `mcp` extra is not installed."""


def mcp_cmd(
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir",
            metavar="DIR",
            help="Sleep state (default: ~/.local/state/skillopt/sleep).",
        ),
    ] = None,
    skills_repo: Annotated[
        Path | None,
        typer.Option(
            "--skills-repo", metavar="PATH", help="Default skills repository for the tools."
        ),
    ] = None,
    runs_dir: Annotated[
        Path | None,
        typer.Option(
            "--runs-dir", metavar="DIR", help="Default folder of training runs (default: ./runs)."
        ),
    ] = None,
    roots: Annotated[
        list[Path] | None,
        typer.Option(
            "--root",
            metavar="DIR",
            help="Another folder the tools' path arguments may name (repeatable; see README).",
        ),
    ] = None,
) -> None:
    """Serve SkillOpt as an MCP server on stdin/stdout (for agents; see README, Integrations)."""
    try:
        import anyio

        from skillopt_tui.mcp.server import serve_stdio
        from skillopt_tui.mcp.tools import ServerDefaults
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            raise McpMissing(
                f"the MCP server needs the mcp extra: {install_extra('mcp')}"
            ) from None
        raise
    defaults = ServerDefaults(
        state_dir=state_dir.expanduser().absolute() if state_dir else None,
        skills_repo=skills_repo.expanduser().absolute() if skills_repo else None,
        runs_dir=runs_dir.expanduser().absolute() if runs_dir else None,
        extra_roots=tuple(p.expanduser().absolute() for p in roots or ()),
    )
    anyio.run(serve_stdio, defaults)


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_cmd)
