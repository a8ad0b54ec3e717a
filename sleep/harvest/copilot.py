"""The user tasks in a Copilot CLI session log (`~/.copilot/session-state/<id>/events.jsonl`).

Each line is an event `{type, data, id, timestamp, parentId}`. `session.start` names the
session and its `context.cwd`; `user.message` is a prompt (`data.content` is what was
typed, `transformedContent` what the model saw with injected context); `assistant.message`
and `tool.execution_start` are the answer. A `session.error` before the prompt was
answered (a failed call), or an abort event, marks the prompt `aborted`; an abort also
marks it `interrupted`. Print mode
(`copilot -p`) sends a system message saying it runs in non-interactive mode (1.0.102):
that session is automation. The log is append-only, so it is read from its cursor.

Sub-agents write into the same log (`subagent.started` … `subagent.completed` / `failed`):
an event of a sub-agent names it by a non-empty `agentId` (on the event or in `data`) or
`data.parentToolCallId` — how Copilot CLI 1.0.102 itself tells them apart when it reads
the log back (its bundled cli-main.js). A sub-agent's `user.message` is the prompt the
parent agent wrote, never the person's; its assistant text is not the answer the person
saw; its tool calls belong to the person's turn that started it.

The file edits of `edit` / `create` / `str_replace_editor` / `apply_patch` calls are kept
for a follow-up (sleep/harvest/edit_tools.py), except a call whose `tool.execution_complete` says
`success: false` (copilot's `create` fails on a missing folder, its `edit` on old text it
cannot find). The store's `turns` table has no tool calls: a session read from it has none.
"""

from __future__ import annotations

from sleep.harvest.edit_tools import copilot_edits
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import claude_assistant, failed_call

WHOLE_FILE = False


def sub_agent_of(record: dict, data: dict) -> str | None:
    """The sub-agent an event belongs to (None: the person's own conversation)."""
    for value in (record.get("agentId"), data.get("agentId"), data.get("parentToolCallId")):
        if isinstance(value, str) and value:
            return value
    return None


PRINT_MODE_MARK = "running in non-interactive mode"


class CopilotTaskReader:
    def __init__(self, identity: SessionIdentity) -> None:
        self.identity = identity
        self.tasks: list[Task] = []
        self.abandoned = 0
        self._answered = identity.carry.get("answered", True)

    def feed(self, record: dict) -> None:
        kind, data = record.get("type"), record.get("data")
        if not isinstance(kind, str) or not isinstance(data, dict):
            return
        ident = self.identity
        if sub_agent_of(record, data) is not None and not kind.startswith("tool.execution_"):
            return  # its prompts and replies are the agents' own (see the module doc)
        if kind == "session.start":
            if isinstance(data.get("sessionId"), str):
                ident.session_id = clean_text(data["sessionId"])
            context = data.get("context")
            if isinstance(context, dict):
                if isinstance(context.get("cwd"), str) and context["cwd"]:
                    ident.cwd = clean_text(context["cwd"])
                if isinstance(context.get("branch"), str) and context["branch"]:
                    ident.branch = clean_text(context["branch"])
        elif kind == "system.message":
            if PRINT_MODE_MARK in str(data.get("content", "")):
                ident.automation = True
        elif kind == "user.message":
            text = data.get("content")
            if not isinstance(text, str) or not text.strip():
                return
            if data.get("source") not in (None, "user"):
                return  # a message the agent or a hook sent, not typed
            stamp = record.get("timestamp")
            self.tasks.append(
                Task(clean_text(text).strip(), stamp if isinstance(stamp, str) else None)
            )
            self._answered = False
        elif kind == "assistant.message" and self.tasks:
            # Its toolRequests are noted from tool.execution_start (once each).
            claude_assistant(self.tasks[-1], [{"type": "text", "text": data.get("content") or ""}])
            self._answered = True
        elif kind == "tool.execution_start" and self.tasks:
            block = {
                "type": "tool_use",
                "id": data.get("toolCallId"),
                "name": data.get("toolName"),
                "input": data.get("arguments"),
            }
            claude_assistant(self.tasks[-1], [block], copilot_edits)
        elif kind == "tool.execution_complete" and self.tasks and data.get("success") is False:
            failed_call(self.tasks[-1], data.get("toolCallId"))  # it changed nothing
        elif ((kind == "session.error" and not self._answered) or "abort" in kind) and self.tasks:
            self.tasks[-1].aborted = True
            if "abort" in kind:  # the person stopped the turn
                self.tasks[-1].interrupted = True

    def finish(self) -> None:
        self.identity.carry["answered"] = self._answered
