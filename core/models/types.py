"""The one model interface every role and backend shares.

`complete(messages, *, role, **settings) -> Completion` is the whole contract the engine
sees. Backends differ only below this line; exec targets (`claude -p`, `codex exec`) will
be further `Backend` implementations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from core.errors import UserError

# OpenAI-style chat messages: {"role": "system"|"user"|"assistant", "content": str | list}.
Message = dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    # What the backend itself reported the call cost (Claude Code's `total_cost_usd`);
    # None = price the tokens with the config's price table.
    cost_usd: float | None = None


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    finish_reason: str  # "stop", "length", "content_filter", ... as the backend reports
    latency_s: float
    model: str
    cached: bool = False
    # A handoff reply: the answer file it was read from (a caller that cannot use the
    # reply says so there, core/models/handoff.py).
    answer_file: str | None = None
    # Answered inside a provider batch (core/models/batch_queue.py): billed at the batch
    # price.
    batched: bool = False

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class Request:
    """A fully resolved request: what a backend sends and what the response cache keys on."""

    backend: str
    model: str
    messages: list[Message]
    settings: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, ...


@dataclass(frozen=True)
class AgentTask:
    """One run of a coding agent that an environment asks for: the agent works on a fresh
    copy of `files` with the skill in place, then `check(workspace)` runs in that copy
    (before it is removed) and its return value travels back in `AgentOutcome.check`."""

    prompt: str
    files: Path  # a folder: copied, never touched
    skill_name: str  # folder / file name the skill is placed under (a slug)
    check: Callable[[Path], Any]
    # With a commit, `files` is a git repository and the workspace is its tree at that
    # commit (`git archive`): the user's checkout and its uncommitted changes stay out.
    commit: str | None = None
    # Confinement, for tasks whose answers (or anything else) must stay out of the agent's
    # reach: it may read and write its workspace only, and read `readable` (e.g. the
    # Python its commands need). The backend turns on its CLI's own sandbox for this and
    # refuses to run where the CLI cannot enforce it (see core/models/agents/confinement.py).
    workspace_only: bool = False
    readable: tuple[Path, ...] = ()
    # False: the task needs no commands run (reading files is enough), so an agent with
    # separate file tools (Claude Code) is given those only.
    shell: bool = True


@dataclass(frozen=True)
class AgentOutcome:
    """What the agent did: its final message, the event stream, the workspace diff, the
    exit status, usage and what the task's check returned."""

    text: str
    events: list[dict[str, Any]]
    diff: str
    exit_status: int
    usage: Usage
    latency_s: float
    model: str
    session_id: str
    check: Any
    finish_reason: str = "stop"
    workspace: str | None = None  # kept for debugging (keep_workspace), else None
    # How far the agent was kept in: "" when its CLI's sandbox held it to the workspace
    # (AgentTask.workspace_only), else why it ran with the user's reach (the trajectory
    # says so)
    unconfined: str = ""
    # What the workspace copy left out (a committed symlink out of the project), one note each
    left_out: tuple[str, ...] = ()


class Backend(Protocol):
    """A way to reach one model server or agent. Retries, caching, the ledger and the
    concurrency limit live around it (in the client), not inside it."""

    name: str

    async def send(self, request: Request, *, timeout_s: float) -> Completion: ...

    async def aclose(self) -> None: ...


class StreamingBackend(Backend, Protocol):
    """A backend that can also stream a reply (core/models/streaming.py): `idle_timeout_s`
    bounds each wait for data, not the whole reply; only a finished reply is returned."""

    async def send_streamed(self, request: Request, *, idle_timeout_s: float) -> Completion: ...


class ModelError(UserError):
    """A model call failed for good; the message says what to do next."""


class AuthError(ModelError):
    """Bad or missing credential: never retried."""


class BadRequestError(ModelError):
    """The request itself is wrong (unknown model, bad parameter): never retried."""


class TransientError(ModelError):
    """Worth retrying (429, 5xx, timeout, broken connection)."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class AbandonedCall(TransientError):
    """We stopped waiting for a reply the provider had the request for: a timeout after
    sending, a stream that stalled, ended unfinished or broke off with an error event. The
    provider may have generated (and billed) it all the same, so the client counts the
    attempt at its estimated usage before it is retried: the budget cap sees it."""


class ImpossibleUsage(TransientError):
    """A backend reported a cost or a token count that is not a finite non-negative
    number (a CLI's `total_cost_usd: -5.0`, NaN, Infinity, a string). Added to the ledger it
    would move the cost cap or, as NaN, disable it: the call is an error instead, retried
    like a malformed answer, and the client counts it at its estimate."""


def reported_amount(value: object, field: str, source: str) -> float | None:
    """A cost or token count a backend reported: None when absent, the number when it is
    finite and non-negative, else ImpossibleUsage."""
    if value is None:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise ImpossibleUsage(
            f"{source} reported {field}={value!r}, not a finite non-negative number; "
            "the call is counted at its estimate and retried"
        )
    return float(value)


class RetriesExhausted(ModelError):
    """Transient failures outlasted the retry policy. The one model failure an environment
    may turn into a zero-scored rollout: the server was reachable in principle, this item
    was unlucky. Every other ModelError means the configuration is wrong and must stop the
    run."""


class ModelUnavailable(ModelError):
    """A model stayed unreachable past its retries where the engine needed it (the
    optimizer's analysis, a judge): the run stopped at its last boundary and is resumable.
    Exit 1 like a target outage: the input was fine, the work could not be done."""

    exit_code = 1


class UsageLimitReached(ModelError):
    """A subscription's usage limit (a coding-agent CLI on a plan): never retried. The run
    stops at a step boundary, resumable; the message says when the limit resets if the CLI
    said so."""

    exit_code = 1


class BudgetExceeded(ModelError):
    """The usage ledger's cap is reached; the engine stops cleanly at a step boundary."""
