"""The user tasks in a pi session file (`~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl`).

Versions 2 and 3 are trees: every entry has an `id` and a `parentId`, and going back in
the session (`/tree`, editing an earlier prompt) starts a new branch from an older entry.
The active branch runs from the last entry written back to the root; only its prompts are
what the person ended up asking. Prompts on other branches are counted as `abandoned`,
never delivered. Version 1 files (no ids) are one line of entries in file order.

Because a later append can move the active branch onto older entries, the file is read
whole each time it changes (`WHOLE_FILE`); the ids of prompts already delivered are
carried with the cursor so a second harvest hands out only what is new.
A failed call (`stopReason: "error"`) or an interrupted one (`"aborted"`) marks its
prompt `aborted`. The file edits of its `edit` / `write` calls are kept for a follow-up
(sleep/harvest/edit_tools.py), except those whose `toolResult` says `isError`.

pi 0.73.1 writes print-mode (`pi -p`, or stdin not a terminal) sessions exactly like
typed ones, so only the sessions our own backends started are known automation. Checked
in its dist/: main.js makes the SessionManager the same way for every mode (`create`, or
`continueRecent` with `-c`; only `--no-session` keeps it in memory, and then no file is
written); the header (`newSession`: type, version, id, timestamp, cwd, parentSession) and
the file name (`<time>_<id>.jsonl`) carry no mode; print-mode.js appends no entry of its
own, and the entries both modes write (model_change, thinking_level_change, messages) come
from agent-session.js alike; the interactive editor's history is kept in memory, not in a
file. The real fixtures agree: the print-mode file's entries have the typed one's keys.
How soon the first prompt follows the header is no signal either: `pi "prompt"` starts an
interactive session with it at once.
"""

from __future__ import annotations

from typing import Any

from sleep.harvest.edit_tools import pi_edits
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import claude_assistant, failed_call

WHOLE_FILE = True
_FAILED = ("error", "aborted")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _as_claude_blocks(content: Any) -> list[dict]:
    """pi's assistant blocks in the shape session_evidence reads (`toolCall` → tool_use)."""
    out = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(b)
        elif b.get("type") == "toolCall":
            out.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name"),
                        "input": b.get("arguments")})  # fmt: skip
    return out


class PiTaskReader:
    def __init__(self, identity: SessionIdentity) -> None:
        self.identity = identity
        self.tasks: list[Task] = []
        self.abandoned = 0
        self._entries: dict[str, dict] = {}
        self._order: list[str] = []
        self._leaf: str | None = None
        identity.carry.setdefault("delivered", [])

    def feed(self, record: dict) -> None:
        kind = record.get("type")
        if kind == "session":
            ident = self.identity
            if isinstance(record.get("id"), str):
                ident.session_id = clean_text(record["id"])
            if isinstance(record.get("cwd"), str) and record["cwd"]:
                ident.cwd = clean_text(record["cwd"])
            return
        entry_id = record.get("id")
        if not isinstance(entry_id, str):
            entry_id = f"#{len(self._order)}"  # version 1: no ids, file order is the branch
            record = {**record, "parentId": self._leaf}
        if entry_id not in self._entries:
            self._order.append(entry_id)
        self._entries[entry_id] = record
        self._leaf = entry_id

    def _branch(self) -> list[str]:
        path, seen, at = [], set(), self._leaf
        while at is not None and at in self._entries and at not in seen:
            seen.add(at)
            path.append(at)
            parent = self._entries[at].get("parentId")
            at = parent if isinstance(parent, str) else None
        return path[::-1]

    def finish(self) -> None:
        on_branch = self._branch()
        active = set(on_branch)
        delivered = set(self.identity.carry["delivered"])
        for entry_id in self._order:
            message = self._entries[entry_id].get("message")
            is_prompt = (
                entry_id not in active
                and isinstance(message, dict)
                and message.get("role") == "user"
                and _text(message.get("content")).strip()
            )
            if is_prompt and entry_id not in delivered:
                self.abandoned += 1
        current: Task | None = None
        new_ids = []
        for entry_id in on_branch:
            record = self._entries[entry_id]
            message = record.get("message")
            if record.get("type") != "message" or not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "user":
                text = clean_text(_text(message.get("content"))).strip()
                if not text:
                    continue
                if entry_id in delivered:
                    current = None
                    continue
                stamp = record.get("timestamp")
                current = Task(text, stamp if isinstance(stamp, str) else None)
                self.tasks.append(current)
                new_ids.append(entry_id)
            elif role == "assistant" and current is not None:
                claude_assistant(current, _as_claude_blocks(message.get("content")), pi_edits)
                if message.get("stopReason") in _FAILED:
                    current.aborted = True
                if message.get("stopReason") == "aborted":  # the person pressed Escape
                    current.interrupted = True
            elif role == "toolResult" and current is not None and message.get("isError"):
                failed_call(current, message.get("toolCallId"))  # it changed nothing
        self.identity.carry["delivered"] = [*self.identity.carry["delivered"], *new_ids]
