"""`skillopt tui`: the Textual dashboard. Textual is imported only when this runs, so the
other commands start fast."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError


class TuiUsageError(UserError):
    """A `skillopt tui` option names something that is not there."""


REPO_ENV = "SKILLOPT_SKILLS_REPO"  # the same default the `skillopt skills` commands use


def resolve_skills_repo(option: Path | None) -> Path | None:
    """--skills-repo, else $SKILLOPT_SKILLS_REPO, else ./skills when it is a skills repo
    (has a skills.yaml); None when there is none (the TUI then shows runs only)."""
    if option is not None:
        if not option.is_dir():
            raise TuiUsageError(
                f"--skills-repo {option}: no such directory (create one with `skillopt init`)"
            )
        return option
    env = os.environ.get(REPO_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise TuiUsageError(
                f"${REPO_ENV}={env}: no such directory "
                "(create one with `skillopt init`, or unset it)"
            )
        return path
    local = Path("skills")
    return local if (local / "skills.yaml").is_file() else None


def resolve_state_dir(option: Path | None) -> Path:
    from sleep.harvest import default_state_dir

    return (option or default_state_dir()).expanduser().absolute()


def sleep_skills_repo(state_dir: Path) -> Path | None:
    """The skills repository `skillopt sleep init` recorded, so the Sleep screen's staged
    branches open in Review when no other repository was given; None if none or unreadable
    (the Sleep screen says why)."""
    from sleep.settings import load_settings

    try:
        recorded = load_settings(state_dir).skills_repo
    except UserError:
        return None
    return Path(recorded) if recorded and Path(recorded).is_dir() else None


RunsDirOption = Annotated[Path, typer.Option("--runs-dir", help="Folder holding run directories.")]
SkillsRepoOption = Annotated[
    Path | None,
    typer.Option(
        "--skills-repo",
        help=f"Skills repository (git) to review (default: ${REPO_ENV}, or ./skills if it is one).",
    ),
]
StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        metavar="DIR",
        help="Sleep state for the Sleep screen (default: ~/.local/state/skillopt/sleep).",
    ),
]
RunOption = Annotated[
    Path | None, typer.Option("--run", help="Open this run directory (live or finished).")
]


def register(app: typer.Typer) -> None:
    @app.command("tui")
    def tui(
        runs_dir: RunsDirOption = Path("runs"),
        skills_repo: SkillsRepoOption = None,
        run: RunOption = None,
        state_dir: StateDirOption = None,
    ) -> None:
        """Dashboard: follow or replay runs, review staged skill edits, roll back; Sleep nights."""
        if run is not None and not run.is_dir():
            raise TuiUsageError(f"--run {run}: no such run directory")
        if state_dir is not None and state_dir.exists() and not state_dir.is_dir():
            raise TuiUsageError(f"--state-dir {state_dir}: not a directory")
        state = resolve_state_dir(state_dir)
        skills_repo = resolve_skills_repo(skills_repo) or sleep_skills_repo(state)
        from skillopt_tui.app.app import SkillOptApp

        SkillOptApp(runs_dir=runs_dir, skills_repo=skills_repo, run=run, state_dir=state).run()
