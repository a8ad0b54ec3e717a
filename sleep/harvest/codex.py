"""The user tasks in a Codex rollout (formats spec §2).

Codex records a typed prompt twice: as a `response_item` user message (what the model
sees, beside injected context) and as an event (`event_msg` `user_message`, or
`item_completed` with a `UserMessage` in paginated mode and in `codex exec` 0.169). The
event is the reliable record, so once a file has shown one, response items never count;
files from before events existed (the bare legacy form) fall back to the response items.
Injected context (environment, AGENTS.md, permissions, skills, the compaction summary) is
never a task. A `turn_aborted` flags its turn's prompt `aborted`, and `interrupted`
unless its reason is `review_ended`.

Sub-agent and review threads hold no user tasks. A fork starts by replaying its parent's
history: records before `subagent_history_start_ordinal`, records after a second,
foreign `session_meta` until the next turn starts, and leading prompts that the parent
thread already delivered are not counted again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import codex_item
from sleep.harvest.skills_used import codex_arguments, codex_injected

INJECTED_PREFIXES = (
    "<user_instructions>",
    "<environment_context>",
    "# AGENTS.md instructions for ",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<personality_spec>",
    "<skill>",
    "<codex_internal_context",
    "<goal_context>",
    "<turn_aborted>",
    "<user_shell_command>",
    "Another language model started to solve this problem",
)
IDE_REQUEST_MARKER = "## My request for Codex:"
AUTOMATION_ORIGINATORS = ("codex_exec",)
AUTOMATION_SOURCES = ("exec", "mcp")
_OUTER_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_CWD_IN_CONTEXT = re.compile(r"<cwd>([^<]+)</cwd>")


def _normalise(record: dict) -> tuple[str, dict, str | None] | None:
    """(outer type, payload, timestamp) for the envelope and for the bare legacy form."""
    payload = record.get("payload")
    kind = record.get("type")
    if isinstance(payload, dict) and isinstance(kind, str):
        stamp = record.get("timestamp")
        return kind, payload, stamp if isinstance(stamp, str) else None
    if "record_type" in record:
        return None  # legacy {"record_type": "state"}
    if kind is None and "id" in record:
        return "session_meta", record, None  # legacy header
    if isinstance(kind, str):
        return "response_item", record, None  # legacy bare response item
    return None


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        b["text"]
        for b in content
        if isinstance(b, dict)
        and b.get("type") in ("input_text", "text", "Text")
        and isinstance(b.get("text"), str)
    )


def _prompt_text(text: str) -> str | None:
    text = clean_text(text)
    if IDE_REQUEST_MARKER in text:
        text = text.split(IDE_REQUEST_MARKER, 1)[1]
    text = text.strip()
    if not text or text.startswith(INJECTED_PREFIXES):
        return None
    return text


def _is_subagent(meta: dict) -> bool:
    source = meta.get("source")
    return (
        (isinstance(source, dict) and "subagent" in source)
        or meta.get("thread_source") == "subagent"
        or bool(meta.get("parent_thread_id"))
    )


class CodexTaskReader:
    """Feed it the records of one rollout in order, then call `finish()`; `tasks` holds
    the new prompts. `key_of` turns a prompt into the short key kept between runs (the
    caller hashes the redacted text, so no raw prompt is ever stored)."""

    def __init__(
        self,
        identity: SessionIdentity,
        key_of: Callable[[str], str],
        parent_prompt_keys: Callable[[str], set[str]],
    ) -> None:
        self.identity = identity
        self.key_of = key_of
        self.parent_prompt_keys = parent_prompt_keys
        self.tasks: list[Task] = []
        self.abandoned = 0
        self._fallback: list[Task] = []
        self._turn_prompts: dict[str, str] = {}
        self._session_start: str | None = None
        c = identity.carry
        c.setdefault("events", False)
        c.setdefault("replaying", False)
        c.setdefault("fallback_keys", [])

    # -- identity -------------------------------------------------------------------

    def _session_meta(self, meta: dict, stamp: str | None) -> None:
        ident, carry = self.identity, self.identity.carry
        meta_id = clean_text(meta["id"]) if isinstance(meta.get("id"), str) else None
        if ident.session_id is not None:
            if meta_id and meta_id != ident.session_id:
                carry["replaying"] = True  # a parent's history copied into this file
            return
        ident.session_id = meta_id
        if isinstance(meta.get("cwd"), str) and meta["cwd"]:
            ident.cwd = clean_text(meta["cwd"])
        git = meta.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
            ident.branch = clean_text(git["branch"])
        commit = git.get("commit_hash") if isinstance(git, dict) else None
        if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit):
            ident.commit = commit
        if meta.get("originator") in AUTOMATION_ORIGINATORS or meta.get("source") in (
            AUTOMATION_SOURCES
        ):
            ident.automation = True
        if _is_subagent(meta):
            ident.not_a_root = "subagent"
        fork_of = meta.get("forked_from_id")
        if isinstance(fork_of, str) and fork_of:
            carry["fork_of"] = fork_of
            carry["fork_prefix"] = True
        start = meta.get("subagent_history_start_ordinal")
        if isinstance(start, int):
            carry["own_from_ordinal"] = start
        self._session_start = stamp or (meta.get("timestamp") if meta.get("timestamp") else None)

    # -- records ----------------------------------------------------------------------

    def feed(self, record: dict) -> None:
        normal = _normalise(record)
        if normal is None:
            return
        kind, payload, stamp = normal
        if kind not in _OUTER_TYPES:
            return
        carry = self.identity.carry
        if kind == "session_meta":
            self._session_meta(payload, stamp)
            return
        own_from = carry.get("own_from_ordinal")
        ordinal = record.get("ordinal")
        if isinstance(own_from, int) and isinstance(ordinal, int) and ordinal < own_from:
            return
        if kind == "turn_context":
            if not self.identity.cwd and isinstance(payload.get("cwd"), str):
                self.identity.cwd = clean_text(payload["cwd"]) or None
        elif kind == "response_item":
            self._response_item(payload, stamp)
        elif kind == "event_msg":
            self._event(payload, stamp)

    def _answering(self) -> Task | None:
        """The prompt the assistant's records now answer (None while replaying a parent)."""
        if self.identity.carry["replaying"]:
            return None
        if not self.identity.carry["events"] and self._fallback:
            return self._fallback[-1]
        return self.tasks[-1] if self.tasks else None

    def _response_item(self, item: dict, stamp: str | None) -> None:
        if item.get("type") != "message" or item.get("role") != "user":
            task = self._answering()
            if task is not None:
                codex_item(task, item)
            self._note_skills(item)
            return
        raw = _content_text(item.get("content"))
        if not self.identity.carry["replaying"]:
            codex_injected(self.identity, raw)
        if not self.identity.cwd and raw.lstrip().startswith("<environment_context>"):
            found = _CWD_IN_CONTEXT.search(raw)
            if found:
                self.identity.cwd = clean_text(found.group(1).strip())
        text = _prompt_text(raw)
        if text is None or self.identity.carry["replaying"]:
            return
        if self.identity.carry["events"]:
            return  # this file records prompts as events: the response item is the copy
        self._fallback.append(Task(text, stamp or self._session_start))

    def _note_skills(self, item: dict) -> None:
        """The skill and instruction files a tool call of the session read."""
        if self.identity.carry["replaying"]:
            return
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call"):
            codex_arguments(self.identity, item.get("arguments", item.get("input")))
        elif kind == "local_shell_call" and isinstance(item.get("action"), dict):
            codex_arguments(self.identity, item["action"])

    def _event(self, event: dict, stamp: str | None) -> None:
        etype = event.get("type")
        carry = self.identity.carry
        if etype in ("task_started", "turn_started"):
            carry["replaying"] = False
            self._turn_prompts = {}
        elif etype == "user_message":
            self._event_prompt(_content_text(event.get("message")), "user_message", stamp)
        elif etype == "item_completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "UserMessage":
                self._event_prompt(_content_text(item.get("content")), "item_completed", stamp)
        elif etype in ("agent_message", "patch_apply_end"):
            task = self._answering()
            if task is not None:
                codex_item(task, event)
        elif etype == "turn_aborted":
            target = self.tasks or self._fallback
            if target:
                target[-1].aborted = True
                # interrupted (Esc) or replaced (the person sent another prompt mid-turn)
                # is the person stopping it; a review's end is not
                target[-1].interrupted = event.get("reason") != "review_ended"
        elif etype == "thread_rolled_back":
            n = event.get("num_turns")
            if isinstance(n, int) and n > 0:
                del self.tasks[max(0, len(self.tasks) - n) :]

    def _event_prompt(self, raw: str, kind: str, stamp: str | None) -> None:
        carry = self.identity.carry
        text = _prompt_text(raw)
        if text is None or carry["replaying"]:
            return
        key = self.key_of(text)
        first_event = not carry["events"]
        carry["events"] = True
        if first_event:
            self._fallback = []
            if key in carry["fallback_keys"]:
                return  # delivered from the response item by an earlier read
        if self._turn_prompts.get(key, kind) != kind:
            return  # the same prompt, recorded by the other event kind
        self._turn_prompts[key] = kind
        if carry.get("fork_prefix"):
            parent = carry.get("fork_of")
            if parent and key in self.parent_prompt_keys(parent):
                return
            carry["fork_prefix"] = False
        self.tasks.append(Task(text, stamp))

    def finish(self) -> None:
        """Files without prompt events deliver their response-item prompts."""
        carry = self.identity.carry
        if not carry["events"] and self._fallback:
            if carry.get("fork_prefix") and carry.get("fork_of"):
                parent_keys = self.parent_prompt_keys(carry["fork_of"])
                while self._fallback and self.key_of(self._fallback[0].text) in parent_keys:
                    self._fallback.pop(0)
                carry["fork_prefix"] = False
            self.tasks.extend(self._fallback)
            carry["fallback_keys"] = (
                carry["fallback_keys"] + [self.key_of(t.text) for t in self._fallback]
            )[-50:]
        self._fallback = []
        if self.identity.not_a_root:
            self.tasks = []
