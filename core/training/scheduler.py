"""The run's jobs: work released as soon as its inputs exist, at a priority (issue 24).

A training run is a chain of decisions (rollouts → analysts → gate → next step), and beside
it work whose inputs are already fixed: the baseline val (the initial skill, needed by the
first gate) and the initial skill's test evaluation (needed only at the end). `Jobs` starts
such work as a task at once; its model calls wait for a slot of their role's pool at the
job's priority (core/models/priority_pool.py), so they fill the slots the critical path
leaves idle and never queue ahead of it. Nothing here decides anything: a job computes what
the sequential code would have computed, and the run takes its result where it used to
compute it.

Failures: a job started with `fatal=True` (the baseline, which used to run before
everything else) fails the run with its own exception: it cancels the main flow when it
fails, and when the main flow fails first (a target outage fails the train rollouts as
well), the run waits for the job and raises the job's failure if there is one — the
failure the old order raised. Any other job's failure is kept for whoever awaits its
result. A main flow that fails lets the jobs in flight end before it raises: what they
paid for reaches the rollout cache, and the resume does not pay for it again. `run` cancels and awaits every job still
running when the main flow ends, however it ends, so no task outlives the run.

Only the order changes, never the work: the executor that runs a job is the event loop
here; a job is a coroutine factory, so another executor could run the same jobs elsewhere.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, Generic, TypeVar

from core.models.priority_pool import CRITICAL, PRIORITY

T = TypeVar("T")


class Job(Generic[T]):
    """One piece of work, running as a task from the moment it is submitted (after the
    jobs it depends on)."""

    def __init__(self, name: str, priority: int, task: asyncio.Task[T], fatal: bool) -> None:
        self.name = name
        self.priority = priority
        self.task = task
        self.fatal = fatal

    @property
    def failed(self) -> bool:
        task = self.task
        return task.done() and not task.cancelled() and task.exception() is not None

    async def result(self) -> T:
        """The job's result, or its exception. Awaiting it does not make the job the
        caller's: a caller cancelled meanwhile leaves the job running."""
        return await asyncio.shield(self.task)


class Jobs:
    def __init__(self) -> None:
        self._jobs: dict[str, Job[Any]] = {}
        self._main: asyncio.Task[Any] | None = None
        self._fatal: BaseException | None = None

    def submit(
        self,
        name: str,
        make: Callable[[], Awaitable[T]],
        *,
        priority: int = CRITICAL,
        after: Iterable[Job[Any]] = (),
        fatal: bool = False,
    ) -> Job[T]:
        """Start `make()` once every job in `after` has succeeded (a failed dependency
        fails this job with the same exception). Its model calls wait at `priority`."""
        deps = list(after)

        async def body() -> T:
            for dep in deps:
                await dep.result()
            return await make()

        context = contextvars.copy_context()
        context.run(PRIORITY.set, priority)
        task = asyncio.get_running_loop().create_task(body(), name=name, context=context)
        job = Job(name, priority, task, fatal)
        self._jobs[name] = job
        task.add_done_callback(lambda _t: self._done(job))
        return job

    def get(self, name: str) -> Job[Any] | None:
        return self._jobs.get(name)

    def _done(self, job: Job[Any]) -> None:
        if not job.fatal or not job.failed or self._fatal is not None:
            return
        self._fatal = job.task.exception()
        if self._main is not None and not self._main.done():
            self._main.cancel()

    async def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run the main flow; a fatal job's failure ends it with that failure. Every job
        still running afterwards is cancelled and awaited."""
        self._main = asyncio.get_running_loop().create_task(main)
        try:
            try:
                return await asyncio.shield(self._main)
            except asyncio.CancelledError:
                if self._fatal is None:  # the caller was cancelled: so is the main flow
                    self._main.cancel()
                    await asyncio.gather(self._main, return_exceptions=True)
                    raise
            if not self._main.done():  # defensive: shield returned early
                await asyncio.gather(self._main, return_exceptions=True)
            if not self._main.cancelled() and self._main.exception() is None:
                return self._main.result()
            raise self._fatal from None
        except Exception:
            # The main flow failed. The jobs in flight end first: their calls are paid for
            # and their results cached for the resume (cancelled, they would be paid again).
            # A fatal job came first in the old order, so its failure, if any, is the run's.
            # A fatal job's own failure ends the run at once: the rest is cancelled (waiting
            # for them could be a whole test evaluation, or forever).
            if self._fatal is None:
                await self.settle()
            earlier = await self._fatal_failure()
            if earlier is not None:
                raise earlier from None
            raise
        finally:
            await self.aclose()

    async def _fatal_failure(self) -> BaseException | None:
        for job in list(self._jobs.values()):
            if job.fatal:
                await asyncio.gather(job.task, return_exceptions=True)
                if job.failed:
                    return job.task.exception()
        return self._fatal

    async def settle(self) -> None:
        """Wait for every job to end, however it ends."""
        tasks = [job.task for job in self._jobs.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def cancel(self) -> None:
        """Ask every running job to stop (from synchronous code, e.g. just before the run
        reports that it stopped: no job logs anything after that)."""
        for job in self._jobs.values():
            job.task.cancel()

    async def aclose(self) -> None:
        self.cancel()
        tasks = [job.task for job in self._jobs.values()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
