"""A comparison as Markdown tables (`skillopt compare --markdown`, ready for a paper or a
pull-request comment) or as aligned plain text for a terminal (the default)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from core.research.compare import Comparison

MARK = {"improved": "▲", "regressed": "▼", "same": "=", "unpaired": "·"}


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> Iterator[str]:
    if markdown:
        yield "| " + " | ".join(header) + " |"
        yield "|" + "|".join("---" for _ in header) + "|"
        for row in rows:
            yield "| " + " | ".join(row) + " |"
        return
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    for row in (header, *rows):
        yield "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()


def comparison_lines(comparison: Comparison, *, markdown: bool = False) -> Iterator[str]:
    ids = [r["run_id"] for r in comparison.runs]
    heading = "### " if markdown else ""
    yield (
        f"{heading}{comparison.skill} skill, metric {comparison.metric}, against {ids[0]} "
        f"(▲ improved, ▼ regressed, = same)"
    )
    for split in comparison.splits:
        yield ""
        yield f"{heading}{split.split}" + (f" ({split.note})" if split.note else "")
        if not split.items:
            yield "no items scored"
            continue
        rows = [
            [row["item"]]
            + [
                _score(s) + ("" if i == 0 else f" {MARK[o]}")
                for i, (s, o) in enumerate(zip(row["scores"], row["outcomes"], strict=True))
            ]
            for row in split.rows
        ]
        yield from _table(["item", *ids], rows, markdown)
        yield ""
        summary = [
            [
                s["run_id"],
                str(s["n"]),
                f"{s['mean']:.3f}",
                f"[{s['low']:.3f}, {s['high']:.3f}]",
                "" if s["p"] is None else f"+{s['improved']} -{s['regressed']} ={s['same']}",
                "" if s["p"] is None else f"{s['p']:.4g}",
            ]
            for s in split.runs
        ]
        yield from _table(
            ["run", "n", "mean", "95% CI", "vs first", "sign-test p"], summary, markdown
        )
    yield ""
    spend = [
        [r["run_id"], str(r["seed"]), str(r["tokens"]), f"${r['cost_usd']:.4f}"]
        for r in comparison.runs
    ]
    yield from _table(["run", "seed", "tokens", "cost"], spend, markdown)
    for group in comparison.seed_groups:
        yield ""
        parts = ", ".join(
            f"{split} {group[split]['mean']:.3f} ± {group[split]['sd']:.3f}"
            for split in ("val", "test")
        )
        yield f"seeds of one config ({', '.join(group['runs'])}): {parts} (mean ± sd over runs)"
