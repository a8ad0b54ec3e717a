"""`run.executor: ray`: each rollout is a Ray task; every model call it makes comes back to
this process (the driver).

Why the calls come back: the driver owns the response cache, the ledger and the budget.
A call made on the driver is cached the moment it is paid, so a worker lost mid-task (its
task retried elsewhere by Ray) replays the calls it had made from the cache instead of
paying them again, and a call still in flight when the worker died is answered once and
shared with the retry. The call cap holds exactly with any number of tasks in flight,
because every call reserves against it on the driver (the ledger's reserve_call) before
it is sent. And the model credentials
never leave this process: no key in a runtime_env, where the Ray dashboard would show it
(the dashboard is not started for a local Ray either).

What runs on the workers: the environment's rollout (its prompts, tool loops, ALFWorld
episodes, sandboxed programs, scoring), with the skill text sent with each task. For an
agent environment, each agent attempt (its workspace, the CLI, the task's check) runs on a
worker and the rollout around it here (core/training/ray_agents.py). The environment
object is shipped once per run; the modules and pip packages it needs there
(`worker_needs`) go in the job's runtime_env, and the files it reads travel as packed
copies to workers that lack them (core/training/ray_files.py).

Which task gets a freed worker: the driver sends at most as many tasks as the cluster has
CPUs and holds the rest in a priority pool (core/models/priority_pool.py), so the run's
critical path goes before its early work, as it does for the model's slots.

The call path: the task's `complete` puts the call on a broker actor under the task's
tag; the driver, which waits on that tag while the task runs, makes the call with the
runner's own `complete` (so stage, cache scope and truncation notes are as local) and
hands the outcome (a Completion, or the error to raise) back through the broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import logging
import time
import uuid
from typing import Any

import ray

from core.environment.contract import (
    Environment,
    RolloutResult,
    TaskItem,
    needs_agent,
    worker_needs,
)
from core.errors import UserError
from core.models.priority_pool import PriorityPool
from core.training.in_flight import in_flight
from core.training.ray_agents import run_on_worker
from core.training.ray_files import ShippedPath, localize, ship

# System failures (a worker process or node lost) are retried on another worker; an
# exception the rollout raised is returned as a value and never retried (it is the run's).
TASK_RETRIES = 3
FORGET_WAIT_S = 5.0  # how long a finished task's last take waits for the broker's sentinel
WORKERS_REFRESH_S = 5.0  # how often the dispatch gate looks up the cluster's CPUs


# The cluster and code this process joined (a JSON key), so a second run in one process
# (the TUI, the tests) reuses the connection instead of starting its workers again.
_JOINED: list[str | None] = [None]


class WorkerMissingFiles(UserError):
    """A worker cannot read a file the environment declared in worker_needs.files."""


@ray.remote(num_cpus=0)
class CallBroker:
    """The mailbox between the tasks and the driver: a task's call waits here until the
    driver, which takes the calls of each tag it dispatched, answers it."""

    def __init__(self) -> None:
        self._queues: dict[str, asyncio.Queue] = {}
        self._waiting: dict[int, asyncio.Future] = {}
        self._next = 0

    def _queue(self, tag: str) -> asyncio.Queue:
        return self._queues.setdefault(tag, asyncio.Queue())

    async def call(self, tag: str, args: tuple, kwargs: dict) -> tuple[str, Any]:
        self._next += 1
        rid = self._next
        future = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        await self._queue(tag).put((rid, args, kwargs))
        try:
            return await future
        finally:
            self._waiting.pop(rid, None)

    async def take(self, tag: str) -> tuple[int, tuple, dict] | None:
        return await self._queue(tag).get()

    async def answer(self, rid: int, outcome: tuple[str, Any]) -> None:
        future = self._waiting.get(rid)
        if future is not None and not future.done():
            future.set_result(outcome)

    async def forget(self, tag: str) -> None:
        queue = self._queues.pop(tag, None)
        if queue is not None:
            queue.put_nowait(None)  # ends the driver's last take of this tag


@ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False)
def rollout_task(
    env: Environment,
    item: TaskItem,
    skill_text: str,
    broker: Any,
    tag: str,
    files: tuple[ShippedPath, ...],
) -> tuple[str, Any]:
    """One rollout on a worker: ("ok", RolloutResult) or ("raise", the exception)."""
    item, missing = localize(item, files)
    if missing:
        node = ray.get_runtime_context().get_node_id()[:8]
        return (
            "raise",
            WorkerMissingFiles(
                f"a Ray worker (node {node}) {missing}, which the {env.name} environment needs"
            ),
        )

    async def complete(*args: Any, **kwargs: Any) -> Any:
        kind, value = await broker.call.remote(tag, args, kwargs)
        if kind == "raise":
            raise value
        return value

    try:
        return "ok", asyncio.run(env.rollout(item, skill_text, complete))
    except Exception as exc:  # noqa: BLE001 - the driver raises it where the run expects it
        return "raise", exc


def _quiet(future: asyncio.Future) -> None:
    """Retrieve a result nobody waits for, so asyncio does not report it as lost."""
    if not future.cancelled():
        future.exception()


async def _awaited(ref: Any) -> Any:
    return await ref


def module_dir(name: str) -> str:
    """The folder of the top-level package `name`, as py_modules ships it (a namespace
    package's own folder: the one outside site-packages, where the project's code is)."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise UserError(f"worker_needs.modules names {name!r}, which this Python cannot import")
    if spec.submodule_search_locations is None:  # a single-file module
        return str(spec.origin)
    places = [p for p in spec.submodule_search_locations if "site-packages" not in p]
    return (places or list(spec.submodule_search_locations))[0]


def _call_key(args: tuple, kwargs: dict) -> str:
    return json.dumps([args, kwargs], sort_keys=True, default=repr, ensure_ascii=False)


def cluster_cpus() -> int:
    """The CPUs the joined cluster has now: its workers, for Ray tasks of 1 CPU each."""
    return int(ray.cluster_resources().get("CPU", 0))


class RayExecutor:
    def __init__(self, *, slots: int, started_local: bool, address: str | None, ledger) -> None:
        self.slots = slots
        self.started_local = started_local
        self.address = address
        self.ledger = ledger
        self.broker = CallBroker.remote()
        self._envs: dict[int, asyncio.Future] = {}
        self.dispatched = 0
        self.calls_served = 0
        # Tasks past the cluster's CPUs would wait in Ray's queue, first come first
        # served, where a spare job's rollout (the initial skill's test) could take a
        # freed worker from a critical one; they wait here instead, by priority.
        self._workers = PriorityPool(slots).lane(slots)
        self._sized_at = -WORKERS_REFRESH_S

    @classmethod
    def connect(
        cls, address: str | None, *, slots: int, env: Environment | None = None, ledger=None
    ) -> RayExecutor:
        """Join the cluster at `address` (null: start a local Ray sized to the target's
        concurrency, no dashboard), with a runtime_env carrying the project's code and the
        environment's worker_needs."""
        needs = worker_needs(env) if env is not None else None
        names = ["core", "envs", *(needs.modules if needs else ())]
        runtime_env: dict[str, Any] = {"py_modules": [module_dir(n) for n in names]}
        if needs and needs.packages:
            runtime_env["pip"] = list(needs.packages)
        options: dict[str, Any] = {
            "runtime_env": runtime_env,
            "logging_level": logging.WARNING,
            "log_to_driver": False,
        }
        joined = json.dumps([address, runtime_env["py_modules"], runtime_env.get("pip")])
        if ray.is_initialized() and address is not None and _JOINED[0] == joined:
            pass  # this process is on that cluster with that code already (a second run)
        else:
            if ray.is_initialized():
                ray.shutdown()
            if address is None:
                ray.init(num_cpus=slots, include_dashboard=False, **options)
            else:
                ray.init(address=address, **options)
            _JOINED[0] = joined
        return cls(slots=slots, started_local=address is None, address=address, ledger=ledger)

    async def _env_ref(self, env: Environment) -> tuple[Any, tuple[ShippedPath, ...]]:
        """The environment and its declared folders in the object store, put there once
        per run by the first rollout; packing a large folder takes seconds, so it runs in
        a thread and the run's other calls go on meanwhile."""
        got = self._envs.get(id(env))
        if got is None:
            got = self._envs[id(env)] = asyncio.ensure_future(
                asyncio.to_thread(lambda: (ray.put(env), ship(tuple(worker_needs(env).files))))
            )
        return await asyncio.shield(got)  # a cancelled rollout leaves it to the others

    async def rollout(
        self, env: Environment, item: TaskItem, skill_text: str, complete: Any
    ) -> RolloutResult:
        if needs_agent(env):
            # The rollout (staging the item's files, scoring the outcome) stays here; each
            # agent attempt (workspace, CLI, check) runs on a worker, reserved here first.
            async def on_worker(task: Any, skill: str) -> Any:
                self._size_workers()
                async with self._workers:
                    self.dispatched += 1
                    return await complete(task, skill, runner=run_on_worker)

            return await env.rollout(item, skill_text, on_worker)
        self._size_workers()
        async with self._workers:  # critical rollouts take a freed worker first
            return await self._dispatch(env, item, skill_text, complete)

    def _size_workers(self) -> None:
        """The worker pool's size follows the cluster's CPUs (a cluster may grow or
        shrink under a run), looked up at most every WORKERS_REFRESH_S."""
        now = time.monotonic()
        if now - self._sized_at < WORKERS_REFRESH_S:
            return
        self._sized_at = now
        with contextlib.suppress(Exception):  # keep the last size if the lookup fails
            # A cluster scaling up from no workers still gets one task to scale on.
            self._workers.pool.capacity = max(1, cluster_cpus())

    async def _dispatch(
        self, env: Environment, item: TaskItem, skill_text: str, complete: Any
    ) -> RolloutResult:
        if self.ledger is not None:  # nothing is dispatched past a reached cap
            self.ledger.check_budget()
        env_ref, files = await self._env_ref(env)
        tag = uuid.uuid4().hex
        ref = rollout_task.remote(env_ref, item, skill_text, self.broker, tag, files)
        self.dispatched += 1
        shared: dict[str, asyncio.Future] = {}
        serving: set[asyncio.Task] = set()

        async def outcome(args: tuple, kwargs: dict) -> tuple[str, Any]:
            try:
                return "ok", await complete(*args, **kwargs)  # the client reserves the call
            except Exception as exc:  # noqa: BLE001 - raised again in the task
                return "raise", exc

        async def serve(rid: int, args: tuple, kwargs: dict) -> None:
            # A retried task sends its calls again: the same call, still in flight for
            # the lost attempt, is answered once for both.
            key = _call_key(args, kwargs)
            if key not in shared:
                shared[key] = asyncio.ensure_future(outcome(args, kwargs))
                self.calls_served += 1
            got = await asyncio.shield(shared[key])
            await self.broker.answer.remote(rid, got)

        finished = asyncio.ensure_future(_awaited(ref))
        take = asyncio.ensure_future(_awaited(self.broker.take.remote(tag)))
        try:
            while not finished.done():
                done, _ = await asyncio.wait({finished, take}, return_when="FIRST_COMPLETED")
                if take in done and take.result() is not None:
                    task = asyncio.create_task(serve(*take.result()))
                    serving.add(task)
                    task.add_done_callback(serving.discard)
                    take = asyncio.ensure_future(_awaited(self.broker.take.remote(tag)))
            kind, value = finished.result()
        finally:
            for task in list(serving):
                task.cancel()
            for future in shared.values():
                future.cancel()
            if not finished.done():  # cancelled (the early gate decided): stop the task
                ray.cancel(ref)
                finished.add_done_callback(_quiet)
            # The last take ends on forget's sentinel rather than by cancelling its ref
            # (a Ray client's stream thread raises on a ref cancelled under it).
            self.broker.forget.remote(tag)
            if not take.done():
                with contextlib.suppress(Exception):
                    await asyncio.wait({take}, timeout=FORGET_WAIT_S)
            if not take.done():
                take.cancel()
            take.add_done_callback(_quiet)
        if kind == "raise":
            raise value
        return value

    def describe(self) -> str:
        try:
            cpus = cluster_cpus()
            nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
        except Exception:  # noqa: BLE001 - a description must not fail the run
            cpus, nodes = 0, 0
        where = "a local Ray started for the run" if self.started_local else self.address
        sent = min(self.slots, cpus) if cpus else self.slots  # the dispatch gate's bound
        return (
            f"ray, {cpus} worker{'s' if cpus != 1 else ''} on {nodes} "
            f"node{'s' if nodes != 1 else ''} ({where}), {in_flight(sent)}"
        )

    def close(self) -> None:
        """A local Ray stops with its run; a cluster's connection stays for the process's
        next run (Ray disconnects at exit)."""
        if self.started_local and ray.is_initialized():
            ray.shutdown()
            _JOINED[0] = None
