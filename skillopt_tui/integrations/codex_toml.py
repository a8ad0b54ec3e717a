"""Our `[mcp_servers.skillopt]` table in `~/.codex/config.toml`, added and removed by
editing lines, so every other byte (comments, order, CRLF, the user's tables) stays.

Removal finds the table by its header, not by our BEGIN/END comments: Codex rewrites the
file and may move a comment, and a user may copy the block or delete a marker. A line that
looks like a header is one only if the text before it parses as TOML on its own (else it is
inside a multi-line string or array), so `tomllib` is the lexer. Every result is parsed
again and must equal the intended change exactly; if not, we refuse rather than write.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from skillopt_tui.integrations.files import IntegrationError

SERVER = "skillopt"
KEY = ("mcp_servers", SERVER)
BEGIN = "# BEGIN skillopt (written by `skillopt integrations install codex`; uninstall removes it)"
END = "# END skillopt"
_LOOKS_LIKE_HEADER = re.compile(r"^[ \t]*\[")
_BLANK_OR_COMMENT = re.compile(r"^[ \t]*(#.*)?\r?$")


def entry(command: str) -> dict[str, Any]:
    return {"command": command, "args": ["mcp"], "required": True}


def block(command: str, eol: str) -> str:
    lines = [
        BEGIN,
        f"[mcp_servers.{SERVER}]",
        f"command = {json.dumps(command)}",  # a JSON string is a valid TOML basic string
        'args = ["mcp"]',
        "# Without it `codex exec` starts its first turn before the server is up.",
        "required = true",
        END,
    ]
    return eol.join(lines) + eol


def parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise IntegrationError(f"{path}: not valid TOML ({exc}); fix it, then try again") from None
    except RecursionError:
        raise IntegrationError(f"{path}: nested too deeply to be a config; fix it") from None


def _loads_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None


def _header_key(line: str) -> tuple[str, ...] | None:
    """The key of a table header line (`[a."b"]`, `[[a.b]]`), or None if it is none."""
    try:
        node: Any = tomllib.loads(line.rstrip("\r\n") + "\n")
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    key: list[str] = []
    while isinstance(node, (dict, list)) and node:
        if isinstance(node, list):
            node = node[-1]
            continue
        if len(node) != 1:
            return None
        ((name, node),) = node.items()
        key.append(name)
    return tuple(key) or None


def _is_header(lines: list[str], i: int) -> bool:
    return (
        bool(_LOOKS_LIKE_HEADER.match(lines[i])) and _loads_or_none("".join(lines[:i])) is not None
    )


def _ours(key: tuple[str, ...] | None) -> bool:
    return key is not None and key[: len(KEY)] == KEY


def strip_server(text: str) -> str:
    """`text` without any `[mcp_servers.skillopt]` table (or its sub-tables) and without our
    marker lines. Comments and blank lines just before the next table belong to it and stay."""
    lines = text.splitlines(keepends=True)
    drop = [line.strip() in (BEGIN, END) for line in lines]
    i = 0
    while i < len(lines):
        if not (_LOOKS_LIKE_HEADER.match(lines[i]) and _ours(_header_key(lines[i]))):
            i += 1
            continue
        if not _is_header(lines, i):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not _is_header(lines, end):
            end += 1
        last = end
        while last > i + 1 and _BLANK_OR_COMMENT.match(lines[last - 1]):
            last -= 1  # trailing comments and blanks introduce what follows
        for n in range(i, last):
            drop[n] = True
        i = end
    _drop_separators(lines, drop)
    return "".join(line for line, gone in zip(lines, drop, strict=True) if not gone)


def _drop_separators(lines: list[str], drop: list[bool]) -> None:
    """A blank line before a dropped run goes too when a blank line (or the end) follows it:
    it separated what is gone."""
    n = 0
    while n < len(lines):
        if not drop[n]:
            n += 1
            continue
        start = n
        while n < len(lines) and drop[n]:
            n += 1
        before_blank = start > 0 and not drop[start - 1] and lines[start - 1].strip() == ""
        after_blank = n == len(lines) or lines[n].strip() == ""
        if before_blank and after_blank:
            drop[start - 1] = True


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    servers = data.get("mcp_servers")
    if isinstance(servers, dict):
        servers.pop(SERVER, None)
        if not servers:
            del data["mcp_servers"]
    return data


def _servers(data: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise IntegrationError(f"{path}: mcp_servers is not a table; fix it, then try again")
    return servers


def _eol(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _stripped_checked(text: str, path: Path) -> tuple[dict[str, Any], str]:
    data = parse(text, path)
    servers = _servers(data, path)
    if SERVER in servers and not isinstance(servers[SERVER], dict):
        raise IntegrationError(f"{path}: mcp_servers.{SERVER} is not a table; fix it first")
    stripped = strip_server(text)
    after = _loads_or_none(stripped)
    if after is None or _without_ours(after) != _without_ours(data):
        raise IntegrationError(
            f"{path}: cannot take out [mcp_servers.{SERVER}] without touching other settings; "
            "edit that table by hand"
        )
    return after, stripped


def add(text: str, path: Path, command: str) -> str:
    after, stripped = _stripped_checked(text, path)
    if SERVER in _servers(after, path):
        raise IntegrationError(
            f"{path}: mcp_servers.{SERVER} is set with dotted keys or an inline table; make it "
            f"a [mcp_servers.{SERVER}] table or remove it, then install again"
        )
    eol = _eol(text)
    if stripped and not stripped.endswith("\n"):
        stripped += eol
    new = stripped + (eol if stripped.strip() else "") + block(command, eol)
    expected = _without_ours(after)
    expected.setdefault("mcp_servers", {})[SERVER] = entry(command)
    if _loads_or_none(new) != expected:
        raise IntegrationError(
            f"{path}: adding [mcp_servers.{SERVER}] here would not parse as intended (is "
            "mcp_servers an inline table or dotted keys?); make it a [mcp_servers] table"
        )
    return new


def remove(text: str, path: Path) -> str:
    """`text` without our table; a skillopt server set some other way is the user's, kept."""
    _stripped_checked(text, path)
    return strip_server(text)
