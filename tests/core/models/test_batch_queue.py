"""The batch queue's waiting (core/models/batch_queue.py) against a scripted batch provider
(a TEST DOUBLE of core/models/batch_api.py's interface: the HTTP side is covered by
tests/core/training/test_batch_phases.py against loopback servers)."""

from __future__ import annotations

import pytest

from core.models.batch_api import BatchAnswer, BatchProgress, ready_estimate
from core.models.batch_queue import BATCH_PHASE, BatchPending, BatchQueue, BatchWaiting
from core.models.ledger import UsageLedger
from core.models.types import Completion, ModelError, Request, TransientError, Usage
from tests.core.models.helpers import FakeSleep

ASKED = Request(backend="openai", model="m", messages=[{"role": "user", "content": "2+2?"}])


class ScriptedBatches:
    """TEST DOUBLE: answers each look with the next scripted progress (or error)."""

    provider = "scripted"

    def __init__(self, looks: list[BatchProgress | Exception]):
        self.looks = list(looks)
        self.submitted: list[dict[str, Request]] = []

    async def submit(self, requests: dict[str, Request]) -> str:
        self.submitted.append(requests)
        return "b1"

    async def progress(self, batch_id: str) -> BatchProgress:
        look = self.looks.pop(0)
        if isinstance(look, Exception):
            raise look
        return look

    async def answers(self, batch_id: str) -> dict[str, BatchAnswer]:
        (custom_id,) = self.submitted[0]
        reply = Completion("4", Usage(5, 1), "stop", 0.0, "m")
        return {custom_id: BatchAnswer(reply)}


def looking(answered: int, ended: bool = False) -> BatchProgress:
    status = "completed" if ended else "in_progress"
    return BatchProgress("b1", status, ended, total=1, answered=answered, failed=0)


async def test_a_pending_batch_is_polled_at_a_doubling_bounded_interval_with_progress(tmp_path):
    looks = [looking(0)] * 3 + [TransientError("503 from the provider")] + [looking(0)] * 3
    provider = ScriptedBatches([*looks, looking(1, ended=True)])
    queue = BatchQueue(tmp_path, provider, UsageLedger(), "m")
    said: list[str] = []
    sleep = FakeSleep()
    token = BATCH_PHASE.set("baseline")
    try:
        with pytest.raises(BatchPending):
            queue.answer("target", ASKED, "", "")
        await queue.settle(wait=True, poll_s=100, say=said.append, sleep=sleep)
        answer = queue.answer("target", ASKED, "", "")
    finally:
        BATCH_PHASE.reset(token)
    assert sleep.delays == [100, 200, 400, 600, 600, 600, 600]  # doubling, at most 10 min
    assert answer is not None and answer.text == "4" and answer.batched
    progress = [line for line in said if "0/1 answered" in line]
    assert len(progress) == 2  # said when it changed, not at every look
    assert any("no status this time (503 from the provider)" in line for line in said)
    assert said[-1] == "batch b1 completed: 1 answer"
    assert len(provider.submitted) == 1


async def test_told_not_to_wait_a_pending_batch_stops_and_a_new_queue_does_not_submit_again(
    tmp_path,
):
    provider = ScriptedBatches([looking(0), looking(1, ended=True)])
    token = BATCH_PHASE.set("test")
    try:
        queue = BatchQueue(tmp_path, provider, UsageLedger(), "m")
        with pytest.raises(BatchPending):
            queue.answer("target", ASKED, "", "")
        with pytest.raises(BatchWaiting, match=r"batch b1 in_progress: 0/1 answered .*ready"):
            await queue.settle(wait=False, poll_s=1, say=lambda _: None)
        again = BatchQueue(tmp_path, provider, UsageLedger(), "m")  # a later process
        with pytest.raises(BatchPending):
            again.answer("target", ASKED, "", "")
        ledger = again.ledger
        await again.settle(wait=False, poll_s=1, say=lambda _: None)
        assert again.answer("target", ASKED, "", "").text == "4"
    finally:
        BATCH_PHASE.reset(token)
    assert len(provider.submitted) == 1
    assert ledger.snapshot().per_stage["test"]["calls"] == 1  # billed once, in its stage
    assert (
        BatchQueue(tmp_path, provider, UsageLedger(), "m").answer("target", ASKED, "", "") is None
    )


def test_the_ready_estimate_follows_the_pace_then_the_window():
    half = BatchProgress("b", "in_progress", False, total=10, answered=5, failed=0)
    assert ready_estimate(half, submitted_at=0, now=600) == "about 10 min more at its pace so far"
    none = BatchProgress("b", "in_progress", False, total=10, answered=0, failed=0, expires_at=7200)
    assert ready_estimate(none, submitted_at=0, now=0) == (
        "within 2.0 h (the provider's 24-hour window)"
    )


def test_an_unreadable_batch_record_is_one_line_saying_what_to_do(tmp_path):
    (tmp_path / "batches.json").write_text('{"batches": [{"batch_id": "b1"')  # torn
    with pytest.raises(ModelError, match=r"batches.json is unreadable .*restore it, or delete"):
        BatchQueue(tmp_path, ScriptedBatches([]), UsageLedger(), "m")
