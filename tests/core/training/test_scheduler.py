"""The run's jobs (core/training/scheduler.py): released after their dependencies, their
calls at their priority, failures propagated as the old order would have raised them, and
no task left behind whatever ends the run."""

from __future__ import annotations

import asyncio

import pytest

from core.models.priority_pool import AHEAD, CRITICAL, PRIORITY, SPARE, PriorityPool
from core.training.scheduler import Jobs


class Boom(Exception):
    pass


async def until(condition) -> None:
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never held")


async def test_a_job_starts_once_its_dependencies_have_succeeded():
    jobs = Jobs()
    log: list[str] = []
    release = asyncio.Event()

    async def first() -> int:
        log.append("first started")
        await release.wait()
        log.append("first done")
        return 1

    async def second() -> int:
        log.append("second started")
        return 2

    async def main() -> tuple[int, int]:
        a = jobs.submit("a", first)
        b = jobs.submit("b", second, after=[a])
        await until(lambda: log)
        assert log == ["first started"]  # b waits for a
        release.set()
        return await a.result(), await b.result()

    assert await jobs.run(main()) == (1, 2)
    assert log == ["first started", "first done", "second started"]


async def test_a_failed_dependency_fails_the_dependent_job_with_its_exception():
    jobs = Jobs()
    ran: list[str] = []

    async def failing() -> None:
        raise Boom("first")

    async def never() -> None:
        ran.append("dependent")

    async def main() -> None:
        a = jobs.submit("a", failing)
        b = jobs.submit("b", never, after=[a])
        with pytest.raises(Boom, match="first"):
            await b.result()
        assert a.failed and b.failed

    await jobs.run(main())
    assert ran == []


async def test_jobs_wait_for_pool_slots_at_their_priority():
    pool = PriorityPool(1)
    lane = pool.lane(1)
    order: list[str] = []
    holder_in, holder_out = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with lane:
            holder_in.set()
            await holder_out.wait()

    async def call(name: str) -> None:
        async with lane:
            order.append(f"{name}@{PRIORITY.get()}")

    jobs = Jobs()

    async def main() -> None:
        held = jobs.submit("hold", hold)
        await holder_in.wait()
        started = [
            jobs.submit("spare", lambda: call("spare"), priority=SPARE),
            jobs.submit("ahead", lambda: call("ahead"), priority=AHEAD),
        ]
        await until(lambda: len(pool._waiters) == 2)
        critical = asyncio.create_task(call("critical"))  # the main flow's own call
        await until(lambda: len(pool._waiters) == 3)
        holder_out.set()
        await asyncio.gather(held.result(), critical, *(j.result() for j in started))

    await jobs.run(main())
    assert order == [f"critical@{CRITICAL}", f"ahead@{AHEAD}", f"spare@{SPARE}"]


async def test_a_fatal_job_failing_cancels_the_main_flow_and_fails_the_run():
    jobs = Jobs()
    main_cancelled = asyncio.Event()
    spare_cancelled = asyncio.Event()

    async def baseline() -> None:
        await asyncio.sleep(0)
        raise Boom("baseline failed")

    async def spare() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            spare_cancelled.set()
            raise

    async def main() -> None:
        jobs.submit("spare", spare, priority=SPARE)
        jobs.submit("baseline", baseline, priority=AHEAD, fatal=True)
        try:
            await asyncio.Event().wait()  # the step, which never gets to the baseline
        except asyncio.CancelledError:
            main_cancelled.set()
            raise

    with pytest.raises(Boom, match="baseline failed"):
        await jobs.run(main())
    assert main_cancelled.is_set() and spare_cancelled.is_set()
    assert all(job.task.done() for job in jobs._jobs.values())  # no orphan task


async def test_the_main_flow_failing_first_waits_for_a_fatal_job_whose_failure_wins():
    """A target outage fails the baseline and the train rollouts alike: the run reports the
    baseline's failure, the one the old order (baseline first) reported."""
    jobs = Jobs()
    release = asyncio.Event()

    async def baseline() -> None:
        await release.wait()
        raise Boom("baseline")

    async def main() -> None:
        jobs.submit("baseline", baseline, fatal=True)
        await asyncio.sleep(0)
        release.set()
        raise ValueError("train rollouts")

    with pytest.raises(Boom, match="baseline"):
        await jobs.run(main())

    jobs = Jobs()

    async def good_baseline() -> float:
        return 0.5

    async def failing_main() -> None:
        jobs.submit("baseline", good_baseline, fatal=True)
        raise ValueError("train rollouts")

    with pytest.raises(ValueError, match="train rollouts"):
        await jobs.run(failing_main())


async def test_a_spare_jobs_failure_waits_for_whoever_needs_its_result():
    jobs = Jobs()

    async def test_eval() -> None:
        raise Boom("test outage")

    async def main() -> str:
        job = jobs.submit("test:initial", test_eval, priority=SPARE)
        await until(lambda: job.task.done())
        assert job.failed  # the run goes on: the finish redoes it and fails there, if at all
        return "finished"

    assert await jobs.run(main()) == "finished"


async def test_cancelling_the_run_cancels_the_main_flow_and_every_job():
    jobs = Jobs()
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    async def main() -> None:
        jobs.submit("spare", forever, priority=SPARE)
        await asyncio.Event().wait()

    run = asyncio.create_task(jobs.run(main()))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert jobs._main is not None and jobs._main.cancelled()
    assert all(job.task.cancelled() for job in jobs._jobs.values())
