"""The rollout runner with a handoff target: an item waiting on its answer must not stop
the other items of the batch from writing their prompts (the flaky "2 of 3 prompts"
handoff night: the first HandoffWaiting cancelled the workers still writing theirs), while
any other error still stops the batch at once."""

from __future__ import annotations

import asyncio

import pytest

from core.environment.contract import RolloutResult, TaskItem
from core.models.handoff import HandoffWaiting
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import RolloutRunner


class WaitingEnv:
    """Every rollout asks its target once; the target (a handoff stand-in) writes the
    prompt, then raises as the handoff backend does when no answer is there yet."""

    target_kind = "chat"

    async def rollout(self, item: TaskItem, skill_text: str, complete) -> RolloutResult:
        await complete([{"role": "user", "content": item.question}])
        raise AssertionError("unreachable: the target always waits")


def items(n: int) -> list[TaskItem]:
    return [TaskItem(id=f"i{k}", task_type="t", question=f"q{k}?", answer="a") for k in range(n)]


def runner(tmp_path, complete, concurrency: int) -> RolloutRunner:
    cache = RolloutCache(tmp_path / "c.sqlite", target_key="T", env_key="e:1")
    return RolloutRunner(WaitingEnv(), complete, cache, lambda e: None, concurrency=concurrency)


@pytest.mark.parametrize("concurrency", [1, 3, 8])
async def test_every_item_writes_its_prompt_before_the_batch_waits(tmp_path, concurrency):
    written: list[str] = []

    async def complete(messages, **_):
        written.append(messages[0]["content"])
        await asyncio.sleep(0.001 * len(written))  # the first to wait is not the last to write
        raise HandoffWaiting(f"waiting for {messages[0]['content']}")

    with pytest.raises(HandoffWaiting):
        await runner(tmp_path, complete, concurrency).run(
            items(7), "skill", split="val", phase="baseline", step=0
        )
    assert sorted(written) == sorted(f"q{k}?" for k in range(7))


async def test_another_error_still_stops_the_batch(tmp_path):
    started: list[str] = []

    async def complete(messages, **_):
        started.append(messages[0]["content"])
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await runner(tmp_path, complete, 1).run(
            items(5), "skill", split="val", phase="baseline", step=0
        )
    assert started == ["q0?"]
