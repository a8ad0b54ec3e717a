"""`skillopt tui`: the Textual dashboard. Textual is imported only when this runs, so the
other commands start fast."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError


class TuiUsageError(UserError):
    """A `skillopt tui` option names something that is not there."""


RunsDirOption = Annotated[
    Path, typer.Option("--runs-dir", help="Folder holding run directories.")]
SkillsRepoOption = Annotated[
    Path | None, typer.Option("--skills-repo", help="Skills repository (git) to review.")]
RunOption = Annotated[
    Path | None, typer.Option("--run", help="Open this run directory (live or finished).")]


def register(app: typer.Typer) -> None:
    @app.command("tui")
    def tui(runs_dir: RunsDirOption = Path("runs"), skills_repo: SkillsRepoOption = None,
            run: RunOption = None) -> None:
        """Dashboard: follow or replay runs, review staged skill edits, roll back."""
        if run is not None and not run.is_dir():
            raise TuiUsageError(f"--run {run}: no such run directory")
        if skills_repo is not None and not skills_repo.is_dir():
            raise TuiUsageError(f"--skills-repo {skills_repo}: no such directory "
                                "(create one with `skillopt init`)")
        from skillopt_tui.app.app import SkillOptApp

        SkillOptApp(runs_dir=runs_dir, skills_repo=skills_repo, run=run).run()
