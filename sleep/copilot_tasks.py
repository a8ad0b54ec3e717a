"""The user tasks in a Copilot CLI session log (`~/.copilot/session-state/<id>/events.jsonl`).

Each line is an event `{type, data, id, timestamp, parentId}`. `session.start` names the
session and its `context.cwd`; `user.message` is a prompt (`data.content` is what was
typed, `transformedContent` what the model saw with injected context); `assistant.message`
and `tool.execution_start` are the answer. A `session.error` before the prompt was
answered (a failed call), or an abort event, marks the prompt `aborted`; an abort also
marks it `interrupted`. Print mode
(`copilot -p`) sends a system message saying it runs in non-interactive mode (1.0.102):
that session is automation. The log is append-only, so it is read from its cursor.
"""

from __future__ import annotations

from sleep.identity import SessionIdentity
from sleep.jsonl import clean_text
from sleep.model import Task
from sleep.session_evidence import claude_assistant

WHOLE_FILE = False
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
                "name": data.get("toolName"),
                "input": data.get("arguments"),
            }
            claude_assistant(self.tasks[-1], [block])
        elif ((kind == "session.error" and not self._answered) or "abort" in kind) and self.tasks:
            self.tasks[-1].aborted = True
            if "abort" in kind:  # the person stopped the turn
                self.tasks[-1].interrupted = True

    def finish(self) -> None:
        self.identity.carry["answered"] = self._answered
