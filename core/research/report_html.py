"""The report (`skillopt report RUNS... --out report.html`): one self-contained page that
opens anywhere, offline, and can be attached to a paper's supplement or a pull request.
No script and nothing fetched: the style is inline, the val curves are inline SVG, every
text from a run is escaped."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from core.research.compare import Comparison
from core.research.compare_text import MARK
from core.research.val_curve import ValCurve

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:72em}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}
td.improved{background:#e3f6e3} td.regressed{background:#fbe3e3}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:.85em}
.note{color:#666}
"""
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]], label: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="{cls}">{escape(text)}</td>' for text, cls in row) + "</tr>"
        for row in rows
    )
    return f'<table aria-label="{escape(label)}"><tr>{head}</tr>{body}</table>'


def _split_section(comparison: Comparison) -> str:
    ids = [r["run_id"] for r in comparison.runs]
    parts = []
    for split in comparison.splits:
        parts.append(f"<h3>{escape(split.split)}</h3>")
        if split.note:
            parts.append(f'<p class="note">{escape(split.note)}</p>')
        rows = [
            [(row["item"], "")]
            + [
                (_cell(s) + ("" if i == 0 else f" {MARK[o]}"), "" if i == 0 else o)
                for i, (s, o) in enumerate(zip(row["scores"], row["outcomes"], strict=True))
            ]
            for row in split.rows
        ]
        parts.append(_table(["item", *ids], rows, f"{split.split} per item"))
        summary = [
            [
                (s["run_id"], ""),
                (str(s["n"]), ""),
                (f"{s['mean']:.3f}", ""),
                (f"[{s['low']:.3f}, {s['high']:.3f}] ({s['method']})", ""),
                ("" if s["p"] is None else f"+{s['improved']} -{s['regressed']} ={s['same']}", ""),
                ("" if s["p"] is None else f"{s['p']:.4g}", ""),
            ]
            for s in split.runs
        ]
        header = ["run", "n", "mean", "95% CI", "vs first", "sign-test p"]
        parts.append(_table(header, summary, f"{split.split} summary"))
    spend = [
        [
            (r["run_id"], ""),
            (str(r["seed"]), ""),
            (str(r["tokens"]), ""),
            (f"${r['cost_usd']:.4f}", ""),
        ]
        for r in comparison.runs
    ]
    parts.append("<h3>spend</h3>" + _table(["run", "seed", "tokens", "cost"], spend, "spend"))
    for group in comparison.seed_groups:
        text = ", ".join(
            f"{s} {group[s]['mean']:.3f} ± {group[s]['sd']:.3f}" for s in ("val", "test")
        )
        parts.append(f"<p>seeds of one config ({escape(', '.join(group['runs']))}): {text}</p>")
    return "\n".join(parts)


def curves_svg(curves: Sequence[ValCurve], width: int = 640, height: int = 260) -> str:
    """Best val per step (lines) and gated candidates (dots: filled = accepted)."""
    pad = 36
    last = max(
        [p[0] for c in curves for p in c.best]
        + [s for c in curves for s, _, _ in c.candidates]
        + [0]
    )
    span = max(last + 1, 1)

    def x(step: int) -> float:
        return pad + (step + 1) / span * (width - 2 * pad)

    def y(score: float) -> float:
        return height - pad - score * (height - 2 * pad)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="val curves">',
        f'<line x1="{pad}" y1="{y(0)}" x2="{width - pad}" y2="{y(0)}" stroke="#999"/>',
        f'<line x1="{pad}" y1="{y(0)}" x2="{pad}" y2="{y(1)}" stroke="#999"/>',
        f'<text x="4" y="{y(1) + 4}" font-size="10">1.0</text>',
        f'<text x="4" y="{y(0) + 4}" font-size="10">0.0</text>',
        f'<text x="{width / 2}" y="{height - 6}" font-size="10">step</text>',
    ]
    for index, curve in enumerate(curves):
        colour = COLOURS[index % len(COLOURS)]
        points = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in curve.best)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'
        )
        for step, score, accepted in curve.candidates:
            fill = colour if accepted else "white"
            parts.append(
                f'<circle cx="{x(step):.1f}" cy="{y(score):.1f}" r="3.5" fill="{fill}" '
                f'stroke="{colour}"/>'
            )
        parts.append(
            f'<text x="{width - pad - 110}" y="{pad + 14 * index}" font-size="11" '
            f'fill="{colour}">{escape(curve.run_id)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def report_html(
    comparison: Comparison | None, curves: Sequence[ValCurve], cards: Sequence[Mapping[str, Any]]
) -> str:
    """The page: the compare tables (when there are two runs or more), the val curves and
    every run's card."""
    sections = [f"<h1>skillopt report: {escape(', '.join(str(c['run_id']) for c in cards))}</h1>"]
    if comparison is not None:
        sections.append(
            f"<h2>compare ({escape(comparison.skill)} skill, metric {escape(comparison.metric)},"
            f" against {escape(str(comparison.runs[0]['run_id']))})</h2>"
        )
        sections.append(_split_section(comparison))
    sections.append("<h2>val curves</h2>" + curves_svg(curves))
    sections.append(
        '<p class="note">lines: best val after each step (step -1 is the baseline); '
        "dots: gated candidates, filled when accepted</p>"
    )
    for card in cards:
        text = json.dumps(card, indent=2, ensure_ascii=False, default=str)
        sections.append(f"<h2>card: {escape(str(card['run_id']))}</h2><pre>{escape(text)}</pre>")
    body = "\n".join(sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>skillopt report</title><style>{STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )
