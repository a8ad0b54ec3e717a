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


RunsDirOption = Annotated[Path, typer.Option("--runs-dir", help="Folder holding run directories.")]
SkillsRepoOption = Annotated[
    Path | None,
    typer.Option(
        "--skills-repo",
        help=f"Skills repository (git) to review (default: ${REPO_ENV}, or ./skills if it is one).",
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
    ) -> None:
        """Dashboard: follow or replay runs, review staged skill edits, roll back."""
        if run is not None and not run.is_dir():
            raise TuiUsageError(f"--run {run}: no such run directory")
        skills_repo = resolve_skills_repo(skills_repo)
        from skillopt_tui.app.app import SkillOptApp

        SkillOptApp(runs_dir=runs_dir, skills_repo=skills_repo, run=run).run()
