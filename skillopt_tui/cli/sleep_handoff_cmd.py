"""`skillopt sleep handoff`: which handoff prompts wait for an answer, what shape each
answer must have, and whether the answers already written will be accepted — checked as
the night will read them, without running it (nothing is written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json
from skillopt_tui.cli.sleep_night_cmds import JsonOpt, StateDir, _state_dir


class HandoffUsageError(UserError):
    """Bad command-line input for `sleep handoff`."""


def latest_handoff_folder(state_dir: Path) -> Path:
    """The handoff folder of the newest night that has one."""
    nights = state_dir / "nights"
    folders = sorted(
        (p / "handoff" for p in nights.glob("*") if (p / "handoff" / "prompts").is_dir()),
        key=lambda p: p.stat().st_mtime_ns,
    )
    if not folders:
        raise HandoffUsageError(
            f"no night in {state_dir} has handoff prompts; run `skillopt sleep run` with the "
            "handoff backend first, or pass --dir FOLDER (a training run's models.handoff_dir)"
        )
    return folders[-1]


def _night_status(folder: Path) -> str:
    """The status in night.json beside a night's handoff folder ("" for a training run's)."""
    try:
        data = json.loads((folder.parent / "night.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("status", "")) if isinstance(data, dict) else ""


def handoff_cmd(
    folder: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            metavar="FOLDER",
            help="A handoff folder (default: the newest night's; for `train`, models.handoff_dir).",
        ),
    ] = None,
    state_dir: StateDir = None,
    as_json: JsonOpt = False,
) -> None:
    """List the handoff prompts waiting for an answer and check the answers written so far."""
    import sleep.mine.with_model  # noqa: F401 - registers the miner's answer shape
    import sleep.night.replay_env  # noqa: F401 - registers the judge's answer shape
    from core.optimizer.handoff_check import check_folder

    if folder is not None:
        folder = folder.expanduser().absolute()
        if not (folder / "prompts").is_dir():
            raise HandoffUsageError(
                f"--dir {folder}: no prompts/ folder there; not a handoff folder"
            )
    else:
        folder = latest_handoff_folder(_state_dir(state_dir))
    finished = _night_status(folder) == "finished"
    # A finished night's prompts are moot: nothing reads their answers any more.
    checked = [] if finished else check_folder(folder)
    if as_json:
        out = {"folder": str(folder), "prompts": [c.to_dict() for c in checked]}
        emit_json({**out, "night_finished": True} if finished else out)
        return
    if finished:
        typer.echo(
            f"{folder}: its night finished; nothing is waiting (a new `sleep run` starts a new night)"
        )
        return
    if not checked:
        typer.echo(f"{folder}: nothing waiting; every answer was used")
        return
    typer.echo(f"{folder}: write each answer to answers/<the prompt's file name>")
    for c in checked:
        info = c.status.info
        label = f"{c.status.prompt.name} ({info.kind or info.role or '?'})"
        if c.verdict == "ok":
            typer.echo(f"  ok        {label}: answered, will be used on the next run")
        else:
            typer.echo(f"  {c.verdict:<9} {label}: {c.why}")
            typer.echo(f"            expects {c.expects}")
    waiting = sum(c.verdict != "ok" for c in checked)
    typer.echo(
        f"{waiting} waiting; run `skillopt sleep handoff` again to check new answers, then "
        "the same command as before (`skillopt sleep run` or `skillopt train`) to continue"
    )


def register(app: typer.Typer) -> None:
    group = next((g.typer_instance for g in app.registered_groups if g.name == "sleep"), None)
    if group is None:
        raise RuntimeError("sleep_handoff_cmd must be registered after sleep_cmds")
    group.command("handoff")(handoff_cmd)
