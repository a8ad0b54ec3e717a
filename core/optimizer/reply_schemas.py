"""The JSON schema of every optimizer, judge and miner reply, in one place.

Why: a backend that honours a schema (OpenAI and Azure structured outputs, Anthropic's
`output_config.format`, llama.cpp's grammar) can only write a reply of that shape, so
even a 135M model returns short, parseable JSON instead of rambling to its token limit.
Each schema is the shape its parser (the `check` of a `json_reply.Shape`) accepts, field
for field: tests/core/optimizer/test_reply_schemas.py generates replies from every schema,
parses them, and compares the fields each parser reads with the schema's properties, so
the two cannot drift apart silently.

The schemas are written in the subset every strict backend takes: each object lists all
its properties as required and forbids others, optional values are nullable. The bounds
here (`minLength`, `minimum`, `maximum`) say what the parser insists on; backends that
refuse such keywords get them removed on the way out (core/models/structured.py), and the
parser still checks them.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

# The edit operations the skill editor applies (core/skill/edits.py).
EDIT_OPS = ("insert_after", "append", "replace", "delete")
# Suggestion kinds and priorities of the rewrite modes (core/optimizer/suggestions.py).
SUGGESTION_KINDS = ("add", "remove", "merge", "reorganise", "compress", "clarify")
PRIORITIES = ("high", "medium", "low")
CHECK_KINDS = ("contains", "not_contains")

STRING: Schema = {"type": "string"}
TEXT: Schema = {"type": "string", "minLength": 1}  # the parser refuses an empty one
INTEGER: Schema = {"type": "integer"}


def obj(**properties: Schema) -> Schema:
    """A strict object: every property required, nothing else allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def enum(values: tuple[str, ...]) -> Schema:
    return {"type": "string", "enum": list(values)}


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


EDIT = obj(op=enum(EDIT_OPS), target=STRING, content=STRING, rationale=STRING)
LAPSES = array(STRING)

ANALYST = obj(analysis=STRING, edits=array(EDIT), lapses=LAPSES)
MERGE = obj(analysis=STRING, edits=array(EDIT))
RANK = obj(order=array(INTEGER), reason=STRING)
LEARNING_RATE = obj(count=INTEGER, reasoning=STRING, confidence=STRING, risks=STRING)
SLOW_UPDATE = obj(reasoning=STRING, content=STRING)
META_SKILL = obj(reasoning=STRING, content=STRING)
CONSOLIDATE_NOTES = obj(notes=array(STRING))

SUGGESTION = obj(
    kind=enum(SUGGESTION_KINDS),
    title=STRING,
    motivation=STRING,
    instruction=TEXT,
    priority=enum(PRIORITIES),
)
SUGGESTIONS = obj(analysis=STRING, suggestions=array(SUGGESTION), lapses=LAPSES)
# `rewrite` and `full_rewrite`: the whole new skill.
REWRITE = obj(skill=TEXT, summary=STRING, analysis=STRING, lapses=LAPSES)
# `merge_full`: pick one candidate by number, or null and a combined skill.
PICK = obj(pick=nullable(INTEGER), skill=STRING, summary=STRING)

JUDGE = obj(score={"type": "number", "minimum": 0, "maximum": 1}, reason=STRING)


def miner(kinds: tuple[str, ...], check_kinds: tuple[str, ...] = CHECK_KINDS) -> Schema:
    """The miner's tasks; `kinds` are Sleep's task kinds (sleep/mine/kinds.py) and
    `check_kinds` the checks it may write (sleep/mine/tasks.py), passed in because core
    does not import sleep."""
    check = obj(kind=enum(check_kinds), value=STRING)
    task = obj(
        intent=TEXT,
        kind=enum(kinds),
        rubric=STRING,
        checks=array(check),
        sources=array(INTEGER),
        corrections=array(INTEGER),
        needs=array(obj(prompt=INTEGER, need=TEXT)),
    )
    return obj(tasks=array(task))


def response_format(name: str, schema: Schema) -> dict[str, Any]:
    """The OpenAI-style request field that carries `schema` (the client turns it into each
    backend's own form, or removes it: core/models/structured.py)."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
