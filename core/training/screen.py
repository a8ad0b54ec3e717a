"""The screen (train.gate.screen, configs/features/screen.yaml): before a candidate costs
a full val pass, score it on the step's own train batch, which the current skill has just
been rolled out on; a candidate that does not score higher there is rejected without the
val pass. With train.candidates_per_step N, the step proposes N candidates from the same
rollouts and the val pass judges the best screened one.

A cheaper, noisier first look (the batch is also what the edits were written from, so it
flatters them): it saves val passes on candidates that do not even help where they were
made, and the val gate still decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.environment.contract import RolloutResult, TaskItem
from core.training.candidate_gate import mean
from core.training.context import TrainingRun


@dataclass
class Screened:
    index: int  # which of the step's proposals
    score: float  # mean gate metric on the batch
    improves: bool


async def screen_candidates(
    tr: TrainingRun,
    step: int,
    candidates: list[str],
    items: list[TaskItem],
    incumbent: list[RolloutResult],
) -> tuple[Screened | None, dict[str, Any]]:
    """The best candidate that beats the incumbent's batch score (None if none does) and
    what gate.json records of the screen."""
    before = mean(list(tr.metric_of(incumbent).values()))
    screened = []
    for index, text in enumerate(candidates):
        results = await tr.runner.run(items, text, split="train", phase="screen", step=step)
        score = mean(list(tr.metric_of(results).values()))
        screened.append(Screened(index, score, score > before))
    passing = [s for s in screened if s.improves]
    chosen = max(passing, key=lambda s: (s.score, -s.index)) if passing else None
    record = {
        "items": len(items),
        "incumbent": before,
        "candidates": [s.score for s in screened],
        "chosen": chosen.index if chosen else None,
    }
    return chosen, record


def screened_out_reason(record: dict[str, Any]) -> str:
    scores = ", ".join(f"{s:.3f}" for s in record["candidates"])
    return (
        f"screened out: on the step's {record['items']} train items no candidate beat the "
        f"current skill's {record['incumbent']:.3f} ({scores}); no val pass"
    )
