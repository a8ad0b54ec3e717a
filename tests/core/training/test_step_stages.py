"""A step's stages.json sums every attempt of the step (core/training/history.py
StageClock). A handoff optimizer answered in rounds redoes the step once per round, and a
handoff answer counts once, in the round that first reads it: on the old code a step's
`reflect` stage held only the last round's calls, fewer than the step's analyst, merge and
rank answers (summary.json's per-stage usage, from the spend journal, had them all)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.models.types import Request
from tests.core.training.test_trainer import train
from tests.support.handoff_answerer import answer_round

REFLECT_STAGES = ("analyst", "merge", "rank")


def distinct_edits(request: Request) -> str:
    """A TEST DOUBLE optimizer whose analysts each propose their own rule, so a step with
    several analysts has a pool to merge and rank over another round of answers."""
    prompt = " ".join(str(m.get("content", "")) for m in request.messages)
    if "epoch-level guidance" in prompt:
        return json.dumps({"reasoning": "-", "content": ""})
    if "notes for yourself" in prompt:
        return json.dumps({"reasoning": "-", "content": "rules helped"})
    if '"order"' in prompt:
        return json.dumps({"order": [0], "reason": "first"})
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    rule = f"Answer with only the city name (rule {tag})."
    return json.dumps(
        {"analysis": "answers", "edits": [{"op": "append", "content": rule, "rationale": "x"}]}
    )


def reflect_calls(run: Path) -> int:
    total = 0
    for step in sorted((run / "steps").iterdir()):
        stages = json.loads((step / "stages.json").read_text())["stages"]
        total += stages.get("reflect", {}).get("tokens", {}).get("optimizer", {}).get("calls", 0)
        assert not (step / "stages.attempts.json").exists()  # folded into stages.json
    return total


async def test_a_step_answered_in_rounds_counts_every_reflect_call(tmp_path):
    overrides = {
        "models.optimizer": {"backend": "handoff"},
        "models.handoff_dir": str(tmp_path / "handoff"),
    }
    train_cfg = dict(
        strategy="llm",
        minibatch_size=1,
        epochs=1,
        schedule={"kind": "constant", "start": 1, "end": 1},
        overrides=overrides,
    )
    rounds = 0
    while True:
        summary, _events, _ = await train(tmp_path, **train_cfg)
        if summary.status != "waiting":
            break
        rounds += 1
        assert rounds < 30
        answer_round(tmp_path / "handoff", distinct_edits)
    assert summary.status == "finished"
    run = tmp_path / "run"
    per_stage = json.loads((run / "summary.json").read_text())["usage"]["per_stage"]
    answered = sum(per_stage.get(name, {}).get("calls", 0) for name in REFLECT_STAGES)
    assert per_stage.get("merge", {}).get("calls", 0) + per_stage.get("rank", {}).get(
        "calls", 0
    )  # some step did take a further round
    assert reflect_calls(run) == answered
