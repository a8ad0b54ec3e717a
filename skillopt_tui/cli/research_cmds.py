"""`skillopt compare RUN_A RUN_B [RUN…]` and `skillopt report RUNS… --out report.html`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json

RunsArgument = Annotated[
    list[Path], typer.Argument(help="Run directories; the first is the baseline.")
]
SkillOption = Annotated[
    str, typer.Option("--skill", help="Which skill of each run: best, final or initial.")
]


class ResearchUsageError(UserError):
    """Bad command-line input for compare / report."""


def _comparison(runs: list[Path], skill: str):
    from skillopt_tui.cli.run_cards import comparison_of

    if skill not in ("best", "final", "initial"):
        raise ResearchUsageError(f"--skill must be best, final or initial, got {skill!r}")
    return comparison_of(runs, skill)


def compare(
    runs: RunsArgument,
    skill: SkillOption = "best",
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown tables.")] = False,
) -> None:
    """Compare runs item by item against the first: per split, improved / regressed / same,
    the paired sign test's p, mean and 95% interval, tokens and cost."""
    if len(runs) < 2:
        raise ResearchUsageError("compare needs at least two run directories")
    comparison, _ = _comparison(runs, skill)
    if as_json:
        emit_json(comparison.to_dict())
        return
    from core.research.compare_text import comparison_lines

    for line in comparison_lines(comparison, markdown=markdown):
        typer.echo(line)


def report(
    runs: RunsArgument,
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path(
        "report.html"
    ),
    skill: SkillOption = "best",
    csv_path: Annotated[
        Path | None, typer.Option("--csv", help="Also write every rollout as CSV here.")
    ] = None,
    jsonl_path: Annotated[
        Path | None, typer.Option("--jsonl", help="Also write every rollout as JSON lines here.")
    ] = None,
) -> None:
    """Write one self-contained HTML page (no network) with the compare tables, the val
    curves and each run's card; --csv / --jsonl export every rollout."""
    from core.atomic import write_text
    from core.research.report_html import report_html
    from core.research.rollout_export import rollouts_csv, rollouts_jsonl
    from core.research.val_curve import val_curve
    from core.run.directory import RunDirectory
    from skillopt_tui.cli.run_cards import card_for

    if not runs:
        raise ResearchUsageError("report needs at least one run directory")
    if len(runs) > 1:
        comparison, cards = _comparison(runs, skill)
    else:
        comparison, cards = None, [card_for(runs[0])]
    curves = [
        val_curve(str(card["run_id"]), RunDirectory(path).events_path, card["val"]["baseline"])
        for path, card in zip(runs, cards, strict=True)
    ]
    write_text(out, report_html(comparison, curves, cards))
    named = [(str(card["run_id"]), path) for path, card in zip(runs, cards, strict=True)]
    if csv_path is not None:
        write_text(csv_path, rollouts_csv(named))
    if jsonl_path is not None:
        write_text(jsonl_path, rollouts_jsonl(named))
    typer.echo(str(out))


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)
    app.command("report")(report)
