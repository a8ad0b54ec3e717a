"""The training loop (DESIGN §4): baseline, steps, epoch reviews, finish.

`run_training` is the one entry point the CLI and the TUI call. It owns nothing a face
needs to know about: progress goes out as events on the bus (and so into events.jsonl),
the result comes back as a `RunSummary` (and summary.json).

Crash safety: every step ends by writing `state.json` atomically, after all other files of
that step. A process killed at any moment resumes at the first step whose state was not
written; redoing that step hits the response cache (model calls) and the rollout cache
(scored items), so it spends nothing twice and reaches the same decisions.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import math
import time
from pathlib import Path

from core.config import Config
from core.environment.contract import Environment, RolloutResult, bind_target
from core.models.batch_queue import BatchWaiting
from core.models.handoff import HandoffWaiting, waiting_summary
from core.models.handoff_files import HandoffFolder
from core.models.priority_pool import AHEAD, SPARE
from core.models.spend_journal import SpendJournal
from core.models.types import BudgetExceeded, ModelError, ModelUnavailable, RetriesExhausted
from core.optimizer.rejected_buffer import RejectedEditBuffer
from core.optimizer.strategy import OptimizerStrategy
from core.run.dir_stager import RunDirStager
from core.run.directory import RunDirectory
from core.run.events import (
    AnswersWaiting,
    EventBus,
    Notice,
    RunFailed,
    RunFinished,
    RunStarted,
)
from core.run.staging import Stager
from core.run.state import SkillVersion, TrainState
from core.run.summary import RunSummary
from core.skill.document import skill_hash
from core.training.batch_phase import batched, open_batch_queue
from core.training.candidate_gate import mean
from core.training.epoch_review import review_epoch
from core.training.executor import Executor, open_executor
from core.training.finish import finish, summary_of
from core.training.gate import item_metric
from core.training.minibatch import batch_for_step
from core.training.resume import (
    ConfigChanged,
    check_resume_config,
    check_resume_models,
    check_resume_val_items,
)
from core.training.rollout_cache import RolloutCache
from core.training.rollout_runner import RolloutRunner
from core.training.scheduler import Jobs
from core.training.setup import (
    budget_event,
    build_client_with_budget_events,
    check_cost_cap_is_priced,
    check_strategy_merges,
    choose_strategy,
    unused_optimizer_notice,
)
from core.training.split_limit import limited_split
from core.training.step import run_step
from core.words import counted

__all__ = ["Training", "batch_for_step", "run_training"]


PERFECT_NOTICE = (
    "the skill already scores {best:.3f} on every held-out item: no candidate can beat it, "
    "so the remaining steps are skipped (train.gate.skip_when_perfect)"
)


class Training:
    """One process's work on one run directory (a fresh start or a resume)."""

    def __init__(
        self,
        config: Config,
        run_dir: RunDirectory,
        bus: EventBus,
        client,
        env: Environment,
        strategy: OptimizerStrategy,
        stager: Stager,
        stop: asyncio.Event | None,
        executor: Executor | None = None,
        *,
        sequential: bool = False,
        batch_wait: bool = True,
    ) -> None:
        self.config = config
        self.cfg = config.train
        self.rd = run_dir
        self.bus = bus
        self.client = client
        self.env = env
        self.strategy = strategy
        self.stager = stager
        self.stop = stop
        self.state: TrainState | None = None
        self._texts: dict[int, str] = {}
        self._t0 = time.monotonic()
        self._wall_base = 0.0
        self._committed: TrainState | None = None
        self.cache = RolloutCache(
            run_dir.rollout_cache_path,
            target_key=client.settings_key("target"),
            env_key=f"{env.name}:{env.version}",
        )
        self.runner = RolloutRunner(
            env,
            # The run seed is part of what makes a target sample: replicate runs with
            # other seeds must not replay each other's answers from the shared cache.
            bind_target(env, client, cache_scope=f"run-seed:{config.run.seed}"),
            self.cache,
            bus.emit,
            concurrency=client.runtime("target").concurrency,
            # gate.repeats: repeat r is its own sample (its own response-cache scope).
            complete_for_repeat=lambda r: client.bind(
                "target", cache_scope=f"run-seed:{config.run.seed}:repeat:{r}"
            ),
            executor=executor,
        )
        self.buffer = RejectedEditBuffer()
        self.batch_wait = batch_wait
        self.batches = open_batch_queue(config, client, run_dir.batches_dir)
        self.jobs = Jobs()
        self.early = not sequential and self._early_work_allowed()

    def _early_work_allowed(self) -> bool:
        """Early work (README "What runs early") changes when calls are made, never which:
        not under a budget cap (a cap must stop the run at the boundary it stops at today,
        with the critical path's calls spent first) and not with a handoff role (a person
        answers a phase's prompts in one round; there are no idle slots to fill)."""
        ledger = self.client.ledger
        if any(c is not None for c in (ledger.cap_tokens, ledger.cap_cost_usd, ledger.cap_calls)):
            return False
        for role in ("target", "optimizer"):
            try:
                if self.client.runtime(role).kind == "handoff":
                    return False
            except ModelError:  # a role this run does not configure
                continue
        return True

    # ------------------------------------------------------------------ helpers
    def emit(self, event) -> None:
        self.bus.emit(event)

    async def batched(self, phase: str, make):
        """`make()` (a phase whose calls can wait) through the provider's batch API when
        run.batch uses one (core/training/batch_phase.py), else as it is."""
        return await batched(
            self.batches,
            phase,
            make,
            wait=self.batch_wait,
            poll_s=self.config.run.batch_poll_s,
            say=lambda text: self.emit(Notice(text=text)),
        )

    def skill_text(self, version: int) -> str:
        if version not in self._texts:
            self._texts[version] = self.rd.read_skill(version)
        return self._texts[version]

    @property
    def current(self) -> str:
        return self.skill_text(self.state.current_version)

    @property
    def best(self) -> str:
        return self.skill_text(self.state.best_version)

    def add_version(self, text: str, *, step: int | None, source: str) -> int:
        number = max(v.version for v in self.state.versions) + 1 if self.state.versions else 0
        self.rd.write_skill(number, text)
        self._texts[number] = text
        self.state.versions.append(SkillVersion(number, skill_hash(text), step, source))
        return number

    def persist(self) -> None:
        """Write state.json at a boundary (the last write of a step) and remember it as
        the point an abandoned step falls back to."""
        s = self.state
        s.rejected_buffer = self.buffer.to_dict()
        s.ledger = self.client.ledger.to_dict()
        s.wall_time_s = self._wall_base + (time.monotonic() - self._t0)
        self.rd.write_state(s)
        self._committed = copy.deepcopy(s)

    def abandon_step(self, status: str, reason: str) -> None:
        """Stop mid-step (budget cap, error): keep the state of the last boundary, so a
        resumed run redoes the step exactly as an uninterrupted run does it; only the
        status and the money spent (the ledger) move on. best_skill.md goes back with the
        state (the abandoned step may have accepted a candidate). A candidate the step
        already staged stays staged: the redone step reaches the same acceptance (response
        and rollout caches) and re-stages it, which the stagers dedupe on (step, source)."""
        if self._committed is not None:
            self.state = copy.deepcopy(self._committed)
            saved = self.state.rejected_buffer
            self.buffer = RejectedEditBuffer.from_dict(saved) if saved else RejectedEditBuffer()
            self.rd.write_best_skill(self.skill_text(self.state.best_version))
        self.state.status = status
        self.state.stop_reason = reason
        self.persist()

    def budget_event(self) -> None:
        self.emit(budget_event(self.client.ledger.snapshot()))

    def metric_of(self, results: list[RolloutResult]) -> dict[str, float]:
        return {r.item_id: item_metric(r.hard, r.soft, self.cfg.gate) for r in results}

    # ------------------------------------------------------------------ setup
    def load_splits(self) -> None:
        self.train_items = self.env.load_split("train")
        val = self.env.load_split("val")
        seed = self.config.run.seed
        self.val_items = limited_split(val, self.cfg.val_limit, seed=seed, split="val")
        test = self.env.load_split("test") if self.cfg.final_test else []
        self.test_items = limited_split(test, self.cfg.test_limit, seed=seed, split="test")
        self.steps_per_epoch = self.cfg.steps_per_epoch or max(
            1, math.ceil(len(self.train_items) / (self.cfg.batch_size * self.cfg.accumulation))
        )
        self.total_steps = self.steps_per_epoch * self.cfg.epochs

    def start(self, initial_skill: str | None) -> bool:
        """Load or create the state; True when resuming."""
        state = self.rd.read_state()
        if state is not None:
            if (
                state.total_steps != self.total_steps
                or state.steps_per_epoch != self.steps_per_epoch
            ):
                raise ConfigChanged(
                    f"run {self.rd.path} was planned for {counted(state.total_steps, 'step')}, the "
                    f"environment now gives {self.total_steps}; rerun with --fresh --force"
                )
            resolved = self.resolved_models()
            check_resume_models(state, resolved, str(self.rd.path))
            check_resume_val_items(state, [i.id for i in self.val_items], str(self.rd.path))
            for key, value in resolved.items():  # a run started before they were recorded
                if getattr(state, key) is None:
                    setattr(state, key, value)
            self.state = state
            self._wall_base = state.wall_time_s
            state.status = "running"
            state.stop_reason = ""
            self.buffer = (
                RejectedEditBuffer.from_dict(state.rejected_buffer)
                if state.rejected_buffer
                else RejectedEditBuffer()
            )
            if state.ledger:
                self.client.ledger.restore(state.ledger)
            self._open_spend_journal()
            self._committed = copy.deepcopy(state)
            return True
        self.state = TrainState(
            run_id=self.rd.run_id,
            env=self.env.name,
            started_at=time.time(),
            total_steps=self.total_steps,
            steps_per_epoch=self.steps_per_epoch,
        )
        self.state.stager_base = getattr(self.stager, "base", None)
        self.state.stager_reuses_run_id = bool(getattr(self.stager, "reuse_run_id", False))
        self.state.stager_run_id = getattr(self.stager, "run_id", None)
        for key, value in self.resolved_models().items():
            setattr(self.state, key, value)
        self._open_spend_journal()  # a process killed before its first state spent too
        self.add_version(initial_skill or "", step=None, source="initial")
        self.rd.write_best_skill(self.best)
        self.persist()
        return False

    def _open_spend_journal(self) -> None:
        """Every paid call goes to spend.jsonl as it happens; what an earlier (perhaps
        killed) process recorded there replaces the boundary ledger of state.json."""
        self.client.ledger.attach_journal(SpendJournal(self.rd.spend_path))

    def resolved_models(self) -> dict[str, str]:
        """What `backend: auto` / `strategy: auto` resolved to in this process (TrainState
        fields): a resume that resolves differently would silently change the run."""
        return {
            "target_key": self.client.settings_key("target"),
            "target_model": self.client.describe("target"),
            "optimizer_model": (
                "none (deterministic fewshot strategy)"
                if self.strategy.name == "fewshot"
                else self.client.describe("optimizer")
            ),
            "strategy": self.strategy.name,
        }

    # ------------------------------------------------------------------ the run
    async def run(self, initial_skill: str | None) -> RunSummary:
        """The run, with its early work as jobs beside it (core/training/scheduler.py):
        none outlives it, and a failing baseline fails it as it does when run first."""
        try:
            return await self.jobs.run(self._run(initial_skill))
        except BatchWaiting as exc:  # told not to wait: stop resumably, the batch id said
            return self.stopped(str(exc))

    async def _run(self, initial_skill: str | None) -> RunSummary:
        self.load_splits()
        resumed = self.start(initial_skill)
        s = self.state
        self.emit(
            RunStarted(
                run_id=s.run_id,
                env=self.env.name,
                strategy=self.strategy.name,
                target_model=self.client.describe("target"),
                optimizer_model=self.resolved_models()["optimizer_model"],
                epochs=self.cfg.epochs,
                steps_per_epoch=self.steps_per_epoch,
                train_items=len(self.train_items),
                val_items=len(self.val_items),
                test_items=len(self.test_items),
                resumed=resumed,
                start_step=s.next_step,
                executor=self.runner.executor.describe(),
            )
        )
        unused = unused_optimizer_notice(self.config, self.client)
        if unused:  # after RunStarted: every run's log begins with it
            self.emit(Notice(text=unused))
        try:
            if s.baseline_score is None:
                await self.baseline()
            self.start_spare_work()
            while True:
                epochs_done = s.next_step // self.steps_per_epoch
                if s.epochs_reviewed < epochs_done:
                    if self.stop_requested():
                        return await self.stopped_on_request()
                    await self.settle_baseline()
                    await review_epoch(self, s.epochs_reviewed)
                    continue
                if s.next_step >= self.total_steps:
                    break
                if self.stop_requested():
                    return await self.stopped_on_request()
                if self.nothing_can_pass():
                    self.emit(Notice(text=PERFECT_NOTICE.format(best=s.best_score or 0.0)))
                    break
                await run_step(self, s.next_step)
            if self.stop_requested():
                return await self.stopped_on_request()
            await self.settle_baseline()
            return await finish(self)
        except BudgetExceeded as exc:
            return self.stopped(f"{exc}; the run is resumable: rerun the same command")
        except HandoffWaiting as exc:
            return self.waiting(exc)

    def skip_when_perfect_active(self) -> bool:
        gate = self.cfg.gate
        return gate.skip_when_perfect and gate.enabled and gate.density_weight == 0

    def nothing_can_pass(self) -> bool:
        """The best already scores 1 on every val item and the gate is strict with no
        density term: no candidate can score strictly higher."""
        return self.skip_when_perfect_active() and (self.state.best_score or 0.0) >= 1.0

    def stop_requested(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def waiting(self, exc: HandoffWaiting) -> RunSummary:
        """Handoff prompts wait for answers: stop at the last boundary like a budget stop,
        with every waiting prompt in an event and in the reason (the console prints it)."""
        folder = Path(self.config.models.handoff_dir or ".").expanduser()
        statuses = HandoffFolder(folder).waiting()
        reason = waiting_summary(folder, statuses) if statuses else str(exc)
        self.emit(AnswersWaiting(folder=str(folder), prompts=[s.to_dict() for s in statuses]))
        return self.stopped(reason, status="waiting")

    async def stopped_on_request(self) -> RunSummary:
        """A stop between steps: early work in flight ends first (what it paid for is
        cached for the resume), and the baseline, if it was still being scored beside step
        0, goes into the state, as when it ran before the step."""
        await self.jobs.settle()
        await self.settle_baseline()
        return self.stopped("stopped on request; rerun the same command to resume")

    def stopped(self, reason: str, status: str = "stopped") -> RunSummary:
        self.jobs.cancel()  # early work logs nothing after the run says it stopped
        self.abandon_step(status, reason)
        s = self.state
        self.budget_event()
        self.emit(
            RunFinished(
                status=status,
                baseline_val=s.baseline_score or 0.0,
                best_val=s.best_score or 0.0,
                reason=reason,
            )
        )
        return summary_of(self, status=status, reason=reason)

    async def baseline(self) -> None:
        """Score the initial skill on val: at once, or (early work, and no
        skip_when_perfect that could skip step 0 on its result) as a job beside step 0's
        rollouts and analysts, settled before the step's candidate is built."""
        text = self.current
        if self.early and not self.skip_when_perfect_active():
            self.jobs.submit(
                "baseline", lambda: self.score_baseline(text), priority=AHEAD, fatal=True
            )
            return
        self.apply_baseline(await self.score_baseline(text))

    async def settle_baseline(self) -> None:
        """The baseline is in the state from here on (the first point that needs it)."""
        job = self.jobs.get("baseline")
        if job is not None and self.state.baseline_score is None:
            self.apply_baseline(await job.result())

    def start_spare_work(self) -> None:
        """The initial skill's test evaluation, which the finish always makes, in the
        slots the critical path leaves idle (the finish takes its result)."""
        if not self.early or not (self.cfg.final_test and self.test_items):
            return
        text, step = self.skill_text(0), self.total_steps
        self.jobs.submit(
            "test:initial",
            lambda: self.batched(
                "test",
                lambda: self.runner.run(
                    self.test_items,
                    text,
                    split="test",
                    phase="test",
                    step=step,
                    skill_role="initial",
                ),
            ),
            priority=SPARE,
        )

    async def score_baseline(self, text: str) -> dict[str, float]:
        return await self.batched("baseline", lambda: self._score_baseline(text))

    async def _score_baseline(self, text: str) -> dict[str, float]:
        if self.cfg.gate.repeats > 1:  # scored as every candidate will be: N repeats, mean
            gated = await self.runner.score_with_gate(
                self.val_items,
                text,
                best=-math.inf,
                gate_cfg=self.cfg.gate.model_copy(update={"early_decide": False}),
                phase="baseline",
                step=-1,
            )
            return {i.id: gated.item_metrics[i.id] for i in self.val_items}
        results = await self.runner.run(
            self.val_items, text, split="val", phase="baseline", step=-1
        )
        return self.metric_of(results)

    def apply_baseline(self, metrics: dict[str, float]) -> None:
        s = self.state
        s.baseline_score = s.best_score = mean(list(metrics.values()))
        s.baseline_items = dict(metrics)
        s.best_items = dict(metrics)
        self.persist()
        self.budget_event()


# --------------------------------------------------------------------------- entry point


async def run_training(
    config: Config,
    *,
    run_dir: RunDirectory,
    bus: EventBus,
    client=None,
    env: Environment,
    strategy: OptimizerStrategy | None = None,
    stager: Stager | None = None,
    initial_skill: str | None = None,
    stop: asyncio.Event | None = None,
    executor: Executor | None = None,
    sequential: bool = False,
    batch_wait: bool = True,
) -> RunSummary:
    """Train (or resume) the run in `run_dir`. `sequential` runs every phase one after
    the other (no early work: the order before issue 24, for comparisons); `batch_wait`
    False stops the run (exit 3, resumable) instead of waiting for a pending batch. Takes the directory's owner lock unless
    the caller holds it. When resuming, `initial_skill` is ignored: the run continues from
    the skills saved in the directory (skills/v0000.md is the initial one). Budget cap or `stop` → a "stopped", resumable summary; an
    unexpected exception → a RunFailed event, then re-raised."""
    took_lock = not run_dir.locked
    if took_lock:
        run_dir.acquire()
    own_client = client is None
    own_executor = executor is None
    training: Training | None = None
    try:
        run_dir.attach(bus)
        state = run_dir.read_state()
        if state is not None and state.finished:
            saved = run_dir.read_summary()
            if saved is not None:
                return RunSummary.from_dict(saved)
        if state is not None:
            check_resume_config(run_dir.read_config(), config, str(run_dir.path))
        run_dir.write_config(config.to_public_dict())
        if client is None:
            client = build_client_with_budget_events(config, bus)
        check_cost_cap_is_priced(config, client)
        strategy = strategy or choose_strategy(config, client)
        check_strategy_merges(config, strategy)
        stager = stager or RunDirStager(run_dir.staged_dir)
        if executor is None:
            executor = open_executor(config, env, ledger=client.ledger)
        training = Training(
            config,
            run_dir,
            bus,
            client,
            env,
            strategy,
            stager,
            stop,
            executor,
            sequential=sequential,
            batch_wait=batch_wait,
        )
        return await training.run(initial_skill)
    except BaseException as exc:
        if (
            training is not None
            and training.state is not None
            and not isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
        ):
            with contextlib.suppress(Exception):  # the original error matters more
                training.abandon_step("failed", str(exc))
            bus.emit(RunFailed(error=f"{type(exc).__name__}: {exc}", step=training.state.next_step))
        if isinstance(exc, RetriesExhausted):
            # Target outages in scoring phases arrive as RolloutsFailed (exit 1, resumable);
            # an optimizer or judge outage gets the same treatment, not "bad input".
            raise ModelUnavailable(
                f"{exc}; the run is resumable: rerun the same command once the model answers"
            ) from exc
        raise
    finally:
        if training is not None:
            training.cache.close()
            if training.client.ledger.journal is not None:
                training.client.ledger.journal.close()
                training.client.ledger.journal = None
        if own_executor and executor is not None:
            executor.close()
        if own_client and client is not None:
            await client.aclose()
        run_dir.detach()
        if took_lock:
            run_dir.release()
