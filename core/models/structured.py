"""What a role sends of a reply's JSON schema: `models.<role>.structured`.

The engine asks for every optimizer, judge and miner reply with its schema
(`response_format: {"type": "json_schema", ...}`, core/optimizer/reply_schemas.py). How
much of it reaches the server is the role's mode:

- `schema`: the schema, so the server can only write a reply of that shape (OpenAI and
  Azure structured outputs with `strict: true`; Anthropic `output_config.format`, which
  the anthropic backend builds from it; llama.cpp, vLLM, Ollama and LM Studio take the
  OpenAI field as is).
- `json`: `{"type": "json_object"}`, any JSON object (for a server that has JSON mode but
  rejects schemas; the coding-agent CLIs read it as an instruction to answer in JSON).
- `off`: nothing; the prompt's wording and the parser's one repair re-ask do the work.
- `auto` (the default): `schema` where the backend is known to honour it (api.openai.com,
  Azure OpenAI, api.anthropic.com, the embedded model, and the scripted test double, which
  shows tests what a real backend would get); `off` for a server of unknown kind (an
  OpenAI- or Anthropic-compatible `base_url`: one that rejects the field would fail every
  call) and for the coding-agent CLIs and handoff, which take no response_format.

The prompts still describe the shape in words and a reply is still parsed and checked:
a schema makes a valid reply likely, the parser makes it certain. The response cache keys
on what is sent, so a free-text reply cached under `off` is never replayed as a schema
reply. Backends differ in the schema keywords they take: the hosted APIs get the schema
without length and range bounds (Anthropic refuses them), the embedded model gets bounds
added so its reply fits the call's token budget (a 135M model would otherwise fill a
string until the limit cuts it).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from core.config import AGENT_BACKENDS

StructuredMode = Literal["auto", "schema", "json", "off"]
Sent = Literal["schema", "json", "off"]

AGENT_KINDS = frozenset(AGENT_BACKENDS)
# Keywords the hosted APIs' strict modes refuse or may refuse; their parsers check them.
HOSTED_UNSUPPORTED = ("minLength", "maxLength", "minimum", "maximum")
# The embedded model: the reply's strings and arrays are bounded so that the longest reply
# the schema allows stays within the call's token budget (at CHARS_PER_TOKEN_WORST, a
# pessimistic count for JSON punctuation and the small model's tokenizer).
CHARS_PER_TOKEN_WORST = 2
LOCAL_MAX_ITEMS = 4
LOCAL_STRING_CHARS = (24, 600)


def sent_mode(mode: str, kind: str, *, custom_server: bool) -> Sent:
    """The mode in effect for a role on backend `kind` (`custom_server`: a `base_url` of
    the user's, whose kind of server we do not know)."""
    if mode != "auto":
        return mode  # type: ignore[return-value]
    if kind in ("openai", "anthropic"):
        return "off" if custom_server else "schema"
    if kind in ("azure", "local", "scripted"):
        return "schema"
    return "off"  # handoff and the coding-agent CLIs


def refusal(mode: str, kind: str) -> str | None:
    """Why `mode` cannot be used on `kind` (None: it can)."""
    if mode == "schema" and (kind in AGENT_KINDS or kind == "handoff"):
        return f"is schema but the {kind} backend cannot be given a schema; set auto or off" + (
            " (or json)" if kind in AGENT_KINDS else ""
        )
    if mode == "json" and kind == "handoff":
        return "is json but the handoff backend takes no response format; set auto or off"
    return None


def apply(settings: dict[str, Any], sent: Sent, kind: str) -> dict[str, Any]:
    """`settings` as sent under `sent`: a json_schema `response_format` kept (in the
    backend's dialect), turned into JSON mode, or removed. Any other response_format a
    caller set is left alone."""
    response_format = settings.get("response_format")
    if not _is_schema(response_format):
        return settings
    out = dict(settings)
    if sent == "off":
        del out["response_format"]
        return out
    if sent == "json":
        out["response_format"] = {"type": "json_object"}
    elif kind == "local":
        out["response_format"] = _with_schema(
            response_format, bounded(schema_of(response_format), settings.get("max_tokens"))
        )
    elif kind in ("openai", "azure", "anthropic"):
        out["response_format"] = _with_schema(
            response_format, without(schema_of(response_format), HOSTED_UNSUPPORTED)
        )
    if kind == "local" and out.get("stop") == ["\n"]:
        # The embedded model's default stop ends a one-line answer; a JSON reply may
        # break lines between its values, and the grammar ends it anyway.
        del out["stop"]
    return out


def _is_schema(response_format: Any) -> bool:
    return (
        isinstance(response_format, dict)
        and response_format.get("type") == "json_schema"
        and isinstance(response_format.get("json_schema"), dict)
        and isinstance(response_format["json_schema"].get("schema"), dict)
    )


def schema_of(response_format: dict[str, Any]) -> dict[str, Any]:
    return response_format["json_schema"]["schema"]


def _with_schema(response_format: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return {**response_format, "json_schema": {**response_format["json_schema"], "schema": schema}}


def without(schema: Any, keywords: tuple[str, ...]) -> Any:
    """`schema` with `keywords` removed at every level."""
    if isinstance(schema, list):
        return [without(v, keywords) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in keywords:
            continue
        if key == "properties" and isinstance(value, dict):  # names, not keywords
            out[key] = {name: without(sub, keywords) for name, sub in value.items()}
        else:
            out[key] = without(value, keywords)
    return out


def bounded(schema: dict[str, Any], max_tokens: Any) -> dict[str, Any]:
    """`schema` with every free string given a `maxLength` and every array a `maxItems`,
    the largest that keep the longest allowed reply within `max_tokens`."""
    out = copy.deepcopy(schema)
    budget = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else 512
    budget_chars = budget * CHARS_PER_TOKEN_WORST
    low, high = LOCAL_STRING_CHARS
    for items in (LOCAL_MAX_ITEMS, 2, 1):
        strings, fixed = _worst(out, items)
        if strings == 0:
            chars = high
            break
        chars = (budget_chars - fixed) // strings
        if chars >= low:
            break
    chars = max(low, min(high, chars))
    _bound(out, chars, items)
    return out


def _worst(schema: Any, items: int) -> tuple[int, int]:
    """(free strings, other characters) in the longest reply `schema` allows with arrays
    of `items` entries: its length is strings × maxLength + other."""
    if not isinstance(schema, dict):
        return 0, 0
    if "anyOf" in schema:
        counts = [_worst(s, items) for s in schema["anyOf"]]
        return max(counts, default=(0, 0))
    kind = schema.get("type")
    if kind == "object":
        strings, fixed = 0, 2
        for name, sub in schema.get("properties", {}).items():
            s, f = _worst(sub, items)
            strings, fixed = strings + s, fixed + f + len(name) + 6  # "name": value,
        return strings, fixed
    if kind == "array":
        s, f = _worst(schema.get("items", {}), items)
        return s * items, (f + 2) * items + 2
    if kind == "string":
        if "enum" in schema:
            return 0, max((len(v) for v in schema["enum"]), default=0) + 2
        return 1, 2
    return 0, 12  # a number, a boolean, null


def _bound(schema: Any, chars: int, items: int) -> None:
    if not isinstance(schema, dict):
        return
    for sub in schema.get("anyOf", []):
        _bound(sub, chars, items)
    kind = schema.get("type")
    if kind == "string" and "enum" not in schema:
        schema["maxLength"] = min(chars, schema.get("maxLength", chars))
    elif kind == "array":
        schema["maxItems"] = min(items, schema.get("maxItems", items))
        _bound(schema.get("items"), chars, items)
    elif kind == "object":
        for sub in schema.get("properties", {}).values():
            _bound(sub, chars, items)
