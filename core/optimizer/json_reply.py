"""Turning an optimizer reply into a checked JSON object, with one repair attempt.

Models wrap JSON in ``` fences, add a sentence before it, or break it. We accept the first
JSON object we can find, check it against the shape the prompt asked for, and when that
fails we re-ask once, quoting the parse error and the expected shape: a second failure is
reported, not guessed around. A reply cut off by the token limit (finish reason "length")
is never used, not even its parsable prefix, nor re-asked (published makes no second call
either; it never looks at the finish reason and parses what it got, which a cut JSON reply
rarely survives). With `grow_on_truncation` (the retry_truncated overlay) it is asked
again once with twice the call's `max_tokens` (and timeout), up to the ceiling; a reply
cut again, or one whose budget cannot grow, is dropped with a reason that names the
setting to raise.

A person's answer (the handoff backend) that is unusable is rejected with the reason in
its folder; a still unusable repair answer raises `AnswerRejected`, so the run waits for a
fixed answer instead of going on without one. The call's shape labels the prompt file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.models.call_label import labelled
from core.models.handoff import AnswerRejected, accept_answer, reject_answer
from core.models.types import Completion, Message
from core.optimizer import reply_schemas as schemas
from core.optimizer.prompt_templates import render_prompt

CompleteFn = Callable[..., Awaitable[Completion]]

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.DOTALL)


class OptimizerOutputError(ValueError):
    """The optimizer's reply is not the JSON object the prompt asked for."""


_TOO_DEEP = "invalid JSON: nested too deeply to read"


# ------------------------------------------------------------------------- extraction


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: the whole reply, else a fenced block, else the
    first `{` from which a complete object decodes. A reply nested past the parser's
    recursion limit (100,000 `[`) is unusable like any other, never a crash."""
    stripped = text.strip()
    if not stripped:
        raise OptimizerOutputError("the reply is empty")
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    first_error: str | None = None
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = (
                first_error or f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
            continue
        except RecursionError:
            first_error = first_error or _TOO_DEEP
            continue
        if isinstance(value, dict):
            return value
        first_error = first_error or f"expected a JSON object, got a JSON {_json_type(value)}"
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:  # every later `{` is inside this one: as deep or deeper
            raise OptimizerOutputError(first_error or _TOO_DEEP) from None
        if isinstance(value, dict):
            return value
    raise OptimizerOutputError(first_error or "no JSON object found in the reply")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


# ----------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class Shape:
    """What one prompt expects back: `example` is quoted in the repair re-ask, `check`
    raises OptimizerOutputError or returns the cleaned object, `schema` (the same shape as
    a JSON schema, core/optimizer/reply_schemas.py) goes with the request so a backend
    that honours it can only write such a reply."""

    name: str
    example: str
    check: Callable[[dict[str, Any]], dict[str, Any]]
    schema: dict[str, Any] | None = None

    @property
    def response_format(self) -> dict[str, Any] | None:
        return None if self.schema is None else schemas.response_format(self.name, self.schema)

    def __post_init__(self) -> None:
        SHAPES[self.name] = self  # `skillopt sleep handoff` checks a written answer by name


SHAPES: dict[str, Shape] = {}


def need_str(obj: dict[str, Any], key: str, *, optional: bool = False) -> str:
    if key not in obj:
        if optional:
            return ""
        raise OptimizerOutputError(f'missing key "{key}"')
    value = obj[key]
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise OptimizerOutputError(f'"{key}" must be a string, got a JSON {_json_type(value)}')
    return value


def lapses_of(obj: dict[str, Any]) -> list[str]:
    """The skill-aware analysts' notes on rules the model did not follow (may be absent)."""
    lapses = obj.get("lapses")
    if not isinstance(lapses, list):
        return []
    return [" ".join(x.split()) for x in lapses if isinstance(x, str) and x.strip()]


def _check_edits(obj: dict[str, Any], *, lapses: bool = True) -> dict[str, Any]:
    if "edits" not in obj:
        raise OptimizerOutputError('missing key "edits"')
    edits = obj["edits"]
    if not isinstance(edits, list):
        raise OptimizerOutputError(f'"edits" must be an array, got a JSON {_json_type(edits)}')
    # Entries that are not objects cannot be an edit at all; anything object-shaped is kept
    # (an unknown op is reported as `invalid` when applied, so the optimizer hears of it).
    kept = [e for e in edits if isinstance(e, dict)]
    return {
        "analysis": need_str(obj, "analysis", optional=True),
        "edits": kept,
        "dropped": len(edits) - len(kept),
        "lapses": lapses_of(obj) if lapses else [],
    }


def _check_merged(obj: dict[str, Any]) -> dict[str, Any]:
    """A merge's reply: edits, no lapses (only failure analysts report those)."""
    return _check_edits(obj, lapses=False)


def _check_order(obj: dict[str, Any]) -> dict[str, Any]:
    if "order" not in obj:
        raise OptimizerOutputError('missing key "order"')
    order = obj["order"]
    if not isinstance(order, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in order
    ):
        raise OptimizerOutputError('"order" must be an array of integers')
    return {"order": order, "reason": need_str(obj, "reason", optional=True)}


_EDIT = '{"op": "insert_after|append|replace|delete", "target": "...", "content": "...", "rationale": "..."}'
_EDITS = '{"analysis": "...", "edits": [' + _EDIT + "]}"
ANALYST_SHAPE = Shape("analyst", _EDITS, _check_edits, schemas.ANALYST)
MERGE_SHAPE = Shape("merge", _EDITS, _check_merged, schemas.MERGE)
RANK_SHAPE = Shape("rank", '{"order": [2, 0, 1], "reason": "..."}', _check_order, schemas.RANK)


def _check_content(former: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The epoch calls' reply, as published: {reasoning, content}. The key these replies
    had before ("guidance", "notes") is still read, so an answer written for it (a
    handoff answer, a scripted test double) is not lost."""

    def check(obj: dict[str, Any]) -> dict[str, Any]:
        key = "content" if "content" in obj or former not in obj else former
        return {
            "reasoning": need_str(obj, "reasoning", optional=True),
            "content": need_str(obj, key),
        }

    return check


_CONTENT = '{"reasoning": "...", "content": "<markdown>"}'
GUIDANCE_SHAPE = Shape("slow_update", _CONTENT, _check_content("guidance"), schemas.SLOW_UPDATE)
NOTES_SHAPE = Shape("meta_skill", _CONTENT, _check_content("notes"), schemas.META_SKILL)


def parse_reply(text: str, shape: Shape) -> dict[str, Any]:
    return shape.check(extract_json_object(text))


# ---------------------------------------------------------------------- call + repair


@dataclass
class JsonReply:
    """The outcome of one asked-for JSON object: `value` when usable, else `error` says
    why (already phrased for a human reading the reflection log)."""

    value: dict[str, Any] | None
    error: str | None = None
    calls: int = 0
    repaired: bool = False
    completions: list[Completion] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.value is not None


def _truncated_error(completion: Completion, calls: int) -> str:
    tried = " (also after one retry at a larger budget)" if calls > 1 else ""
    return (
        f"reply truncated at the token limit{tried} (finish_reason="
        f"{completion.finish_reason!r}, {completion.usage.output_tokens} output tokens); not "
        "applied — raise models.optimizer.max_tokens"
    )


def larger_budget(settings: dict[str, Any], ceiling: int | None) -> dict[str, Any] | None:
    """The settings for the one retry of a cut reply: twice the call's `max_tokens`, the
    timeout scaled alike; None when the call named no budget (the role's, unknown here,
    could be larger than any guess) or the ceiling leaves no room to grow."""
    current = settings.get("max_tokens")
    if not isinstance(current, int) or current <= 0:
        return None
    larger = current * 2 if ceiling is None else min(current * 2, ceiling)
    if larger <= current:
        return None
    grown = {**settings, "max_tokens": larger}
    if isinstance(settings.get("timeout_s"), (int, float)):
        grown["timeout_s"] = settings["timeout_s"] * larger / current
    return grown


async def ask_json(
    complete: CompleteFn,
    messages: list[Message],
    shape: Shape,
    *,
    repairs: int = 1,
    grow_on_truncation: bool = False,
    max_tokens_ceiling: int | None = None,
    **settings: Any,
) -> JsonReply:
    """Call `complete(messages, **settings)` and parse the reply as `shape`; on a parse
    error re-ask up to `repairs` times with the error quoted; with `grow_on_truncation` a
    cut reply is asked again once at a larger budget (up to `max_tokens_ceiling`). Model
    errors propagate: they are the trainer's to handle (a budget stop, a bad key), not a
    malformed reply."""
    reply = JsonReply(value=None)
    if shape.response_format is not None and "response_format" not in settings:
        # The role's `structured` mode decides what of it is sent (core/models/structured.py).
        settings = {**settings, "response_format": shape.response_format}
    conversation = list(messages)
    rejected = ""  # the handoff answer file the repair re-ask is about
    grown = False
    for attempt in range(repairs + 1):
        label = {"shape": shape.name, "example": shape.example, "repair": attempt}
        with labelled(shape.name, **label, repair_of=rejected):
            completion = await complete(conversation, **settings)
        reply.calls += 1
        reply.completions.append(completion)
        if completion.truncated and grow_on_truncation and not grown:
            retry = larger_budget(settings, max_tokens_ceiling)
            if retry is not None:
                grown, settings = True, retry
                completion = await complete(conversation, **settings)
                reply.calls += 1
                reply.completions.append(completion)
        if completion.truncated:
            reply.error = _truncated_error(completion, reply.calls)
            return reply
        try:
            reply.value = parse_reply(completion.text, shape)
        except OptimizerOutputError as exc:
            error = str(exc)
            reply.error = f"unusable JSON after {attempt + 1} attempt(s): {error}"
            if completion.answer_file:  # a person's answer: say why, never use it
                reject_answer(completion, error)
                rejected = Path(completion.answer_file).name
                if attempt == repairs:
                    raise AnswerRejected(
                        f"handoff: {completion.answer_file} was not used: {error}; fix it "
                        f"(the expected shape is {shape.example}) and run the same command again"
                    ) from None
            if attempt == repairs:
                break
            conversation = [
                *conversation,
                {"role": "assistant", "content": completion.text},
                {
                    "role": "user",
                    "content": render_prompt("repair", error=error, shape=shape.example),
                },
            ]
            continue
        reply.error = None
        reply.repaired = attempt > 0
        accept_answer(completion)
        return reply
    return reply
