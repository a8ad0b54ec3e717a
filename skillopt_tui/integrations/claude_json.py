"""Our `skillopt` member of an agent's JSON config — `mcpServers.skillopt` in
`~/.claude.json` and Copilot's `~/.copilot/mcp-config.json`, `mcp.skillopt` in OpenCode's
`opencode.json` — added and removed as a text edit of that one member, so the rest of the
file keeps its bytes (indentation, key order, escapes, CRLF). The members' spans come from
the standard library's own JSON scanner; every result is parsed again and must equal the
intended change, else we refuse rather than write.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_tui.integrations.files import IntegrationError

SERVER = "skillopt"
PARENT = "mcpServers"
_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


def _kind(value: Any) -> str:
    """A JSON value's type as JSON names it."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def entry(command: str) -> dict[str, Any]:
    """Claude Code's server entry."""
    return {"type": "stdio", "command": command, "args": ["mcp"], "env": {}}


@dataclass(frozen=True)
class Member:
    key: str
    start: int  # the key's opening quote
    value: int  # first character of the value
    end: int  # just past the value


@dataclass(frozen=True)
class Object:
    start: int  # "{"
    end: int  # just past "}"
    members: list[Member]


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _object(text: str, start: int) -> Object:
    """The object at text[start] == "{", with its members' spans (the text is valid JSON)."""
    members, i = [], _skip(text, start + 1)
    while text[i] != "}":
        key, after_key = json.decoder.scanstring(text, i + 1)
        value = _skip(text, _skip(text, after_key) + 1)  # past ":"
        _, end = _DECODER.raw_decode(text, value)
        members.append(Member(key, i, value, end))
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return Object(start, i + 1, members)


def load(text: str, path: Path, parent: str = PARENT) -> dict[str, Any]:
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        for key in (parent, SERVER):
            if keys.count(key) > 1:
                raise IntegrationError(f"{path}: {key!r} appears twice in one object; fix it")
        return dict(pairs)

    try:
        data = json.loads(text, object_pairs_hook=unique) if text.strip() else {}
    except ValueError as exc:
        raise IntegrationError(f"{path}: not valid JSON ({exc}); fix it, then try again") from None
    except RecursionError:
        raise IntegrationError(f"{path}: nested too deeply to be a config; fix it") from None
    if not isinstance(data, dict):
        raise IntegrationError(f"{path}: expected a JSON object, found {_kind(data)}")
    servers = data.get(parent, {})
    if not isinstance(servers, dict):
        raise IntegrationError(f"{path}: {parent} is {_kind(servers)}, not an object; fix it first")
    return data


def _unit(text: str, top: Object) -> str | None:
    """The file's indentation step (its first member's indentation), None if it is on one
    line, two spaces for an empty object spread over lines."""
    if not top.members:
        return "  " if "\n" in text.strip() else None
    gap = text[top.start + 1 : top.members[0].start]
    return gap.rsplit("\n", 1)[1] if "\n" in gap else None


def _insert(text: str, obj: Object, depth: int, key: str, value: Any, unit: str | None) -> str:
    """`text` with `"key": value` as the last member of `obj` (at nesting `depth`), laid out
    like the file: indented by `unit` per level, or on one line."""
    if unit is None:
        before, closing = (" " if obj.members else ""), ""
        rendered = json.dumps(value, ensure_ascii=False)
    else:
        eol = "\r\n" if "\r\n" in text else "\n"
        before, closing = eol + unit * (depth + 1), eol + unit * depth
        rendered = json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", before)
    member = f"{json.dumps(key)}: {rendered}"
    if obj.members:
        at = obj.members[-1].end
        return text[:at] + "," + before + member + text[at:]
    return text[: obj.start + 1] + before + member + closing + text[obj.end - 1 :]


def _cut(text: str, obj: Object, key: str) -> str:
    members = obj.members
    n = next(i for i, m in enumerate(members) if m.key == key)
    if len(members) == 1:
        return text[: obj.start + 1] + text[obj.end - 1 :]
    if n > 0:
        return text[: members[n - 1].end] + text[members[n].end :]
    return text[: members[0].start] + text[members[1].start :]


def _top(text: str) -> Object:
    return _object(text, _skip(text, 0))


def _verified(new: str, expected: dict[str, Any], path: Path, parent: str) -> str:
    try:
        if json.loads(new) == expected:
            return new
    except ValueError:
        pass
    raise IntegrationError(f"{path}: cannot edit {parent} here without touching other settings")


def add(
    text: str, path: Path, command: str, *, parent: str = PARENT, value: dict | None = None
) -> str:
    """`text` with `parent.skillopt` set to `value` (default: Claude Code's entry)."""
    value = entry(command) if value is None else value
    data = load(text, path, parent)
    expected = copy.deepcopy(data)
    expected.setdefault(parent, {})[SERVER] = value
    if not text.strip():
        return json.dumps(expected, indent=2) + "\n"
    top = _top(text)
    unit = _unit(text, top)
    member = next((m for m in top.members if m.key == parent), None)
    if member is None:
        new = _insert(text, top, 0, parent, {SERVER: value}, unit)
    else:
        servers = _object(text, member.value)
        if any(m.key == SERVER for m in servers.members):
            text = _cut(text, servers, SERVER)
            servers = _object(text, member.value)
        new = _insert(text, servers, 1, SERVER, value, unit)
    return _verified(new, expected, path, parent)


def has_parent(text: str, path: Path, parent: str = PARENT) -> bool:
    return parent in load(text, path, parent)


def remove(text: str, path: Path, parent_was_there: bool = True, *, parent: str = PARENT) -> str:
    """`text` without our entry (and without its parent object, if install added it and it
    is empty now)."""
    data = load(text, path, parent)
    servers = data.get(parent)
    if not isinstance(servers, dict) or SERVER not in servers:
        return text
    expected = copy.deepcopy(data)
    del expected[parent][SERVER]
    top = _top(text)
    member = next(m for m in top.members if m.key == parent)
    if not expected[parent] and not parent_was_there:
        del expected[parent]
        return _verified(_cut(text, top, parent), expected, path, parent)
    return _verified(_cut(text, _object(text, member.value), SERVER), expected, path, parent)
