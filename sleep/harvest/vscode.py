"""The user tasks in a VS Code Copilot Chat session
(`<user dir>/User/workspaceStorage/<hash>/chatSessions/*.jsonl`; the editor does not run
here, so this follows the documented format in ../shared/formats/more-agents.md).

The file is an operation log replayed into one JSON object: `kind 0` sets the whole state
`v`; `kind 1` sets the value at path `k`; `kind 2` extends the array at `k` with `v`
(truncating it at index `i` first when given); `kind 3` deletes at `k`. The session has
`sessionId` and `requests[]`; a person's request has `message.text`, a Copilot Chat
`agent.extensionId` (a string or `{value}`) and is not `isSystemInitiated`. Its
`response[]` holds text parts and `toolInvocationSerialized` parts (`toolId`, the input in
`toolSpecificData.rawInput`: the file edits of the edit tools are kept for a follow-up,
sleep/harvest/edit_tools.py, unless the call was denied, skipped or not complete). A request that
was cancelled or ended in an error is `aborted`.

A later operation can rewrite an earlier request, so the file is replayed whole each time
it changes (`WHOLE_FILE`); the ids of requests already delivered travel with the cursor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sleep.harvest.edit_tools import no_edits, vscode_edits
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import clean_text
from sleep.harvest.model import Task
from sleep.harvest.session_evidence import claude_assistant

WHOLE_FILE = True
COPILOT_CHAT = "github.copilot-chat"


def _container(state: Any, path: list) -> tuple[Any, Any] | None:
    """(parent, last key) of `path` in `state`, creating dicts on the way."""
    if not path:
        return None
    at = state
    for key in path[:-1]:
        if isinstance(at, dict) and isinstance(key, str):
            at = at.setdefault(key, {})
        elif isinstance(at, list) and isinstance(key, int) and -len(at) <= key < len(at):
            at = at[key]
        else:
            return None
    return at, path[-1]


def _indexes(parent: Any, key: Any) -> bool:
    return isinstance(parent, list) and isinstance(key, int) and -len(parent) <= key < len(parent)


def apply(state: Any, op: dict) -> Any:
    """`state` after one operation (an operation that does not fit is ignored)."""
    kind, path = op.get("kind"), op.get("k")
    if kind == 0:
        return op.get("v")
    if not isinstance(path, list):
        return state
    found = _container(state, path)
    if found is None:
        return state
    parent, key = found
    if kind == 1:
        if isinstance(parent, dict) or _indexes(parent, key):
            parent[key] = op.get("v")
    elif kind == 2:
        target = parent.get(key) if isinstance(parent, dict) else None
        if _indexes(parent, key):
            target = parent[key]
        if not isinstance(target, list):
            target = []
            if isinstance(parent, dict):
                parent[key] = target
        cut = op.get("i")
        if isinstance(cut, int):
            del target[cut:]
        values = op.get("v")
        target.extend(values if isinstance(values, list) else [values])
    elif kind == 3:
        if isinstance(parent, dict):
            parent.pop(key, None)
        elif _indexes(parent, key):
            del parent[key]
    return state


def _stamp(value: Any) -> str | None:
    if isinstance(value, (int, float)) and value > 0:
        return datetime.fromtimestamp(value / 1000, UTC).isoformat().replace("+00:00", "Z")
    return value if isinstance(value, str) else None


def _extension(request: dict) -> str | None:
    agent = request.get("agent")
    ext = agent.get("extensionId") if isinstance(agent, dict) else None
    if isinstance(ext, dict):
        ext = ext.get("value")
    return ext.lower() if isinstance(ext, str) else None


# VS Code's ToolConfirmKind: Denied = 0, Skipped = 5 (the call did not run).
_NOT_RUN = (0, 5)


def _ran(part: dict) -> bool:
    """A tool invocation that ran to its end: complete, and not denied or skipped."""
    confirmed = part.get("isConfirmed")
    if confirmed is False or part.get("isComplete") is False:
        return False
    return not (isinstance(confirmed, dict) and confirmed.get("type") in _NOT_RUN)


def _answer(task: Task, response: Any) -> None:
    for part in response if isinstance(response, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("kind")
        if kind == "toolInvocationSerialized" and isinstance(part.get("toolId"), str):
            data = part.get("toolSpecificData")
            raw = data.get("rawInput") if isinstance(data, dict) else None
            call = {"type": "tool_use", "name": part["toolId"], "input": raw}
            claude_assistant(task, [call], vscode_edits if _ran(part) else no_edits)
        elif kind in (None, "markdownContent"):
            value = part.get("value")
            if isinstance(value, dict):
                value = value.get("value")
            if isinstance(value, str):
                claude_assistant(task, [{"type": "text", "text": value}])


class VSCodeTaskReader:
    def __init__(self, identity: SessionIdentity) -> None:
        self.identity = identity
        self.tasks: list[Task] = []
        self.abandoned = 0
        self._state: Any = None
        identity.carry.setdefault("delivered", [])

    def feed(self, record: dict) -> None:
        self._state = apply(self._state, record)

    def finish(self) -> None:
        state = self._state if isinstance(self._state, dict) else {}
        if isinstance(state.get("sessionId"), str):
            self.identity.session_id = clean_text(state["sessionId"])
        delivered = set(self.identity.carry["delivered"])
        new_ids = []
        for n, request in enumerate(state.get("requests") or []):
            if not isinstance(request, dict) or request.get("isSystemInitiated") is True:
                continue
            if _extension(request) not in (None, COPILOT_CHAT):
                continue
            message = request.get("message")
            text = message.get("text") if isinstance(message, dict) else None
            if not isinstance(text, str) or not text.strip():
                continue
            key = str(request.get("requestId") or f"#{n}")
            if key in delivered:
                continue
            task = Task(clean_text(text).strip(), _stamp(request.get("timestamp")))
            _answer(task, request.get("response"))
            result = request.get("result")
            failed = isinstance(result, dict) and result.get("errorDetails")
            task.aborted = bool(request.get("isCanceled") or failed)
            task.interrupted = bool(request.get("isCanceled"))  # the person cancelled it
            self.tasks.append(task)
            new_ids.append(key)
        self.identity.carry["delivered"] = [*self.identity.carry["delivered"], *new_ids]
