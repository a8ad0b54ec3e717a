"""How a night replays each task, from its kind and the target backend — or why it cannot.

| kind      | coding agent (claude_code, codex) | API backend | handoff             |
|-----------|-----------------------------------|-------------|---------------------|
| agentic   | `agent`                           | `tools`     | `handoff-workspace` |
| advice    | `agent`                           | `chat`      | `chat`              |
| external  | `skipped`: acts outside the project, never replayed                     |
| redacted  | `skipped`: the secret it is about was redacted                          |

An agentic task is never replayed as a bare chat call: on an API backend it needs our own
workspace tool loop, and on handoff a prompt naming a prepared workspace. Those are other
modules': `tools` is our own loop (sleep/night/replay_tools.py, built in); `handoff-workspace`
is a runner (sleep/night/handoff_workspace.py, registered through `register_workspace_runner`
when the night imports it); a mode with no runner registered skips its tasks at replay
with the reason (NEEDS_WORKSPACE_HANDOFF).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.config import AGENT_BACKENDS
from core.models.types import AgentOutcome, AgentTask
from sleep.mine.tasks import MinedTask

ReplayMode = Literal["agent", "tools", "handoff-workspace", "chat", "skipped"]
HANDOFF_BACKEND = "handoff"
NEEDS_TOOL_LOOP = "needs the workspace tool loop"
NEEDS_WORKSPACE_HANDOFF = "needs a handoff that prepares a workspace"
MISSING = {"tools": NEEDS_TOOL_LOOP, "handoff-workspace": NEEDS_WORKSPACE_HANDOFF}
SKIP_REASONS = {
    "external": "acts outside the project (posts, sends, deploys or pushes): never replayed",
    "redacted": "the secret it is about was redacted: it cannot be answered",
}

# How an agentic task is replayed without a coding-agent CLI, once the module that
# implements it registers itself: `tools` (our workspace tool loop over an API backend)
# and `handoff-workspace` (a handoff prompt naming a prepared workspace).
# A runner is `async runner(task: AgentTask, skill_text: str, complete, where) -> AgentOutcome`:
# like a coding agent's run, over a fresh copy of `task.files` at `task.commit`, asking
# the model through `complete` (the target's chat function); `where` is the night's
# sleep.night.replay_env.AgentReplay (the skill's place in the copy, and where a workspace that
# must outlive one run is kept).
WorkspaceRunner = Callable[[AgentTask, str, Any, Any], Awaitable[AgentOutcome]]
WORKSPACE_MODES = ("tools", "handoff-workspace")
# Modes the night implements itself (`tools`: sleep/night/replay_tools.py's loop in the night's
# recorded tree), so no registered runner is needed for them.
BUILT_IN_MODES = frozenset({"tools"})
_runners: dict[str, WorkspaceRunner] = {}


def register_workspace_runner(mode: str, runner: WorkspaceRunner | None) -> None:
    """Called by the module implementing `mode` (None unregisters: tests)."""
    if mode not in WORKSPACE_MODES:
        raise ValueError(f"no workspace mode {mode!r}; allowed: {', '.join(WORKSPACE_MODES)}")
    if runner is None:
        _runners.pop(mode, None)
    else:
        _runners[mode] = runner


def workspace_runner(mode: str) -> WorkspaceRunner | None:
    return _runners.get(mode)


@dataclass(frozen=True)
class Replay:
    mode: ReplayMode
    skip_reason: str | None = None

    @property
    def replayed(self) -> bool:
        return self.mode != "skipped"


def replay_mode(task: MinedTask, backend: str) -> Replay:
    """The mode `task` is replayed in with `backend` as the target (its kind decides)."""
    if task.kind in SKIP_REASONS:
        return Replay("skipped", SKIP_REASONS[task.kind])
    if backend in AGENT_BACKENDS:
        return Replay("agent")
    if task.kind != "agentic":
        return Replay("chat")
    return Replay("handoff-workspace" if backend == HANDOFF_BACKEND else "tools")


def replay_at_night(task: MinedTask, backend: str) -> Replay:
    """The mode, or why the night skips the task now: a mode whose implementation is not
    there yet is skipped with the reason rather than degraded to a chat call."""
    planned = replay_mode(task, backend)
    implemented = planned.mode in BUILT_IN_MODES or workspace_runner(planned.mode) is not None
    if planned.mode in WORKSPACE_MODES and not implemented:
        return Replay("skipped", MISSING[planned.mode])
    return planned


def replayable(
    splits: dict[str, list[MinedTask]], backend: str, on_skip: Callable[[MinedTask, str], None]
) -> dict[str, list[MinedTask]]:
    """The splits without the tasks the night cannot replay (each reported to on_skip)."""
    out: dict[str, list[MinedTask]] = {}
    for split, tasks in splits.items():
        out[split] = []
        for task in tasks:
            replay = replay_at_night(task, backend)
            if replay.replayed:
                out[split].append(task)
            else:
                on_skip(task, replay.skip_reason or "")
    return out
