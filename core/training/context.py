"""What one training run's phases (a step, an epoch review, the finish, the gate) see of it.

The trainer owns the run; its phases live in their own modules and take this narrow view
instead of the trainer object, so no phase imports the trainer and the loop has no import
circle. `Training` in core/training/trainer.py is the one implementation.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.config import Config, TrainConfig
from core.environment.contract import Environment, RolloutResult, TaskItem
from core.optimizer.rejected_buffer import RejectedEditBuffer
from core.optimizer.strategy import OptimizerStrategy
from core.run.directory import RunDirectory
from core.run.staging import Stager
from core.run.state import TrainState
from core.training.rollout_runner import RolloutRunner
from core.training.scheduler import Jobs


class TrainingRun(Protocol):
    config: Config
    cfg: TrainConfig
    rd: RunDirectory
    client: Any  # core.models.client.ModelClient (ledger, describe)
    env: Environment
    strategy: OptimizerStrategy
    stager: Stager
    runner: RolloutRunner
    jobs: Jobs  # early work beside the critical path (core/training/scheduler.py)
    early: bool  # whether there is any (False: every phase in turn)
    buffer: RejectedEditBuffer
    state: TrainState
    train_items: list[TaskItem]
    val_items: list[TaskItem]
    test_items: list[TaskItem]
    steps_per_epoch: int
    total_steps: int

    @property
    def current(self) -> str: ...

    @property
    def best(self) -> str: ...

    def emit(self, event: Any) -> None: ...

    async def batched(self, phase: str, make: Any) -> Any:
        """`make()`, a phase whose calls can wait (core/training/batch_phase.py)."""

    def skill_text(self, version: int) -> str: ...

    def add_version(self, text: str, *, step: int | None, source: str) -> int: ...

    def persist(self) -> None: ...

    async def settle_baseline(self) -> None: ...

    def budget_event(self) -> None: ...

    def metric_of(self, results: list[RolloutResult]) -> dict[str, float]: ...
