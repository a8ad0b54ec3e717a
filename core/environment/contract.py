"""The contract every task environment implements (DESIGN §6).

The trainer receives an `Environment` object and never imports a concrete one. The
reference answer travels in `RolloutResult.reference` / `explanation` for the optimizer
only; an environment must never put it in the target's messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import UserError
from core.models.types import AgentOutcome, AgentTask, Completion, Message
from core.plain_data import as_dict

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
    truncated: bool = False  # a target reply ended at its token limit (set by the engine)
    # What the optimizer's prompts call `reference`. "" when the reference is not one answer
    # and labels its own parts, one a line (sleep: the rubric, the person's correction, the
    # answer they accepted), so no item shows an answer under the wrong name.
    reference_label: str = "reference answer"
    # Why this replay lacked what its item needs to be answered or checked (an environment
    # sets it: e.g. a code question replayed without the code, a check that could not run).
    # A failure with it set says nothing of the skill: the analysts are not shown it as one
    # (core/optimizer/reflection_groups.split_results). It still scores as it scored.
    lacked_inputs: str = ""
    # The mechanical checks the environment applied to this rollout, each by its name:
    # passed or not (none applied: empty). A check that flips between the current skill's
    # rollout and a candidate's is evidence for or against an edit on its own
    # (core/training/check_flips.py).
    checks: dict[str, bool] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutResult:
        return cls(**data)

    @classmethod
    def scored(
        cls,
        item: TaskItem,
        prediction: str,
        score: Score,
        trajectory: list[Message],
        **usage: Any,
    ) -> RolloutResult:
        """The rollout of `item`, scored; `usage`: tokens, latency, cached. (`failed` is
        the one the model could not finish.)"""
        return cls(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            reference=item.answer,
            prediction=prediction,
            hard=score.hard,
            soft=score.soft,
            explanation=score.explanation,
            trajectory=trajectory,
            **usage,
        )

    @classmethod
    def failed(
        cls, item: TaskItem, trajectory: list[Message], error: str, explanation: str
    ) -> RolloutResult:
        """A rollout the model could not finish (retries exhausted): scored zero, `error`
        set, which the engine never counts as a score."""
        return cls(
            item_id=item.id,
            task_type=item.task_type,
            question=item.question,
            reference=item.answer,
            prediction="",
            hard=0.0,
            soft=0.0,
            explanation=explanation,
            trajectory=list(trajectory),
            error=error,
        )


class CompleteFn(Protocol):
    """What an environment may call: the model client's `complete`, bound to a role."""

    async def __call__(self, messages: list[Message], **settings: Any) -> Completion: ...


class AgentFn(Protocol):
    """What an agent environment calls instead: one coding-agent run of `task` with the
    skill placed where the agent reads it (the model client's `run_agent`, bound to the
    target role). Errors follow the same rules as `complete`'s (see `rollout`)."""

    async def __call__(self, task: AgentTask, skill_text: str) -> AgentOutcome: ...


class Environment(Protocol):
    """`target_kind` (optional, default "chat"): "agent" for an environment whose items
    are coding tasks; its `rollout` then receives an `AgentFn` as `complete`.
    `worker_needs` (optional, a `WorkerNeeds`): what a rollout needs on a Ray worker. The
    object must pickle (it travels to the workers once per run). `analyst_guide(kind)`
    (optional): the task's own categories for the failure or success analysts
    (`analyst_guide` below)."""

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


@dataclass(frozen=True)
class WorkerNeeds:
    """What a rollout of this environment needs on a machine other than the driver's
    (`run.executor: ray`): `modules` = Python packages by import name, shipped with the
    task (the project's own core and envs always are); `packages` = pip requirements
    installed on the worker; `files` = folders the rollout reads (game files, workbooks),
    named in the items' data by paths under them: a worker that lacks one gets the
    driver's copy and the items' paths rewritten to it (core/training/ray_files.py; over
    its size limit, the folder must be mounted at the same path, or the worker says which
    it lacks). An environment declares them as `worker_needs` (optional)."""

    modules: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def worker_needs(env: Environment) -> WorkerNeeds:
    return getattr(env, "worker_needs", None) or WorkerNeeds()


ANALYST_KINDS = ("failure", "success")


def analyst_guide(env: Environment, kind: str) -> str:
    """The environment's own guide for the `kind` ("failure" or "success") analysts, or
    "": what goes wrong or right in its task, in its terms (as published, each benchmark
    names its failure categories). An environment declares it as an optional
    `analyst_guide(kind) -> str` method."""
    guide = getattr(env, "analyst_guide", None)
    return guide(kind).strip() if callable(guide) else ""


def needs_agent(env: Environment) -> bool:
    return getattr(env, "target_kind", "chat") == "agent"


def bind_target(env: Environment, client: Any, *, cache_scope: str = "") -> CompleteFn | AgentFn:
    """The target callable `env.rollout` takes: the model client's chat `complete` (with
    its response-cache scope), or its agent runner for an environment that needs an agent
    (agent runs are never response-cached: the rollout cache keys whole outcomes)."""
    if needs_agent(env):
        return client.bind_agent("target")
    return client.bind("target", cache_scope=cache_scope)
