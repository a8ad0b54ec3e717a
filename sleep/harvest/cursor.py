"""The user tasks in a Cursor agent transcript
(`~/.cursor/projects/<slug>/agent-transcripts/<session>/*.jsonl`; no binary runs here,
so this follows the documented format in ../shared/formats/more-agents.md).

Records carry `role` (or `message.role`) and `message.content` with `text` and `tool_use`
blocks; the person's words may be wrapped in `<user_query>…</user_query>`, beside other
injected tags that are not theirs. `{"type": "turn_ended", "status": "error"}` marks the
turn's prompt `aborted`. There are no timestamps: the harvest dates the prompts with the
file's modification time. The project comes from `.workspace-trusted` (the slug loses
information), given to the reader by the scan. The file edits of `StrReplace` / `Write` /
`ApplyPatch` calls are kept for a follow-up (sleep/harvest/edit_tools.py); the transcript records
no tool results, so a call that failed is kept too, and skipped, noted, when it does not
apply.
"""

from __future__ import annotations

import re
from typing import Any

from sleep.harvest.edit_tools import cursor_edits
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import claude_assistant

WHOLE_FILE = False
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.DOTALL)
_TAG = re.compile(r"^\s*<([a-z_]+)>.*?</\1>\s*", re.DOTALL)


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def prompt_text(raw: str) -> str:
    """The person's words: the `<user_query>` bodies when there are any, else the text
    with leading injected `<tag>…</tag>` sections removed."""
    queries = _QUERY.findall(raw)
    if queries:
        return "\n".join(q.strip() for q in queries).strip()
    text = raw
    while True:
        stripped = _TAG.sub("", text, count=1)
        if stripped == text:
            return text.strip()
        text = stripped


class CursorTaskReader:
    def __init__(self, identity: SessionIdentity, stamp: str | None) -> None:
        self.identity = identity
        self.tasks: list[Task] = []
        self.abandoned = 0
        self._stamp = stamp

    def feed(self, record: dict) -> None:
        if record.get("type") == "turn_ended":
            if record.get("status") == "error" and self.tasks:
                self.tasks[-1].aborted = True
            return
        message = record.get("message")
        message = message if isinstance(message, dict) else {}
        role = record.get("role") or message.get("role")
        blocks = _blocks(message.get("content", record.get("content")))
        if role == "user":
            raw = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
            text = prompt_text(clean_text(raw))
            if text:
                self.tasks.append(Task(text, self._stamp))
        elif role == "assistant" and self.tasks:
            claude_assistant(self.tasks[-1], blocks, cursor_edits)

    def finish(self) -> None:
        pass
