"""Parsing optimizer replies, the one repair re-ask and truncation (core.optimizer.json_reply)."""

from __future__ import annotations

import pytest

from core.models.types import BudgetExceeded, Completion, Usage
from core.optimizer.json_reply import (
    ANALYST_SHAPE,
    RANK_SHAPE,
    OptimizerOutputError,
    ask_json,
    extract_json_object,
    parse_reply,
)

GOOD = '{"analysis": "a", "edits": [{"op": "append", "content": "x"}]}'


def completion(text: str, finish: str = "stop") -> Completion:
    return Completion(
        text=text, usage=Usage(10, 20), finish_reason=finish, latency_s=0.0, model="fake"
    )


class Replies:
    """A `complete` stand-in that returns canned completions in order and records what it
    was asked (the model client is not needed to test parsing)."""

    def __init__(self, *replies: Completion):
        self.replies = list(replies)
        self.calls: list[tuple[list, dict]] = []

    async def __call__(self, messages, **settings):
        self.calls.append((list(messages), settings))
        return self.replies.pop(0)


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        f"```json\n{GOOD}\n```",
        f"Here you go:\n```\n{GOOD}\n```\nHope it helps.",
        f"Sure! {GOOD} Anything else?",
        f"  \n{GOOD}\n",
    ],
)
def test_extract_finds_the_object(text):
    assert extract_json_object(text)["analysis"] == "a"


def test_extract_handles_braces_inside_strings_and_prose_braces():
    text = 'Note {this}. {"analysis": "use {x} and }", "edits": []}'
    assert extract_json_object(text) == {"analysis": "use {x} and }", "edits": []}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("no json here", "invalid JSON"),
        ("[1, 2]", "got a JSON array"),
        ('{"analysis": "a", "edits": [}', "invalid JSON"),
    ],
)
def test_extract_errors_say_why(text, needle):
    with pytest.raises(OptimizerOutputError, match=needle):
        extract_json_object(text)


def test_analyst_shape_checks():
    with pytest.raises(OptimizerOutputError, match='missing key "edits"'):
        parse_reply('{"analysis": "x"}', ANALYST_SHAPE)
    with pytest.raises(OptimizerOutputError, match='"edits" must be an array'):
        parse_reply('{"edits": "replace all"}', ANALYST_SHAPE)
    with pytest.raises(OptimizerOutputError, match='"analysis" must be a string'):
        parse_reply('{"analysis": 3, "edits": []}', ANALYST_SHAPE)
    value = parse_reply('{"edits": [{"op": "frobnicate"}, "junk", 3]}', ANALYST_SHAPE)
    assert value == {"analysis": "", "edits": [{"op": "frobnicate"}], "dropped": 2, "lapses": []}
    lapsed = parse_reply('{"edits": [], "lapses": ["  rule  one ", 3, ""]}', ANALYST_SHAPE)
    assert lapsed["lapses"] == ["rule one"]  # skill-aware notes: strings only, squeezed


def test_rank_shape_checks():
    assert parse_reply('{"order": [1, 0]}', RANK_SHAPE)["order"] == [1, 0]
    for bad in ('{"order": ["1"]}', '{"order": [true]}', '{"ranking": [0]}'):
        with pytest.raises(OptimizerOutputError):
            parse_reply(bad, RANK_SHAPE)


async def test_ask_json_first_try():
    complete = Replies(completion(GOOD))
    reply = await ask_json(
        complete, [{"role": "user", "content": "p"}], ANALYST_SHAPE, temperature=0.5
    )
    assert reply.ok and not reply.repaired and reply.calls == 1
    # The request carries the shape's schema (the role's `structured` mode decides what
    # of it is sent: core/models/structured.py).
    assert complete.calls[0][1] == {
        "temperature": 0.5,
        "response_format": ANALYST_SHAPE.response_format,
    }


async def test_ask_json_repairs_once_quoting_error_and_shape():
    complete = Replies(completion('{"analysis": "a", "edits": [}'), completion(GOOD))
    reply = await ask_json(complete, [{"role": "user", "content": "p"}], ANALYST_SHAPE)
    assert reply.ok and reply.repaired and reply.calls == 2
    messages = complete.calls[1][0]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == '{"analysis": "a", "edits": [}'
    assert "invalid JSON" in messages[2]["content"]
    assert ANALYST_SHAPE.example in messages[2]["content"]


async def test_ask_json_gives_up_after_one_repair():
    complete = Replies(completion("nope"), completion('{"analysis": "a"}'))
    reply = await ask_json(complete, [{"role": "user", "content": "p"}], ANALYST_SHAPE)
    assert not reply.ok and reply.calls == 2
    assert (
        "unusable JSON after 2 attempt(s)" in reply.error and 'missing key "edits"' in reply.error
    )


async def test_truncated_reply_is_retried_once_at_twice_the_budget():
    complete = Replies(completion(GOOD[:30], finish="length"), completion(GOOD))
    messages = [{"role": "user", "content": "p"}]
    reply = await ask_json(
        complete, messages, ANALYST_SHAPE, grow_on_truncation=True, max_tokens=100, timeout_s=60.0
    )
    assert reply.ok and reply.calls == 2
    schema = {"response_format": ANALYST_SHAPE.response_format}
    assert complete.calls[1] == (messages, {"max_tokens": 200, "timeout_s": 120.0, **schema})


async def test_a_reply_cut_twice_is_dropped_naming_the_setting():
    cut = completion(GOOD[:30], finish="length")
    complete = Replies(cut, cut, completion(GOOD))
    messages = [{"role": "user", "content": "p"}]
    reply = await ask_json(
        complete, messages, ANALYST_SHAPE, grow_on_truncation=True, max_tokens=20
    )
    assert not reply.ok and reply.calls == 2
    assert complete.calls[1][1]["max_tokens"] == 40
    assert "after one retry at a larger budget" in reply.error and "max_tokens" in reply.error


async def test_no_retry_when_the_ceiling_leaves_no_room():
    messages = [{"role": "user", "content": "p"}]
    for grow in ({"max_tokens": 64, "max_tokens_ceiling": 64}, {}):  # at the ceiling; no budget
        complete = Replies(completion(GOOD[:30], finish="length"), completion(GOOD))
        reply = await ask_json(complete, messages, ANALYST_SHAPE, grow_on_truncation=True, **grow)
        assert not reply.ok and reply.calls == 1 and "truncated" in reply.error


async def test_without_growth_a_cut_reply_is_never_used_nor_re_asked():
    complete = Replies(completion(GOOD, finish="length"), completion(GOOD))
    reply = await ask_json(
        complete, [{"role": "user", "content": "p"}], ANALYST_SHAPE, max_tokens=9
    )
    assert not reply.ok and reply.calls == 1
    assert "truncated" in reply.error and "max_tokens" in reply.error


async def test_truncated_repair_is_retried_once_then_dropped():
    cut = completion(GOOD[:30], finish="length")
    complete = Replies(completion("nope"), cut, cut)
    messages = [{"role": "user", "content": "p"}]
    reply = await ask_json(complete, messages, ANALYST_SHAPE, grow_on_truncation=True, max_tokens=9)
    assert not reply.ok and reply.calls == 3 and "truncated" in reply.error


async def test_model_errors_propagate():
    async def broke(messages, **settings):
        raise BudgetExceeded("token cap reached")

    with pytest.raises(BudgetExceeded):
        await ask_json(broke, [{"role": "user", "content": "p"}], ANALYST_SHAPE)


DEEP = ["[" * 100_000, "{" * 100_000, '{"a": ' * 100_000, "Here:\n```json\n" + "[" * 100_000]


@pytest.mark.parametrize("text", DEEP, ids=["brackets", "braces", "objects", "fenced"])
def test_a_reply_nested_past_the_recursion_limit_is_unusable_not_a_crash(text):
    """Issue 35: 100,000 nested `[` raised RecursionError on every re-run."""
    with pytest.raises(OptimizerOutputError, match="invalid JSON"):
        extract_json_object(text)


async def test_a_deep_reply_is_re_asked_once_then_reported():
    replies = Replies(completion("[" * 100_000), completion("{" * 100_000))
    reply = await ask_json(replies, [{"role": "user", "content": "go"}], ANALYST_SHAPE)
    assert reply.value is None and reply.calls == 2
    assert reply.error is not None and "\n" not in reply.error
