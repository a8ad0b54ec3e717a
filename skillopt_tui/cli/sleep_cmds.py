"""`skillopt sleep harvest`: what the user asked their coding agents since the last night,
redacted — a preview that moves no cursor unless `--mark-read`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json
from skillopt_tui.cli.sleep_home_opts import (
    CopilotHome,
    CursorHome,
    OpencodeData,
    PiHome,
    VscodeUserDir,
)

sleep_app = typer.Typer(help="Sleep: learn from the user's Claude Code and Codex sessions.")


class SleepUsageError(UserError):
    """Bad command-line input for a sleep command."""


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@sleep_app.command("harvest")
def harvest_cmd(
    project: Annotated[
        Path | None,
        typer.Option("--project", help="Only sessions run in this directory or below it."),
    ] = None,
    all_projects: Annotated[
        bool, typer.Option("--all-projects", help="Sessions of every project.")
    ] = False,
    claude_home: Annotated[
        str | None,
        typer.Option(
            "--claude-home",
            help="Claude Code root(s), comma-separated "
            "(default: $CLAUDE_CONFIG_DIR or ~/.claude, and ~/.config/claude).",
        ),
    ] = None,
    codex_home: Annotated[
        str | None,
        typer.Option("--codex-home", help="Codex root (default: $CODEX_HOME or ~/.codex)."),
    ] = None,
    pi_home: PiHome = None,
    opencode_data: OpencodeData = None,
    copilot_home: CopilotHome = None,
    vscode_user_dir: VscodeUserDir = None,
    cursor_home: CursorHome = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only tasks from this date (local midnight) or ISO time on; "
            "with --mark-read the older new tasks are marked read too.",
        ),
    ] = None,
    include_automation: Annotated[
        bool,
        typer.Option(
            "--include-automation",
            help="Also sessions no person typed in (claude -p, codex exec, our own runs).",
        ),
    ] = False,
    show_redactions: Annotated[
        bool, typer.Option("--show-redactions", help="List each redaction in context.")
    ] = False,
    mark_read: Annotated[
        bool,
        typer.Option(
            "--mark-read",
            help="Move the cursors past what is shown, so no later night learns from it "
            "(default: a preview that moves nothing).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir", help="Where cursors are kept (default: ~/.local/state/skillopt/sleep)."
        ),
    ] = None,
) -> None:
    """Show what is new in the user's agent sessions (the current project by default).

    A preview: the cursors the night reads from stay where they are, so the next
    `sleep run` still learns from everything shown. `--mark-read` moves them on purpose."""
    from core.path_text import require_text
    from sleep.harvest.report import source_lines
    from sleep.harvest.run import HarvestOptions, default_state_dir, harvest
    from sleep.harvest.timestamps import parse_since
    from sleep.state.state_dir import check_state_dir

    if project is not None and all_projects:
        raise SleepUsageError("give --project PATH or --all-projects, not both")
    if all_projects:
        scope = None
    else:
        scope = require_text((project or Path.cwd()).expanduser(), "--project")
        if not scope.is_dir():
            raise SleepUsageError(f"--project {scope}: no such directory")
    try:
        since_at = parse_since(since) if since else None
    except ValueError as exc:
        raise SleepUsageError(str(exc)) from None
    state = check_state_dir((state_dir or default_state_dir()).expanduser(), writing=True)
    result = harvest(
        HarvestOptions(
            state_dir=state,
            project=scope,
            claude_home=claude_home,
            codex_home=codex_home,
            pi_home=pi_home,
            opencode_data=opencode_data,
            copilot_home=copilot_home,
            vscode_user_dir=vscode_user_dir,
            cursor_home=cursor_home,
            since=since_at,
            include_automation=include_automation,
            commit=mark_read,
        )
    )
    if as_json:
        emit_json(result.to_json(show_redactions=show_redactions))
        return
    for s in result.sessions:
        marks = " [automation]" if s.automation else ""
        typer.echo(f"{s.source} {s.session_id}  {s.cwd or '?'}  ({s.branch or '-'}){marks}")
        for t in s.tasks:
            flag = " [aborted]" if t.aborted else ""
            typer.echo(f"  {t.timestamp or '-'}  {_one_line(t.text)}{flag}")
        if s.abandoned:
            typer.echo(f"  ({s.abandoned} prompt(s) on abandoned branches, not tasks)")
    for line in source_lines(result):
        typer.echo(line)
    tasks = sum(len(s.tasks) for s in result.sessions)
    typer.echo(
        f"{tasks} new task(s) in {len(result.sessions)} session(s); "
        f"{result.files_read} file(s) read, {result.files_unchanged} unchanged"
    )
    typer.echo(
        "marked read: the next night starts after these"
        if mark_read
        else "preview: nothing marked read (the next night still gets these; "
        "--mark-read skips them)"
    )
    for skipped in result.skipped:
        typer.echo(skipped.line(), err=True)
    if result.redactions:
        counts = ", ".join(f"{k} {n}" for k, n in sorted(result.redactions.items()))
        typer.echo(f"redacted: {counts}")
    if show_redactions:
        for shown in result.shown:
            typer.echo(f"  [{shown.kind}] {shown.context}   ({shown.hint})  {shown.file}")


def register(app: typer.Typer) -> None:
    app.add_typer(sleep_app, name="sleep")
