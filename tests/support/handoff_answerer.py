"""A person answering handoff prompt files, as a TEST DOUBLE: `answer_round` reads every
waiting prompt of a handoff folder, asks a scripted responder (the same function a
scripted backend would call) and writes each reply to the answer file of the same name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from core.models.handoff import parse_prompt_file, pending_prompts
from core.models.types import Request

RULE = "Answer with only the city name."


def optimizer_reply(request: Request) -> str:
    """The scripted optimizer: one format rule, ranked first; empty guidance and notes."""
    prompt = " ".join(str(m.get("content", "")) for m in request.messages)
    if "epoch-level guidance" in prompt:
        return json.dumps({"reasoning": "nothing to add", "content": ""})
    if "notes for yourself" in prompt:
        return json.dumps({"reasoning": "one lesson", "content": "format rules helped"})
    if '"order"' in prompt:
        return json.dumps({"order": [0], "reason": "only one"})
    return json.dumps(
        {
            "analysis": "answers are sentences",
            "edits": [{"op": "append", "content": RULE, "rationale": "bare answers"}],
        }
    )


def make_optimizer() -> Callable[[Request], str]:
    """`models.optimizer.model: "tests.support.handoff_answerer:make_optimizer"`."""
    return optimizer_reply


def answer_round(folder: Path, reply: Callable[[Request], str] = optimizer_reply) -> list[str]:
    """Answer every waiting prompt of `folder`; the names answered, in order."""
    answered = []
    for prompt in pending_prompts(folder):
        messages = parse_prompt_file(prompt.read_text(encoding="utf-8"))
        text = reply(Request(backend="handoff", model="handoff", messages=messages))
        (folder / "answers" / prompt.name).write_text(text, encoding="utf-8")
        answered.append(prompt.name)
    return answered
