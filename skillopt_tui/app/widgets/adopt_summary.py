"""What `A` will do, in words, for the confirmation dialog: what is adopted, what is not and
why, where it is deployed, and the CLI command that does the same."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from core.words import counted
from skillopt_tui.app.widgets.word_diff import styled_lines

WHY_NOT = {
    "pending": "not decided",
    "rejected": "rejected",
    "partial": "lines not chosen",
}


def adopt_summary(diff: Any, state: Any, deploy_to: str | None) -> Text:
    whole, partial = state.selection()
    chosen = sorted({*whole, *partial})
    done = sum(1 for h in diff.hunks if getattr(h, "on_main", False))
    already = f"; {done} already on main" if done else ""
    parts = [
        Text.assemble(
            "Commit on ",
            ("main", "bold"),
            f": {len(chosen)} of {counted(len(diff.hunks), 'hunk')} from ",
            (diff.branch, "bold"),
            f" (skill {diff.skill}{already})",
        ),
        Text.assemble("Deploy to: ", (deploy_to or "nothing (no deploy target)", "bold")),
    ]
    if partial:
        parts.append(
            Text.assemble(
                "In part: ",
                ", ".join(f"#{i} ({counted(len(v), 'changed line')})" for i, v in partial.items()),
            )
        )
    left_out = []
    for item in state.items:
        if item.decision == "adopted":
            continue
        if item.conflicts:
            left_out.append(f"{item.label} (conflicts with main; re-stage to adopt it)")
        elif item.decision in WHY_NOT:
            left_out.append(f"{item.label} ({WHY_NOT[item.decision]})")
    if left_out:
        parts.append(Text.assemble(("Not adopted: ", "bold yellow"), "; ".join(left_out)))
    parts.append(
        Text.assemble(
            ("Same as: ", "dim"),
            (f"skillopt skills adopt {diff.branch} {state.cli_args()}".rstrip(), "dim"),
        )
    )
    parts.append(Text(""))
    for item in state.items:
        lines = item.chosen_lines()
        if not lines or item.decision == "adopted" or item.conflicts:
            continue
        parts.append(Text.assemble((item.label, "bold"), " ", (item.hunk.header, "cyan")))
        number = 0
        for line, styled in zip(item.hunk.lines, styled_lines(list(item.hunk.lines)), strict=True):
            if line[:1] in ("+", "-"):
                number += 1
                if number in lines:
                    parts.append(styled)
    return Text("\n").join(parts)
