"""`skillopt integrations list | install | uninstall <agent>`: SkillOpt inside Claude Code
and Codex. `--dry-run` prints every file that would be written, edited, backed up or
restored, and touches nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

integrations_app = typer.Typer(help="Install SkillOpt's skill and MCP server into your agents.")

Agent = Annotated[str, typer.Argument(metavar="AGENT", help="claude-code or codex.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show every change; write nothing.")]
HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", metavar="DIR", help="The home to install into (default: ~)."),
]


def _home(home: Path | None) -> Path:
    return (home or Path.home()).expanduser().absolute()


def _record(home: Path, agent: str):
    from skillopt_tui.integrations.changes import Record

    return Record.load(home / ".local" / "state" / "skillopt" / "integrations" / f"{agent}.json")


def _plan(agent: str, home: Path):
    from skillopt_tui.integrations.agents import changes_for, skillopt_command

    return changes_for(agent, home, skillopt_command())


@integrations_app.command("list")
def list_cmd(home: HomeOpt = None) -> None:
    """The agents SkillOpt integrates with, and whether each is installed here."""
    from skillopt_tui.integrations.agents import AGENTS

    root = _home(home)
    for agent in AGENTS:
        record = _record(root, agent)
        state = "installed" if record.entries else "not installed"
        typer.echo(f"{agent:12} {state}")
        for path in record.entries:
            typer.echo(f"  {path}")


@integrations_app.command("install")
def install_cmd(agent: Agent, dry_run: DryRun = False, home: HomeOpt = None) -> None:
    """Write the skillopt-sleep skill and the `skillopt mcp` server entry (backs up what it replaces)."""
    from skillopt_tui.integrations.changes import describe_install, install

    root = _home(home)
    changes, record = _plan(agent, root), _record(root, agent)
    if dry_run:
        for line in describe_install(changes, record):
            typer.echo(line)
        return
    for line in install(changes, record):
        typer.echo(line)
    _warn_without_mcp()
    typer.echo(f"installed for {agent}; `skillopt integrations uninstall {agent}` undoes it")


def _warn_without_mcp() -> None:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        typer.echo(
            "skillopt: the MCP server needs the mcp extra: pip install 'skillopt-tui[mcp]'",
            err=True,
        )


@integrations_app.command("uninstall")
def uninstall_cmd(agent: Agent, dry_run: DryRun = False, home: HomeOpt = None) -> None:
    """Undo `install`: restore backups, remove our files and config entries."""
    from skillopt_tui.integrations.changes import describe_uninstall, uninstall

    root = _home(home)
    changes, record = _plan(agent, root), _record(root, agent)
    if not record.entries:
        typer.echo(f"{agent}: not installed; nothing to do")
        return
    lines = describe_uninstall(changes, record) if dry_run else uninstall(changes, record)
    for line in lines:
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.add_typer(integrations_app, name="integrations")
