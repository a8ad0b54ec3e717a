"""`skillopt runs` (list) and `skillopt runs show RUN` (the run's card)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json

JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]

runs_app = typer.Typer(
    help="List runs with their status and scores; `runs show RUN` prints a run's card.",
    invoke_without_command=True,
    no_args_is_help=False,
)


class RunsUsageError(UserError):
    """Bad command-line input for runs."""


@runs_app.callback()
def runs(
    ctx: typer.Context,
    runs_dir: Annotated[
        Path, typer.Option("--runs-dir", help="Folder holding run directories.")
    ] = Path("runs"),
    as_json: JsonOption = False,
) -> None:
    """List runs with their status and scores."""
    if ctx.invoked_subcommand is not None:
        return
    from core.run.directory import list_runs

    if runs_dir.exists() and not runs_dir.is_dir():
        raise RunsUsageError(f"--runs-dir {runs_dir} is not a directory; give the folder of runs")
    infos = list_runs(runs_dir)
    if as_json:
        emit_json([i.to_dict() for i in infos])
        return
    if not infos:
        typer.echo(f"no runs in {runs_dir}")
        return
    for i in infos:
        base = "—" if i.baseline_val is None else f"{i.baseline_val:.3f}"
        best = "—" if i.best_val is None else f"{i.best_val:.3f}"
        typer.echo(
            f"{i.run_id}  {i.status:<11} {i.env:<10} val {base} → {best}  "
            f"steps {i.steps_done}/{i.total_steps}  ${i.cost_usd:.4f}"
        )
        if i.problem:
            typer.echo(f"  {i.problem}")


@runs_app.command("show")
def show(
    run: Annotated[Path, typer.Argument(help="The run directory.")],
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Build the card again from the run directory.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Print the run's card: config, seeds, split sizes and hashes, denominators, models,
    accepted edits with their p, test scores and spend (card.json, built if missing)."""
    from skillopt_tui.cli.run_cards import card_for

    card = card_for(run, rebuild=rebuild)
    if as_json:
        emit_json(card)
        return
    from core.research.card_text import card_lines

    for line in card_lines(card):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
