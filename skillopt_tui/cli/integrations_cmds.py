"""`skillopt integrations list | install | uninstall <agent>`: SkillOpt inside Claude Code
and Codex. `--dry-run` prints every file that would be written, edited, backed up or
restored, and touches nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.install_hint import install_extra

integrations_app = typer.Typer(help="Install SkillOpt's skill and MCP server into your agents.")

Agent = Annotated[
    str, typer.Argument(metavar="AGENT", help="claude-code, codex, opencode or copilot.")
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show every change; write nothing.")]
HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", metavar="DIR", help="The home to install into (default: ~)."),
]


def _home(home: Path | None) -> Path:
    return (home or Path.home()).expanduser().absolute()


def _record_file(home: Path, agent: str) -> Path:
    return home / ".local" / "state" / "skillopt" / "integrations" / f"{agent}.json"


def _changes_and_record(agent: str, home: Path, *, installing: bool = False):
    """The agent's changes and its checked record. Only install needs the installed
    `skillopt` (its path goes into the config); list and uninstall work without it."""
    from skillopt_tui.integrations.agents import changes_for, skillopt_command
    from skillopt_tui.integrations.changes import Record

    changes = changes_for(agent, home, skillopt_command() if installing else "skillopt")
    return changes, Record.load(_record_file(home, agent), home, changes)


@integrations_app.command("list")
def list_cmd(home: HomeOpt = None) -> None:
    """The agents SkillOpt integrates with, and whether each is installed here."""
    from skillopt_tui.integrations.agents import AGENTS

    root = _home(home)
    for agent in AGENTS:
        _, record = _changes_and_record(agent, root)
        state = "installed" if record.entries else "not installed"
        typer.echo(f"{agent:12} {state}")
        for path in record.entries:
            typer.echo(f"  {path}")


@integrations_app.command("install")
def install_cmd(agent: Agent, dry_run: DryRun = False, home: HomeOpt = None) -> None:
    """Write the skillopt-sleep skill and the `skillopt mcp` server entry (backs up what it replaces)."""
    from skillopt_tui.integrations.changes import plan_install, run

    plan = plan_install(
        *_changes_and_record(agent, _home(home), installing=True)
    )  # refuses before writing
    for line in plan.lines if dry_run else run(plan):
        typer.echo(line)
    if dry_run:
        return
    _warn_without_mcp()
    typer.echo(f"installed for {agent}; `skillopt integrations uninstall {agent}` undoes it")


def _warn_without_mcp() -> None:
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        typer.echo(
            f"skillopt: the MCP server needs the mcp extra: {install_extra('mcp')}",
            err=True,
        )


@integrations_app.command("uninstall")
def uninstall_cmd(agent: Agent, dry_run: DryRun = False, home: HomeOpt = None) -> None:
    """Undo `install`: restore backups, remove our files and config entries."""
    from skillopt_tui.integrations.changes import plan_uninstall, run

    changes, record = _changes_and_record(agent, _home(home))
    if not record.entries:
        typer.echo(f"{agent}: not installed; nothing to do")
        return
    plan = plan_uninstall(changes, record)  # refuses before changing anything
    for line in plan.lines if dry_run else run(plan):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.add_typer(integrations_app, name="integrations")
