"""Every reply shape's JSON schema against its parser (core/optimizer/reply_schemas.py):
a reply the schema allows parses, and the fields the parser (and what consumes its output)
reads are exactly the schema's properties, so neither can change without the other."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sleep.mine.with_model  # noqa: F401 - registers the miner's shape
import sleep.night.replay_env  # noqa: F401 - registers the judge's shape
from core.models.structured import HOSTED_UNSUPPORTED, bounded, without
from core.optimizer import autonomous_lr, execution_notes, suggestions  # noqa: F401 - shapes
from core.optimizer import reply_schemas as schemas
from core.optimizer.json_reply import SHAPES, OptimizerOutputError, parse_reply
from core.optimizer.suggestions import Suggestion
from core.skill.edits import Edit, EditStatus, apply_edit
from sleep.mine.kinds import KINDS as TASK_KINDS

EXPECTED_SHAPES = {
    "analyst",
    "merge",
    "rank",
    "autonomous_lr",
    "suggestions",
    "rewrite",
    "full_rewrite",
    "merge_full",
    "slow_update",
    "meta_skill",
    "consolidate_notes",
    "judge",
    "miner",
}


def test_every_reply_shape_has_a_schema():
    assert set(SHAPES) >= EXPECTED_SHAPES
    missing = [name for name, shape in SHAPES.items() if shape.schema is None]
    assert missing == []


# ------------------------------------------------------------ replies from a schema


def replies(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Any value `schema` allows (the subset reply_schemas uses)."""
    if "anyOf" in schema:
        return st.one_of([replies(s) for s in schema["anyOf"]])
    kind = schema["type"]
    if kind == "object":
        return st.fixed_dictionaries({k: replies(v) for k, v in schema["properties"].items()})
    if kind == "array":
        return st.lists(replies(schema["items"]), max_size=schema.get("maxItems", 3))
    if kind == "string":
        if "enum" in schema:
            return st.sampled_from(schema["enum"])
        text = st.text(max_size=schema.get("maxLength", 12))
        if schema.get("minLength"):
            # Beyond the schema: the parsers also refuse a string of spaces only.
            text = st.text(min_size=1, max_size=12).map(lambda t: "x" + t)
        return text
    if kind == "integer":
        return st.integers(min_value=-5, max_value=50)
    if kind == "number":
        low, high = schema.get("minimum", -1e6), schema.get("maximum", 1e6)
        return st.floats(min_value=low, max_value=high, allow_nan=False)
    assert kind == "null", kind
    return st.none()


def _valid(name: str, reply: dict[str, Any]) -> bool:
    # The rules a portable schema cannot say: merge_full's "pick" null needs a "skill"; a
    # miner's check must be usable as written (a regular expression that compiles, a size
    # "<N> chars", a code term rather than an English word: sleep/mine/with_model.py).
    if name == "miner":
        from sleep.mine.with_model import check_problem

        return not any(check_problem(c) for t in reply["tasks"] for c in t["checks"])
    return not (name == "merge_full" and reply["pick"] is None and not reply["skill"].strip())


@pytest.mark.parametrize("name", sorted(EXPECTED_SHAPES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_reply_the_schema_allows_parses(name, data):
    shape = SHAPES[name]
    reply = data.draw(replies(shape.schema))
    if not _valid(name, reply):
        with pytest.raises(OptimizerOutputError):
            parse_reply(json.dumps(reply), shape)
        return
    value = parse_reply(json.dumps(reply), shape)
    if name in ("analyst", "merge"):
        assert len(value["edits"]) == len(reply["edits"]) and value["dropped"] == 0
    if name == "suggestions":
        usable = [s for s in reply["suggestions"] if s["instruction"].strip()]
        assert len(value["suggestions"]) == len(usable)


# ------------------------------------------------------------------- fields read


class Reading(dict):
    """A reply that records which of its fields were read, as dotted paths."""

    def __init__(self, data: dict, seen: set[str], path: str = ""):
        super().__init__({k: _wrap(v, seen, f"{path}{k}") for k, v in data.items()})
        self._seen, self._path = seen, path

    def _note(self, key: object) -> None:
        self._seen.add(f"{self._path}{key}")

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self._note(key)
        return super().get(key, default)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)


def _wrap(value: Any, seen: set[str], path: str) -> Any:
    if isinstance(value, dict):
        return Reading(value, seen, path + ".")
    if isinstance(value, list):
        return [Reading(v, seen, path + "[].") if isinstance(v, dict) else v for v in value]
    return value


def schema_fields(schema: dict[str, Any], path: str = "") -> set[str]:
    out: set[str] = set()
    for sub in schema.get("anyOf", []):
        out |= schema_fields(sub, path)
    if schema.get("type") == "object":
        for key, sub in schema["properties"].items():
            out.add(path + key)
            out |= schema_fields(sub, f"{path}{key}.")
    if schema.get("type") == "array":
        out |= schema_fields(schema["items"], path.rstrip(".") + "[].")
    return out


def example(schema: dict[str, Any]) -> Any:
    """One full reply: every array with one entry, so nested fields are there to read."""
    if "anyOf" in schema:
        return example(schema["anyOf"][0])
    kind = schema["type"]
    if kind == "object":
        return {k: example(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return [example(schema["items"])]
    if kind == "string":
        return schema["enum"][0] if "enum" in schema else "some text"
    return {"integer": 1, "number": 0.5, "null": None}[kind]


# What reads a shape's entries after its parser: the parts of the engine that use them.
CONSUMERS = {
    "analyst": lambda v: [Edit.from_dict(e) for e in v["edits"]],
    "merge": lambda v: [Edit.from_dict(e) for e in v["edits"]],
}


@pytest.mark.parametrize("name", sorted(EXPECTED_SHAPES))
def test_the_parser_reads_exactly_the_schemas_fields(name):
    shape = SHAPES[name]
    seen: set[str] = set()
    reply = Reading(example(shape.schema), seen)
    value = shape.check(reply)
    CONSUMERS.get(name, lambda v: None)(value)
    read = {path for path in seen if not path.endswith(("[]", "."))}
    assert read == schema_fields(shape.schema)


def test_suggestions_read_every_suggestion_field():
    seen: set[str] = set()
    entry = Reading(example(schemas.SUGGESTION), seen)
    Suggestion.from_dict(entry)
    assert seen == schema_fields(schemas.SUGGESTION)


# ------------------------------------------------------------------ enumerations


def test_edit_ops_are_the_ones_the_editor_applies():
    text = "# Skill\nline one\n"
    for op in schemas.EDIT_OPS:
        _, outcome = apply_edit(text, Edit(op=op, target="line one", content="x"))
        assert outcome.status is EditStatus.APPLIED, op
    _, outcome = apply_edit(text, Edit(op="frobnicate", target="line one", content="x"))
    assert outcome.status is EditStatus.INVALID


def test_miner_schema_kinds_are_sleeps():
    task = SHAPES["miner"].schema["properties"]["tasks"]["items"]
    assert task["properties"]["kind"]["enum"] == list(TASK_KINDS)


# --------------------------------------------------------------------- dialects


def test_hosted_dialect_drops_bounds_everywhere_and_keeps_property_names():
    schema = schemas.obj(minimum=schemas.TEXT, score={"type": "number", "maximum": 1})
    out = without(schema, HOSTED_UNSUPPORTED)
    assert out["properties"] == {"minimum": {"type": "string"}, "score": {"type": "number"}}


@pytest.mark.parametrize("max_tokens", [128, 512, 2048])
def test_the_embedded_dialect_bounds_a_reply_to_its_token_budget(max_tokens):
    schema = bounded(schemas.ANALYST, max_tokens)
    longest = longest_reply(schema)
    assert len(json.dumps(longest)) <= max_tokens * 2 or max_tokens == 128
    edits = schema["properties"]["edits"]
    assert edits["maxItems"] >= 1 and edits["items"]["properties"]["content"]["maxLength"] >= 24
    assert "maxLength" not in schemas.ANALYST["properties"]["analysis"]  # ours is untouched


def longest_reply(schema: dict[str, Any]) -> Any:
    if "anyOf" in schema:
        return longest_reply(schema["anyOf"][0])
    kind = schema["type"]
    if kind == "object":
        return {k: longest_reply(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return [longest_reply(schema["items"])] * schema["maxItems"]
    if kind == "string":
        if "enum" in schema:
            return max(schema["enum"], key=len)
        return "x" * schema["maxLength"]
    return 1
