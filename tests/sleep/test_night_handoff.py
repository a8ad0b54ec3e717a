"""Issue 19: a handoff night a person can finish. Garbage answers are rejected with the
reason, never cached, get a repair prompt, and the night waits again (never fails); the
corrected answers finish it with the same tasks. Issue 20: a key pasted into an answer is
masked before anything stores it. The scripted brain (tests/sleep/night_double.py) is
the person, as a TEST DOUBLE."""

from __future__ import annotations

import json

from core.config import config_from_dict
from core.models.handoff import pending_prompts
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from tests.sleep.night_double import RULE, Brain
from tests.sleep.test_night import make_night, night_config, project, repo  # noqa: F401

GARBAGE = "sure! the score is high"
KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0123456789"


def handoff_config(tmp_path):
    roles = {r: {"backend": "handoff"} for r in ("target", "optimizer", "judge")}
    return config_from_dict({"models": roles, "train": night_config(tmp_path).train.model_dump()})


def reply_for(brain: Brain, messages: list[dict]) -> str:
    """What the person answers: a repair prompt is answered like the call it repairs."""
    if len(messages) > 1 and messages[-2]["role"] == "assistant":
        messages = messages[:-2]
    return brain(Request(backend="handoff", model="handoff", messages=messages))


def answer(folder, brain, *, garbage_for_judge: bool = False, leak: bool = False) -> int:
    from core.models.handoff import parse_prompt_file

    waiting = pending_prompts(folder)
    for prompt in waiting:
        info = HandoffFolder(folder).statuses()
        kind = next(s.info.kind for s in info if s.prompt == prompt)
        messages = parse_prompt_file(prompt.read_text())
        text = reply_for(brain, messages)
        if garbage_for_judge and kind.startswith("judge"):
            text = GARBAGE
        if leak and kind == "target":
            text += f" (deploy key {KEY})"
        (folder / "answers" / prompt.name).write_text(text)
    return len(waiting)


async def test_garbage_twice_then_corrected_answers_finish_the_night(tmp_path, repo, project):  # noqa: F811
    brain = Brain()
    config = handoff_config(tmp_path)
    night = make_night(tmp_path, repo, project, config=config)
    result = await night.run()
    folder = night.folder / "handoff"
    assert result.status == "waiting" and (folder / "answers").is_dir()
    tasks = json.loads((night.folder / "tasks.json").read_text())
    garbage_rounds = rejected_rounds = rounds = 0
    while result.status == "waiting":
        rounds += 1
        assert rounds < 30, result.message
        judging = any(s.info.kind.startswith("judge") for s in HandoffFolder(folder).waiting())
        garbage = judging and garbage_rounds < 2
        garbage_rounds += garbage
        if garbage_rounds == 2 and not garbage and judging:
            # the correction: every rejected judge answer is rewritten in its own file
            for status in HandoffFolder(folder).waiting():
                if status.state == "rejected":
                    rejected_rounds += 1
        answer(folder, brain, garbage_for_judge=garbage, leak=rounds == 1)
        night = make_night(tmp_path, repo, project, config=config)
        result = await night.run()
        assert result.status in ("waiting", "finished"), result.message
        if garbage and garbage_rounds == 2:
            # the second garbage answer (to the repair prompt) is rejected, not a failure
            assert result.status == "waiting"
            assert "rejected: invalid JSON" in result.message  # says why, on the console
    assert result.status == "finished", result.message
    assert garbage_rounds == 2 and rejected_rounds > 0
    assert json.loads((night.folder / "tasks.json").read_text()) == tasks  # same tasks
    [branch] = repo.staged_branches()
    assert RULE in repo.git.blob(branch.head, repo.entry("project").path).decode()
    stored = b"".join(
        p.read_bytes()
        for p in (tmp_path / "state").rglob("*")
        if p.is_file() and "answers" not in p.parts and "prompts" not in p.parts
    )
    assert GARBAGE.encode() not in stored.replace(b"\\n", b"")  # never cached nor stored
    assert KEY.encode() not in stored  # masked before any file, event or rollout held it
