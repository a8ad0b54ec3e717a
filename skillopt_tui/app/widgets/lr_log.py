"""The autonomous learning rate's decision of each step (train.optimizer.lr_control:
autonomous), appended as it arrives: how many of the ranked pool were applied, with the
model's confidence, reasoning and risks. A run with the schedule's fixed rate has no
decisions, and the Run screen then shows no Learning rate tab at all."""

from __future__ import annotations

from rich.text import Text

from core.run.events import LearningRateDecided
from skillopt_tui.app.widgets.wrapping_log import WrappingLog

CONFIDENCE_STYLE = {"high": "green", "medium": "yellow", "low": "red"}


def lr_figure(d: LearningRateDecided) -> Text:
    """`apply 2 of 4 · confidence high` (what a step's decision comes to, in one line)."""
    text = Text.assemble((f"apply {d.count} of {d.pool}", "bold"))
    if d.asked is not None and d.asked != d.count:
        text.append(f" (asked {d.asked})", style="dim")
    if d.count == 0:
        text.append(" · no candidate this step", style="yellow")
    if d.error:
        text.append(" · unusable reply", style="bold red")
    elif d.confidence:
        confidence = d.confidence.lower()
        text.append(" · confidence ")
        text.append(confidence, style=CONFIDENCE_STYLE.get(confidence, ""))
    return text


def lr_reason(d: LearningRateDecided) -> str:
    """The model's reasoning, or why there was none."""
    return d.error or d.reasoning or "(no reasoning given)"


def lr_line(d: LearningRateDecided, reason_chars: int = 100) -> Text:
    """The decision in one line, for the step's candidate (the tab has it in full)."""
    reason = " ".join(lr_reason(d).split())
    if len(reason) > reason_chars:
        reason = reason[: reason_chars - 1] + "…"
    return Text.assemble(
        ("learning rate ", "dim"), lr_figure(d), ": ", reason, (" · 4 in full", "dim")
    )


class LearningRateLog(WrappingLog):
    def add_decisions(self, items: list[LearningRateDecided]) -> None:
        for d in items:
            self.seen += 1
            self.write(Text.assemble((f"step {d.step} · ", "bold magenta"), lr_figure(d)))
            self.write(Text(lr_reason(d)))
            if d.risks:
                self.write(Text(f"risks: {d.risks}", style="dim"))
