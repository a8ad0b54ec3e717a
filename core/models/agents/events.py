"""The event stream of a coding-agent run as trajectory messages (what the optimizer reads).

Both CLIs' JSON events (Claude Code's `stream-json`, Codex's `exec --json`) become
`{"role": ..., "content": ...}` messages: the agent's text ("assistant"), each tool call
("tool_call") and what it returned ("tool"). Bookkeeping events (init, usage, results)
are left out: usage and exit status travel separately. Long outputs are clipped.
"""

from __future__ import annotations

import json
from typing import Any

from core.models.types import Message

_CLIP = 800


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _CLIP else text[:_CLIP] + " …"


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text") or b.get("content") or "") for b in content if isinstance(b, dict)
        )
    return ""


def _claude(event: dict[str, Any]) -> list[Message]:
    message = event.get("message") or {}
    speaker = "assistant" if event.get("type") == "assistant" else "user"
    out: list[Message] = []
    for block in message.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            out.append({"role": speaker, "content": _clip(block["text"])})
        elif kind == "tool_use":
            call = f"{block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}"
            out.append({"role": "tool_call", "content": _clip(call)})
        elif kind == "tool_result":
            out.append({"role": "tool", "content": _clip(_block_text(block.get("content")))})
    return out


def _codex(item: dict[str, Any]) -> list[Message]:
    kind = item.get("type")
    if kind == "agent_message":
        return [{"role": "assistant", "content": _clip(str(item.get("text") or ""))}]
    if kind == "command_execution":
        result = f"exit {item.get('exit_code')}: {item.get('aggregated_output') or ''}"
        return [
            {"role": "tool_call", "content": _clip(f"$ {item.get('command')}")},
            {"role": "tool", "content": _clip(result)},
        ]
    if kind == "file_change":
        changes = ", ".join(
            f"{c.get('kind')} {c.get('path')}"
            for c in item.get("changes") or []
            if isinstance(c, dict)
        )
        return [{"role": "tool_call", "content": _clip(f"edit files: {changes}")}]
    return []


def summarize_events(events: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    for event in events:
        kind = event.get("type")
        if kind in ("assistant", "user"):
            out.extend(_claude(event))
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            out.extend(_codex(event["item"]))
    return out
