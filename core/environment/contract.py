"""The contract every task environment implements (DESIGN §6).

The trainer receives an `Environment` object and never imports a concrete one. The
reference answer travels in `RolloutResult.reference` / `explanation` for the optimizer
only; an environment must never put it in the target's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import UserError
from core.models.types import Completion, Message

SPLITS = ("train", "val", "test")


class EnvError(UserError):
    """Bad environment input (missing manifest, unknown split, unknown option)."""


@dataclass(frozen=True)
class TaskItem:
    id: str
    task_type: str
    question: str  # the target-facing prompt text (what a worked example would show)
    answer: str  # the reference answer (never shown to the target)
    data: dict[str, Any] = field(default_factory=dict)  # environment-specific extras


@dataclass(frozen=True)
class Score:
    hard: float  # in [0, 1]
    soft: float  # in [0, 1]
    explanation: str  # for the optimizer; includes the reference answer


@dataclass
class RolloutResult:
    item_id: str
    task_type: str
    question: str
    reference: str
    prediction: str
    hard: float
    soft: float
    explanation: str
    trajectory: list[Message]  # messages sent and received, tool calls, observations
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None  # a model error that made this rollout score 0

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutResult:
        return cls(**data)


class CompleteFn(Protocol):
    """What an environment may call: the model client's `complete`, bound to a role."""

    async def __call__(self, messages: list[Message], **settings: Any) -> Completion: ...


class Environment(Protocol):
    name: str
    version: str  # bump when prompts or scoring change: part of the rollout cache key

    def load_split(self, split: str) -> list[TaskItem]: ...

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        """Run one item with the skill in the target's prompt and score it.

        Only transient model failures that outlast the retries (`RetriesExhausted`, or a
        `TransientError` from a caller without retries) become a zero-scored result with
        `error` set. Every other error propagates: `BudgetExceeded` (the engine stops
        cleanly), `AuthError` / `BadRequestError` (a wrong key, model or base_url: fail fast
        with the message naming it, instead of a run of zeros that exits 0), and any other
        `ModelError` (e.g. the embedded model is not installed)."""
        ...

    def score(self, item: TaskItem, prediction: str) -> Score: ...
