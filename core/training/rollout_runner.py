"""Running items through an environment with the target model, concurrently.

A fixed pool of workers pulls items in order (pool size = the target role's concurrency),
so at most that many rollouts are in flight: the early gate can then cancel the rest
before they are sent, and the rollouts it saves are real savings. Results come back in item
order whatever order they finish in, so everything downstream is deterministic. Cached
results (core.training.rollout_cache) are served first and cost nothing.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from core.config import GateConfig
from core.environment.contract import CompleteFn, Environment, RolloutResult, TaskItem
from core.models.handoff import HandoffWaiting
from core.models.ledger import STAGE
from core.models.types import ModelError
from core.run.events import Event, RolloutFinished
from core.skill.document import skill_hash
from core.training.executor import Executor, LocalExecutor
from core.training.gate import EarlyGate, GateDecision, item_metric
from core.training.rollout_cache import RolloutCache, origin_of

# Phases whose scores drive a decision (baseline, gate, slow update pairs) or are reported
# (final val, test, `skillopt eval`): a rollout that failed with a model error would count
# as a wrong answer there, so any failure abandons the phase instead.
SCORING_PHASES = frozenset({"baseline", "gate", "final_val", "slow_update", "test", "eval"})


class RolloutsFailed(ModelError):
    """Target rollouts failed with model errors where a score of 0 would be a lie. The step
    is abandoned (nothing failed is cached or persisted), so the run stays resumable."""

    exit_code = 1  # the run failed; the input was fine


def check_failures(
    results: Sequence[RolloutResult], *, total: int, split: str, phase: str, step: int
) -> None:
    """Raise RolloutsFailed if a scoring phase has any errored result, or if every result
    of a train phase errored (a batch with no answer at all teaches the optimizer nothing)."""
    failed = [r for r in results if r.error]
    if not failed:
        return
    if phase not in SCORING_PHASES and len(failed) < len(results):
        return
    first = failed[0]
    error = " ".join(str(first.error).split())[:300]
    where = f"{phase}, step {step}" if step >= 0 else phase
    then = "" if phase == "eval" else "the run is resumable: "
    raise RolloutsFailed(
        f"{len(failed)} of {total} {split} rollouts failed ({where}); first, item "
        f"{first.item_id}: {error}; {then}rerun the same command once the target model answers"
    )


def noting_truncation(complete: CompleteFn, cut: list[bool]) -> CompleteFn:
    """`complete`, appending to `cut` whether each reply ended at its token limit: an
    environment scores the text it got, so only the engine can flag a cut-off answer."""

    async def wrapped(messages, **settings):
        completion = await complete(messages, **settings)
        cut.append(completion.truncated)
        return completion

    return wrapped


@dataclass
class GatedScore:
    decision: GateDecision
    results: dict[str, RolloutResult]  # item id -> result, for the items actually scored
    item_metrics: dict[str, float]
    rollouts_saved: int  # items never rolled out because the gate had decided
    items_total: int


class RolloutRunner:
    def __init__(
        self,
        env: Environment,
        complete: CompleteFn,
        cache: RolloutCache,
        emit: Callable[[Event], None],
        *,
        concurrency: int,
        complete_for_repeat: Callable[[int], CompleteFn] | None = None,
        executor: Executor | None = None,
    ) -> None:
        """`complete_for_repeat(r)` is the target for the gate's repeat r > 0 (gate.repeats):
        its own response-cache scope, so a repeat is a new sample, not a replay.
        `executor` runs each rollout (run.executor; default in this process)."""
        self.env = env
        self.executor = executor or LocalExecutor(concurrency)
        self.complete = complete
        self.complete_for_repeat = complete_for_repeat
        self.cache = cache
        self.emit = emit
        self.concurrency = max(1, concurrency)

    async def run(
        self,
        items: Sequence[TaskItem],
        skill_text: str,
        *,
        split: str,
        phase: str,
        step: int,
        skill_role: str = "",
    ) -> list[RolloutResult]:
        """Every item's result, in item order. Raises RolloutsFailed on model errors (see
        `check_failures`). `skill_role` names the skill in the events (RolloutFinished)."""
        results: dict[str, RolloutResult] = {}
        jobs = [(item, 0) for item in items]
        stream = self._stream(
            jobs, skill_text, split=split, phase=phase, step=step, skill_role=skill_role
        )
        async for _, result in stream:
            results[result.item_id] = result
        ordered = [results[item.id] for item in items]
        check_failures(ordered, total=len(items), split=split, phase=phase, step=step)
        return ordered

    async def score_with_gate(
        self,
        items: Sequence[TaskItem],
        skill_text: str,
        *,
        best: float,
        gate_cfg: GateConfig,
        split: str = "val",
        phase: str = "gate",
        step: int,
        margin: Fraction = Fraction(0),
        skill_role: str = "",
    ) -> GatedScore:
        """Score a candidate against `best` (+ `margin`, see EarlyGate), feeding the early
        gate as items complete and cancelling the remaining rollouts once it has decided.
        With gate.repeats N each item is rolled out N times (item by item) and its metric
        is the mean. The first errored rollout raises RolloutsFailed (the gate must never
        judge a model outage)."""
        repeats = gate_cfg.repeats
        gate = EarlyGate(best, len(items), gate_cfg.early_decide, margin)
        results: dict[str, RolloutResult] = {}  # repeat 0's result of each item
        samples: dict[str, list[float]] = {}
        metrics: dict[str, float] = {}
        tally = [0]
        jobs = [(item, r) for item in items for r in range(repeats)]
        stream = self._stream(
            jobs,
            skill_text,
            split=split,
            phase=phase,
            step=step,
            tally=tally,
            skill_role=skill_role,
        )
        try:
            async for repeat, result in stream:
                if result.error:
                    check_failures([result], total=len(items), split=split, phase=phase, step=step)
                if repeat == 0:
                    results[result.item_id] = result
                values = samples.setdefault(result.item_id, [])
                values.append(item_metric(result.hard, result.soft, gate_cfg))
                if len(values) < repeats:
                    continue
                metrics[result.item_id] = min(1.0, sum(values) / repeats)
                gate.add(metrics[result.item_id])
                if gate.decided() is not None and len(metrics) < len(items):
                    break
        finally:
            await stream.aclose()
        decision = gate.decided() if len(metrics) < len(items) else gate.finish()
        if decision is None:  # defensive: a gate that stops without a decision
            decision = gate.finish()
        return GatedScore(
            decision=decision,
            results=results,
            item_metrics=metrics,
            # Items never rolled out; a result that finished but arrived after the decision
            # was paid for and is not counted as saved.
            rollouts_saved=len(jobs) - max(sum(map(len, samples.values())), tally[0]),
            items_total=len(items),
        )

    async def resample(
        self,
        items: Sequence[TaskItem],
        skill_text: str,
        repeats: Sequence[int],
        *,
        gate_cfg: GateConfig,
        phase: str,
        step: int,
    ) -> dict[str, list[float]]:
        """Each item's gate metric from the given repeat indices (fresh samples: each
        repeat has its own response-cache scope and rollout-cache key). Raises
        RolloutsFailed on a model error, as any scoring phase."""
        samples: dict[str, list[float]] = {}
        jobs = [(item, r) for item in items for r in repeats]
        async for _, result in self._stream(jobs, skill_text, split="val", phase=phase, step=step):
            if result.error:
                check_failures([result], total=len(items), split="val", phase=phase, step=step)
            samples.setdefault(result.item_id, []).append(
                item_metric(result.hard, result.soft, gate_cfg)
            )
        return samples

    async def _stream(
        self,
        jobs: Sequence[tuple[TaskItem, int]],
        skill_text: str,
        *,
        split: str,
        phase: str,
        step: int,
        tally: list[int] | None = None,
        skill_role: str = "",
    ):
        """Yield (repeat, result) as they finish: cache hits first, then live rollouts.
        `tally[0]` counts results produced, including any not yet consumed."""
        tally = tally if tally is not None else [0]
        shash = skill_hash(skill_text)
        here = origin_of(phase, step, skill_role)
        pending: list[tuple[TaskItem, int]] = []
        for item, repeat in jobs:
            hit = self.cache.get(shash, item.id, split, repeat)
            if hit is None:
                pending.append((item, repeat))
                continue
            tally[0] += 1
            self._emit(
                hit,
                phase=phase,
                step=step,
                split=split,
                shash=shash,
                role=skill_role,
                replayed=not self.cache.note_logged(shash, item.id, split, repeat, here),
            )
            yield repeat, hit
        if not pending:
            return
        # The workers run in a context whose stage is this phase: their model calls count
        # as this phase's in the ledger (the caller's own context is left as it was).
        context = contextvars.copy_context()
        context.run(STAGE.set, "rollout" if phase == "train" else phase)
        queue: asyncio.Queue[tuple[int, RolloutResult] | BaseException] = asyncio.Queue()
        order = iter(pending)

        async def worker() -> None:
            for item, repeat in order:
                complete = self.complete
                if repeat and self.complete_for_repeat is not None:
                    complete = self.complete_for_repeat(repeat)
                cut: list[bool] = []
                if getattr(self.env, "target_kind", "chat") == "chat":
                    complete = noting_truncation(complete, cut)
                try:
                    result = await self.executor.rollout(self.env, item, skill_text, complete)
                    result.truncated = result.truncated or any(cut)
                    tally[0] += 1
                    self.cache.put(shash, split, result, repeat)  # errored ones are never stored
                except asyncio.CancelledError:
                    raise
                except HandoffWaiting as exc:
                    # One item waiting on an answer says nothing about the others: write
                    # every prompt of the batch, so a person answers them in one round.
                    await queue.put(exc)
                    continue
                except BaseException as exc:  # noqa: BLE001 - handed to the consumer
                    # (storing the result too: a worker that died silently would leave the
                    # consumer waiting for its result forever)
                    await queue.put(exc)
                    return
                await queue.put((repeat, result))
                # Let the consumer (the early gate) look at it before the next item starts:
                # with a zero-latency backend a worker would otherwise never yield.
                await asyncio.sleep(0)

        workers = [
            asyncio.create_task(worker(), context=context)
            for _ in range(min(self.concurrency, len(pending)))
        ]
        waiting: HandoffWaiting | None = None
        try:
            for _ in range(len(pending)):
                got = await queue.get()
                if isinstance(got, HandoffWaiting):
                    waiting = waiting or got
                    continue
                if isinstance(got, BaseException):
                    raise got
                if not got[1].error:
                    self.cache.note_logged(shash, got[1].item_id, split, got[0], here)
                self._emit(
                    got[1], phase=phase, step=step, split=split, shash=shash, role=skill_role
                )
                yield got
            if waiting is not None:
                raise waiting
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    def _emit(
        self,
        r: RolloutResult,
        *,
        phase: str,
        step: int,
        split: str,
        shash: str,
        role: str = "",
        replayed: bool = False,
    ) -> None:
        self.emit(
            RolloutFinished(
                phase=phase,
                step=step,
                split=split,
                skill_hash=shash,
                item_id=r.item_id,
                task_type=r.task_type,
                hard=r.hard,
                soft=r.soft,
                latency_s=r.latency_s,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                cached=r.cached,
                prediction=r.prediction[:200],
                skill_role=role,
                truncated=r.truncated,
                replayed=replayed,
            )
        )
