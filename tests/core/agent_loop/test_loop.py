"""The bounded tool loop, driven by a scripted chat double (named as such): tool blocks run,
results come back, a reply without a block ends it; the turn and time caps stop it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from core.agent_loop.loop import LoopLimits, parse_call, protocol_text, run_tool_loop
from core.agent_loop.tools import SHELL_TIMEOUT_S, WorkspaceTools
from core.models.types import Completion, Usage


def reply(text: str) -> Completion:
    return Completion(text=text, usage=Usage(3, 2), finish_reason="stop", latency_s=0.0, model="m")


def call(name: str, **arguments) -> str:
    return "<tool>" + json.dumps({"name": name, "arguments": arguments}) + "</tool>"


class ScriptedChat:
    """A test double for a bound chat client: answers from a list, records what it saw."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.seen: list[list[dict]] = []

    async def __call__(self, messages):
        self.seen.append(messages)
        return reply(self.texts.pop(0))


def workspace(tmp_path: Path) -> WorkspaceTools:
    (tmp_path / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    return WorkspaceTools(tmp_path)


def test_reads_edits_and_answers(tmp_path: Path):
    tools = workspace(tmp_path)
    chat = ScriptedChat(
        "Looking.\n" + call("read_file", path="app.py") + call("list_dir", path="."),
        call("edit_file", path="app.py", old="sum(xs)", new="sum(xs or [])"),
        "Done: total() now accepts None.",
    )
    outcome = asyncio.run(run_tool_loop(chat, tools, system="the skill", task="fix total()"))
    assert outcome.stopped == "answered"
    assert outcome.final == "Done: total() now accepts None."
    assert [c["name"] for c in outcome.calls] == ["read_file", "list_dir", "edit_file"]
    assert "sum(xs or [])" in (tmp_path / "app.py").read_text()
    second_request = chat.seen[1]
    assert second_request[0] == {"role": "system", "content": "the skill"}
    assert "2:     return sum(xs)" in second_request[-1]["content"]
    assert len(outcome.completions) == 3


def test_turn_cap_stops_a_model_that_never_answers(tmp_path: Path):
    tools = workspace(tmp_path)
    chat = ScriptedChat(*[call("list_dir")] * 10)
    outcome = asyncio.run(
        run_tool_loop(chat, tools, system="", task="t", limits=LoopLimits(max_turns=3))
    )
    assert outcome.stopped == "turns"
    assert outcome.final == ""
    assert len(chat.seen) == 3


def test_time_cap_stops_a_model_that_hangs(tmp_path: Path):
    tools = workspace(tmp_path)

    async def hangs(messages):
        await asyncio.Event().wait()

    limits = LoopLimits(max_turns=5, time_limit_s=0.05)
    outcome = asyncio.run(run_tool_loop(hangs, tools, system="", task="t", limits=limits))
    assert outcome.stopped == "time"


def test_malformed_and_unknown_calls_become_messages(tmp_path: Path):
    tools = workspace(tmp_path)
    deep = "<tool>" + "[" * 50_000 + "</tool>"
    chat = ScriptedChat(
        "<tool>{not json</tool>" + deep + call("rm_rf", path="."),
        "ok",
    )
    outcome = asyncio.run(run_tool_loop(chat, tools, system="", task="t"))
    results = [c["result"] for c in outcome.calls]
    assert results[0].startswith("error: the tool call is not JSON")
    assert results[1].startswith("error: the tool call nests deeper")
    assert results[2].startswith("error: unknown tool 'rm_rf'")
    assert outcome.final == "ok"


def test_call_shapes():
    assert parse_call('{"name": "glob", "arguments": "{\\"pattern\\": \\"*\\"}"}') == (
        "glob",
        {"pattern": "*"},
    )
    assert parse_call('{"name": "glob", "pattern": "*"}') == ("glob", {"pattern": "*"})
    assert parse_call('{"name": "glob", "arguments": [1]}').startswith("error:")


def test_protocol_names_the_shell_only_when_offered(tmp_path: Path):
    without = protocol_text(WorkspaceTools(tmp_path), shell_note="No shell here.")
    assert "- shell" not in without and "No shell here." in without
    with_shell = protocol_text(WorkspaceTools(tmp_path, shell=lambda c, t: "out"))
    assert "- shell" in with_shell


def test_a_shell_command_gets_no_more_than_the_time_left(tmp_path: Path):
    timeouts: list[float] = []

    def shell(command: str, timeout_s: float) -> str:
        timeouts.append(timeout_s)
        return "[exit status 0]"

    tools = WorkspaceTools(tmp_path, shell=shell)
    chat = ScriptedChat(call("shell", command="make test"), "ok")
    limits = LoopLimits(time_limit_s=30.0)
    asyncio.run(run_tool_loop(chat, tools, system="", task="t", limits=limits))
    assert len(timeouts) == 1 and 0 < timeouts[0] <= 30.0 < SHELL_TIMEOUT_S
    tools.deadline = time.monotonic() - 1
    assert tools.call("shell", {"command": "make test"}) == (
        "refused: the replay's time is up: no more commands"
    )
    assert len(timeouts) == 1
