"""A handoff answer the caller cannot use (issue 19): rejected with the reason, a repair
prompt written, then `AnswerRejected` (waiting, never a silent empty reply); fixing the
original answer is enough, and the repair prompt nobody needs any more goes away."""

from __future__ import annotations

import json

import pytest

from core.models.handoff import AnswerRejected, HandoffBackend, HandoffWaiting
from core.models.handoff_files import HandoffFolder
from core.models.types import Request
from core.optimizer.json_reply import RANK_SHAPE, ask_json


def complete_with(backend: HandoffBackend):
    async def complete(messages, **_settings):
        request = Request(backend="handoff", model="handoff", messages=messages)
        return await backend.send(request, timeout_s=1)

    return complete


async def test_a_rejected_answer_gets_a_repair_prompt_and_fixing_it_is_enough(tmp_path):
    backend = HandoffBackend(tmp_path, role="optimizer")
    complete = complete_with(backend)
    messages = [{"role": "user", "content": 'Rank them. Reply {"order": [...]}'}]
    with pytest.raises(HandoffWaiting):
        await ask_json(complete, messages, RANK_SHAPE)
    [first] = HandoffFolder(tmp_path).waiting()
    assert first.info.kind == "rank" and first.info.shape == "rank"
    assert RANK_SHAPE.example in first.prompt.read_text()  # the shape wanted is stated
    first.answer.write_text("the second one is best")
    with pytest.raises(HandoffWaiting) as info:  # the repair prompt waits
        await ask_json(complete, messages, RANK_SHAPE)
    assert not isinstance(info.value, AnswerRejected)
    rejected, repair = HandoffFolder(tmp_path).waiting()
    assert rejected.state == "rejected" and "invalid JSON" in rejected.reason
    assert repair.info.kind == "rank-repair-1" and repair.info.repair_of == first.prompt.name
    repair.answer.write_text("still not JSON")
    with pytest.raises(AnswerRejected, match="not used: invalid JSON"):
        await ask_json(complete, messages, RANK_SHAPE)
    assert [s.state for s in HandoffFolder(tmp_path).waiting()] == ["rejected", "rejected"]

    first.answer.write_text(json.dumps({"order": [1, 0]}))  # the person fixes the first one
    reply = await ask_json(complete, messages, RANK_SHAPE)
    assert reply.value == {"order": [1, 0], "reason": ""} and not reply.repaired
    assert HandoffFolder(tmp_path).waiting() == []  # the unneeded repair prompt is gone
    assert not repair.prompt.exists()


async def test_checking_answers_uses_the_shape_asked_for_and_writes_nothing(tmp_path):
    from core.optimizer.handoff_check import check_folder

    backend = HandoffBackend(tmp_path, role="optimizer")
    messages = [{"role": "user", "content": "Rank them."}]
    with pytest.raises(HandoffWaiting):
        await ask_json(complete_with(backend), messages, RANK_SHAPE)
    [waiting] = check_folder(tmp_path)
    assert waiting.verdict == "waiting" and waiting.expects.startswith("one JSON object (rank)")
    waiting.status.answer.write_text('{"order": "first"}')
    before = sorted(p.name for p in tmp_path.iterdir())
    [checked] = check_folder(tmp_path)
    assert checked.verdict == "rejected" and "array of integers" in checked.why
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing recorded
    waiting.status.answer.write_text('{"order": [0]}')
    assert [c.verdict for c in check_folder(tmp_path)] == ["ok"]


async def test_answering_the_repair_prompt_is_enough_too(tmp_path):
    """The other way out (a strong-model night found the original still listed as
    rejected, and counted as waiting, in every later round): the repair's answer is used,
    so nothing is waiting any more."""
    backend = HandoffBackend(tmp_path, role="optimizer")
    complete = complete_with(backend)
    messages = [{"role": "user", "content": 'Rank them. Reply {"order": [...]}'}]
    with pytest.raises(HandoffWaiting):
        await ask_json(complete, messages, RANK_SHAPE)
    [first] = HandoffFolder(tmp_path).waiting()
    first.answer.write_text("the second one is best")
    with pytest.raises(HandoffWaiting):
        await ask_json(complete, messages, RANK_SHAPE)
    _, repair = HandoffFolder(tmp_path).waiting()
    repair.answer.write_text(json.dumps({"order": [1, 0]}))
    reply = await ask_json(complete, messages, RANK_SHAPE)
    assert reply.value["order"] == [1, 0] and reply.repaired
    assert HandoffFolder(tmp_path).waiting() == []
    [original] = [s for s in HandoffFolder(tmp_path).statuses() if s.prompt == first.prompt]
    assert original.state == "answered" and repair.prompt.name in original.reason


async def test_a_judge_answer_nested_too_deep_is_rejected_in_one_line(tmp_path):
    """Issue 35: a handoff answer of 100,000 nested `[` crashed every re-run."""
    backend = HandoffBackend(tmp_path, role="judge")
    complete = complete_with(backend)
    messages = [{"role": "user", "content": 'Rank them. Reply {"order": [...]}'}]
    with pytest.raises(HandoffWaiting):
        await ask_json(complete, messages, RANK_SHAPE)
    [first] = HandoffFolder(tmp_path).waiting()
    first.answer.write_text("[" * 100_000)
    with pytest.raises(HandoffWaiting):  # rejected with the reason; the repair prompt waits
        await ask_json(complete, messages, RANK_SHAPE)
    rejected, repair = HandoffFolder(tmp_path).waiting()
    assert "nested too deeply" in rejected.reason
    repair.answer.write_text("[" * 100_000)
    with pytest.raises(AnswerRejected) as raised:
        await ask_json(complete, messages, RANK_SHAPE)
    assert "\n" not in str(raised.value)
