"""The judge of a follow-up sees the earlier turns it refers to, as the target did (a
strong-model night found "One more thing: add a docstring to create_note" judged without
the turn that made create_note)."""

from __future__ import annotations

import json

from core.models.types import Completion, Usage
from sleep.mine.tasks import MinedTask, Turn
from sleep.night.replay_env import ReplayEnvironment


def recording_judge(seen: list[str]):
    async def judge(messages, **_settings) -> Completion:
        seen.append(messages[-1]["content"])
        return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "j")

    return judge


async def target(messages, **_settings) -> Completion:
    return Completion("Added the docstring.", Usage(), "stop", 0.0, "target-double")


async def test_the_judge_sees_the_turns_a_follow_up_refers_to():
    earlier = Turn("rename new_note to create_note", "Renamed; new_note stays as an alias.")
    follow_up = MinedTask(id="t1", intent="one more thing: add a docstring to it",
                          project=None, rubric="a docstring", context=(earlier,))  # fmt: skip
    alone = MinedTask(id="t2", intent="explain notes.py", project=None, rubric="short")
    seen: list[str] = []
    env = ReplayEnvironment({"train": [follow_up, alone]}, recording_judge(seen))
    for item in env.load_split("train"):
        await env.rollout(item, "# skill", target)
    with_context, without = seen
    assert "rename new_note to create_note" in with_context
    assert "new_note stays as an alias" in with_context
    assert with_context.index("create_note") < with_context.index("## Request")
    assert "## Context" not in without and "Earlier in this session" not in without
