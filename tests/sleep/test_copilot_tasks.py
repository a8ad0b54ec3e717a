"""Copilot CLI sessions: the events.jsonl logs the real copilot 1.0.102 wrote
(make_copilot.py): typed prompts (a tool call, a turn handed to a sub-agent, a failed call),
a resumed session, print mode marked."""

from __future__ import annotations

import json

from tests.sleep.more_agents import PROJECT, SECRET, expected, home_with, redacted, run, texts

TYPED = expected("copilot")["typed"]
TYPED_ID = "49fc5aa7-3243-4eb7-a39b-72955d411e3e"  # the interactive session make_copilot.py ran
SUB_AGENT_PROMPT = expected("copilot")["sub_agent_prompt"]


def test_real_logs_give_the_typed_prompts_and_mark_print_mode(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "copilot"))
    assert texts(result, "copilot") == [
        [redacted(TYPED[0]), *TYPED[1:]],
        expected("copilot")["printed"],
    ]
    typed, printed = result.sessions
    assert (typed.automation, printed.automation) == (False, True)
    assert typed.cwd == PROJECT and typed.session_id == TYPED_ID
    assert [t.aborted for t in typed.tasks] == [False, False, False, True, False]
    assert typed.tasks[1].commands == ["ls"]


def test_a_real_sub_agent_s_prompt_is_not_a_task_and_its_tool_calls_belong_to_the_turn(tmp_path):
    """The real log of a turn the model handed to a sub-agent (Copilot's `task` tool): the
    sub-agent's prompt and replies (events with `agentId`, its prompt also with source
    `agent-<session id>`) are not the person's; its `bash` call counts for the turn that
    started it, and the answer is the one the person saw."""
    result = run(tmp_path, home_with(tmp_path, "copilot"))
    delegated = result.sessions[0].tasks[2]
    assert delegated.text == "Delegate the search for TODO comments."
    assert delegated.tools == ["task", "bash"]
    assert delegated.commands == ["grep -n TODO notes.py || true"]
    assert delegated.answer == "Done: the sub-agent reported."
    assert SUB_AGENT_PROMPT not in json.dumps(result.to_json())
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written


def test_print_mode_is_left_out_unless_asked(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "copilot"), automation=False)
    assert texts(result, "copilot") == [[redacted(TYPED[0]), *TYPED[1:]]]
    assert result.left_out["automation"] == 1


def test_a_second_harvest_reads_from_the_cursor(tmp_path):
    home = home_with(tmp_path, "copilot")
    run(tmp_path, home)
    assert run(tmp_path, home).sessions == []
    log = home / ".copilot" / "session-state" / TYPED_ID / "events.jsonl"
    event = {"type": "user.message", "data": {"content": "And the README too."},
             "timestamp": "2026-12-02T03:00:00Z"}  # fmt: skip
    with log.open("a") as f:
        f.write(json.dumps(event) + "\n")
    again = run(tmp_path, home)
    assert texts(again, "copilot") == [["And the README too."]]
    assert again.sessions[0].cwd == PROJECT  # the identity travels with the cursor


def test_no_planted_secret_in_the_state_or_the_output(tmp_path):
    result = run(tmp_path, home_with(tmp_path, "copilot"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written
    assert SECRET not in json.dumps(result.to_json(show_redactions=True))


def test_a_session_whose_log_is_gone_is_read_from_session_store_db(tmp_path):
    """The store the real copilot wrote keeps each of the person's turns: with the typed
    session's events.jsonl deleted, its prompts come from `turns` (the failed one, with no
    reply, aborted), once; the store is opened read-only and left as it was. The sub-agent
    the third turn started has no row there (its prompt is no task) and the turn's reply is
    the main agent's; no table names a tool, so these tasks carry none (docs: sources)."""
    home = home_with(tmp_path, "copilot")
    log = home / ".copilot" / "session-state" / TYPED_ID
    (log / "events.jsonl").unlink()
    db = home / ".copilot" / "session-store.db"
    before = db.read_bytes()
    result = run(tmp_path, home)
    assert texts(result, "copilot") == [
        [redacted(TYPED[0]), *TYPED[1:]],
        expected("copilot")["printed"],
    ]
    from_db = next(s for s in result.sessions if s.file.endswith("::" + TYPED_ID))
    assert [t.aborted for t in from_db.tasks] == [False, False, False, True, False]
    assert from_db.cwd == PROJECT and from_db.tasks[0].answer.startswith("Reply to: Explain")
    assert from_db.tasks[2].answer == "Done: the sub-agent reported."
    assert [t.tools for t in from_db.tasks] == [[]] * 5
    assert SUB_AGENT_PROMPT not in json.dumps(result.to_json())
    assert db.read_bytes() == before and sorted(
        p.name for p in db.parent.glob("session-store*")
    ) == ["session-store.db"]
    assert run(tmp_path, home).sessions == []
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert SECRET.encode() not in written


def test_a_sub_agents_prompts_are_not_tasks_and_its_tool_calls_belong_to_the_turn():
    """Sub-agent events, marked as Copilot CLI 1.0.102 marks them (an `agentId` on the
    event or in `data`, or `data.parentToolCallId`): its prompt is not the person's, its
    reply is not the answer they saw, its tool calls count for the person's turn (fails
    on the old code: the sub-agent's prompt became a task and took the tool calls)."""
    from sleep.harvest.copilot import CopilotTaskReader
    from sleep.harvest.identity import SessionIdentity

    def event(kind, data, **top):
        return {"type": kind, "data": data, "id": kind, "timestamp": "2026-12-02T02:40:00Z", **top}

    reader = CopilotTaskReader(SessionIdentity())
    for record in [
        event("user.message", {"content": "Find every TODO and summarise them.", "source": "user",
                               "parentAgentTaskId": "t-1"}),
        event("tool.execution_start", {"toolName": "task", "toolCallId": "call-1",
                                       "arguments": {"prompt": "grep TODO"}}),
        event("subagent.started", {"toolCallId": "call-1", "agentName": "explore"},
              agentId="sub-1"),
        event("user.message", {"content": "Search the repository for TODO comments.",
                               "parentToolCallId": "call-1"}, agentId="sub-1"),
        event("tool.execution_start", {"toolName": "bash", "arguments": {"command": "grep -rn TODO ."},
                                       "parentToolCallId": "call-1"}),
        event("assistant.message", {"content": "3 TODOs in notes.py", "agentId": "sub-1"}),
        event("session.error", {"message": "sub-agent hiccup", "parentToolCallId": "call-1"}),
        event("subagent.completed", {"toolCallId": "call-1"}, agentId="sub-1"),
        event("assistant.message", {"content": "There are three TODOs, all in notes.py."}),
    ]:  # fmt: skip
        reader.feed(record)
    [task] = reader.tasks
    assert task.text == "Find every TODO and summarise them."
    assert task.tools == ["task", "bash"] and task.commands == ["grep -rn TODO ."]
    assert task.answer == "There are three TODOs, all in notes.py." and not task.aborted
