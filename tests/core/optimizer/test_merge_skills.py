"""The llm strategy's merge of two frontier skills (train.pareto, issue 39): one call
with both skills, whose reply is the merged skill; an unusable reply gives the first
skill back (a merge that changed nothing). The optimizer here is a TEST DOUBLE."""

from __future__ import annotations

import json

from core.models.types import Completion, Usage
from core.optimizer.llm import LLMOptimizer


class OneReplyOptimizer:
    """TEST DOUBLE optimizer client: records each prompt, answers with `reply`."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def complete(self, messages, *, role="optimizer", **settings):
        self.prompts.append(messages[-1]["content"])
        return Completion(self.reply, Usage(1, 1), "stop", 0.0, "double")


async def test_merge_asks_once_with_both_skills_and_returns_the_reply():
    merged = "# Skill\n\n- rule a\n- rule b\n"
    client = OneReplyOptimizer(json.dumps({"skill": merged, "summary": "a from A, b from B"}))
    out = await LLMOptimizer(client).merge_skills("# Skill\n\n- rule a\n", "# Skill\n\n- rule b\n")
    assert out == merged
    [prompt] = client.prompts
    assert "- rule a" in prompt and "- rule b" in prompt


async def test_an_unusable_merge_reply_gives_the_first_skill_back():
    client = OneReplyOptimizer("I merged them for you!")
    first = "# Skill\n\n- rule a\n"
    assert await LLMOptimizer(client).merge_skills(first, "# Skill\n\n- rule b\n") == first
