"""Issue 19: the advice after an unusable judge reply names what applies to the judge's
backend ("a larger max_tokens" means nothing to a coding-agent CLI)."""

from __future__ import annotations

import pytest

from core.models.types import Completion, Usage
from sleep.mine.tasks import MinedTask
from sleep.night.replay_env import JudgeFailed, ReplayEnvironment


async def garbage_judge(messages, **_settings) -> Completion:
    return Completion("no idea", Usage(), "stop", 0.0, "judge-double")


async def target(messages, **_settings) -> Completion:
    return Completion("Run `pnpm install`.", Usage(), "stop", 0.0, "target-double")


@pytest.mark.parametrize(
    ("backend", "says", "never"),
    [("claude_code", "claude_code CLI", "max_tokens"), ("openai", "max_tokens", "CLI")],
)
async def test_the_advice_fits_the_judges_backend(backend, says, never):
    task = MinedTask(id="t1", intent="install the deps", project=None, rubric="use pnpm")
    env = ReplayEnvironment({"train": [task]}, garbage_judge, judge_backend=backend)
    [item] = env.load_split("train")
    with pytest.raises(JudgeFailed) as info:
        await env.rollout(item, "# skill", target)
    assert says in str(info.value) and never not in str(info.value)
