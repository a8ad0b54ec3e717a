"""The bounded tool loop: a chat model works in a workspace through WorkspaceTools until it
answers, runs out of turns or runs out of time.

The protocol is text, so that every backend `complete()` reaches can follow it (OpenAI- or
Anthropic-compatible servers, local servers, handoff): a reply holding one or more
`<tool>{"name": "read_file", "arguments": {"path": "app.py"}}</tool>` blocks (the shape of
an OpenAI tool call) runs those tools, and their results come back as the next user
message; a reply without a tool block is the final message. Bounds: `max_turns` model
replies, `time_limit_s` for the whole loop (each model call and shell command gets only what is
left),
MAX_CALLS_PER_TURN tool calls per reply, and tool calls nested or sized past what the
parser reads are refused as text.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from core.agent_loop.tools import WorkspaceTools
from core.models.types import Completion, Message

MAX_CALLS_PER_TURN = 8
MAX_CALL_DEPTH = 20
MAX_CALL_CHARS = 600_000
MAX_RESULT_CHARS = 20_000
_TOOL = re.compile(r"<tool>(.*?)(?:</tool>|$)", re.DOTALL)


@dataclass(frozen=True)
class LoopLimits:
    max_turns: int = 30
    time_limit_s: float = 600.0


@dataclass
class LoopOutcome:
    """What the loop did: the final message, every message exchanged, the tool calls with
    their results, the completions (for usage) and why it stopped: "answered", "turns"
    (the turn cap) or "time" (the time cap)."""

    final: str
    messages: list[Message]
    calls: list[dict[str, Any]] = field(default_factory=list)
    completions: list[Completion] = field(default_factory=list)
    stopped: str = "answered"


def protocol_text(tools: WorkspaceTools, *, shell_note: str = "") -> str:
    lines = [
        "You are working in a copy of the project. Use tools to look at and change it. To "
        "call tools, reply with one or more blocks, each exactly",
        '<tool>{"name": "TOOL", "arguments": {...}}</tool>',
        "Tools (all paths are relative to the project root):",
    ]
    lines += [f"- {s.name} {s.shape}: {s.about}" for s in tools.specs]
    if shell_note:
        lines.append(shell_note)
    lines.append(
        "The results come back in the next message. When the task is done, reply without "
        "any tool block: that reply is your final message to the user."
    )
    return "\n".join(lines)


def json_depth(text: str, limit: int) -> int:
    """How deep `text`'s brackets nest (outside strings), counted up to `limit` + 1: a call
    nested 100,000 deep would exhaust json's recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif char in "]}":
            depth -= 1
    return deepest


def parse_call(text: str) -> tuple[str, dict[str, Any]] | str:
    """(name, arguments) of one tool block, or an error text for the model. Accepts
    `{"name", "arguments"}` (arguments an object or a JSON string, as OpenAI sends them) and
    the flat `{"name", ...arguments}`."""
    text = text.strip()
    if len(text) > MAX_CALL_CHARS:
        return f"error: a tool call has at most {MAX_CALL_CHARS} characters"
    if json_depth(text, MAX_CALL_DEPTH) > MAX_CALL_DEPTH:
        return f"error: the tool call nests deeper than {MAX_CALL_DEPTH} levels"
    try:
        call = json.loads(text)
        if isinstance(call, dict) and isinstance(call.get("arguments"), str):
            call["arguments"] = json.loads(call["arguments"])
    except json.JSONDecodeError as exc:
        return f"error: the tool call is not JSON ({exc.msg}); use the shape shown"
    except (ValueError, RecursionError):
        return "error: the tool call could not be read; use the shape shown"
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return 'error: a tool call is a JSON object with a "name"'
    name = call.pop("name")
    args = call.pop("arguments", call)
    if not isinstance(args, dict):
        return 'error: "arguments" must be a JSON object'
    return name, args


def tool_calls(reply: str) -> list[str]:
    return _TOOL.findall(reply)


async def run_tool_loop(
    complete,
    tools: WorkspaceTools,
    *,
    system: str,
    task: str,
    limits: LoopLimits = LoopLimits(),
) -> LoopOutcome:
    """Run the task. `complete(messages) -> Completion` is a bound chat client; model errors
    propagate (the caller decides what a failed rollout is)."""
    messages: list[Message] = []
    if system.strip():
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": task})
    outcome = LoopOutcome(final="", messages=messages)
    deadline = time.monotonic() + limits.time_limit_s
    tools.deadline = deadline  # a shell command stops at the loop's time cap too
    for _turn in range(limits.max_turns):
        left = deadline - time.monotonic()
        if left <= 0:
            outcome.stopped = "time"
            return outcome
        try:
            completion = await asyncio.wait_for(complete(list(messages)), timeout=left)
        except TimeoutError:
            outcome.stopped = "time"
            return outcome
        outcome.completions.append(completion)
        messages.append({"role": "assistant", "content": completion.text})
        blocks = tool_calls(completion.text)
        if not blocks:
            outcome.final = completion.text.strip()
            return outcome
        results = []
        for index, block in enumerate(blocks):
            if index == MAX_CALLS_PER_TURN:
                results.append(f"[only {MAX_CALLS_PER_TURN} tool calls run per reply]")
                break
            call = parse_call(block)
            if isinstance(call, str):
                result, record = call, {"error": call}
            else:
                # A tool call can take seconds (grep's limit, a shell): off the event loop.
                result = await asyncio.to_thread(tools.call, *call)
                record = {"name": call[0], "arguments": call[1]}
            result = result[:MAX_RESULT_CHARS]
            outcome.calls.append({**record, "result": result})
            results.append(f"[{record.get('name', 'error')}]\n{result}")
        messages.append({"role": "user", "content": "Tool results:\n" + "\n\n".join(results)})
    outcome.stopped = "turns"
    return outcome
