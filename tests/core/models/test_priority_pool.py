"""A role's pool hands a freed slot to the waiting call of highest priority (issue 24):
early work fills idle slots and never queues ahead of the critical path."""

from __future__ import annotations

import asyncio

import pytest

from core.models.priority_pool import (
    AHEAD,
    CRITICAL,
    GRACE_S,
    PRIORITY,
    SPARE,
    Lane,
    PriorityPool,
)


def one_role(capacity: int) -> Lane:
    """A pool of `capacity` slots with a single role on it."""
    return PriorityPool(capacity).lane(capacity)


async def holders(pool: Lane, order: list[str], name: str, priority: int, gate):
    PRIORITY.set(priority)  # this task's context only
    async with pool:
        order.append(name)
        await gate.wait()


async def queued(lane: Lane, waiting: int) -> None:
    """Yield until `waiting` waiters are queued (a condition, not a sleep)."""
    for _ in range(1000):
        if sum(1 for *_, f in lane.pool._waiters if not f.done()) >= waiting:
            return
        await asyncio.sleep(0)
    raise AssertionError("waiters never queued")


async def test_a_freed_slot_goes_to_the_highest_priority_then_first_come():
    pool = one_role(1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in ("first", "spare", "ahead", "crit1", "crit2")}
    first = asyncio.create_task(holders(pool, order, "first", CRITICAL, gates["first"]))
    while not order:
        await asyncio.sleep(0)
    tasks = []
    for name, prio in (("spare", SPARE), ("ahead", AHEAD), ("crit1", CRITICAL), ("crit2", 0)):
        tasks.append(asyncio.create_task(holders(pool, order, name, prio, gates[name])))
        await queued(pool, len(tasks))
    for name in ("first", "crit1", "crit2", "ahead", "spare"):
        gates[name].set()
    await asyncio.gather(first, *tasks)
    assert order == ["first", "crit1", "crit2", "ahead", "spare"]
    assert pool.busy == 0


async def test_capacity_holds_and_cancelled_waiters_give_nothing_away():
    pool = one_role(2)
    inside = 0
    most = 0
    release = asyncio.Event()

    async def call() -> None:
        nonlocal inside, most
        async with pool:
            inside += 1
            most = max(most, inside)
            await release.wait()
            inside -= 1

    tasks = [asyncio.create_task(call()) for _ in range(5)]
    await queued(pool, 3)
    tasks[2].cancel()  # a waiter cancelled before its turn
    with pytest.raises(asyncio.CancelledError):
        await tasks[2]
    release.set()
    await asyncio.gather(*tasks[:2], *tasks[3:])
    assert most == 2 and pool.busy == 0


async def test_a_slot_granted_to_a_task_cancelled_meanwhile_is_given_back():
    pool = one_role(1)
    await pool.acquire()
    waiter = asyncio.create_task(pool.acquire())
    await queued(pool, 1)
    pool.release()  # granted to the waiter, which has not run yet...
    waiter.cancel()  # ...and is cancelled before it does
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert pool.busy == 0
    await asyncio.wait_for(pool.acquire(), 1)  # the slot is free again


async def test_early_work_leaves_free_slots_to_critical_calls_that_ask_at_once():
    """The early jobs are submitted just before step 0's rollouts start: taking free slots
    at once, they held a whole round of them (the rollouts, which the analysts wait for,
    ran a round late). Now the critical calls that ask within the grace go first."""
    pool = one_role(2)
    order: list[str] = []
    gate = asyncio.Event()
    spare = asyncio.create_task(holders(pool, order, "spare", SPARE, gate))
    await asyncio.sleep(0)  # the early job asks first, with both slots free
    await asyncio.sleep(0)
    crit = [asyncio.create_task(holders(pool, order, f"crit{i}", CRITICAL, gate)) for i in (1, 2)]
    while len(order) < 2:
        await asyncio.sleep(0)
    assert sorted(order) == ["crit1", "crit2"]
    gate.set()
    await asyncio.gather(spare, *crit)
    assert order[-1] == "spare" and pool.busy == 0


async def test_early_work_takes_an_idle_slot_after_the_grace():
    """No critical call comes (a resumed run's finish): the early work runs anyway."""
    pool = one_role(1)
    order: list[str] = []
    gate = asyncio.Event()
    gate.set()
    await asyncio.wait_for(holders(pool, order, "ahead", AHEAD, gate), timeout=5)
    assert order == ["ahead"] and pool.busy == 0


async def test_a_slot_freed_by_a_critical_call_waits_for_the_next_critical_call():
    """A rollout worker releases its slot, scores the result, then asks for the next item:
    handed to the queued early work at once, the slot held the train rollouts back a whole
    call each time (measured on the bench: baseline calls finished between them)."""
    pool = one_role(1)
    order: list[str] = []
    gate = asyncio.Event()
    gate.set()
    await pool.acquire()  # a critical call in flight
    early = asyncio.create_task(holders(pool, order, "ahead", AHEAD, gate))
    await queued(pool, 1)
    pool.release()
    await asyncio.sleep(0)  # the worker between two calls
    await asyncio.sleep(0)
    await holders(pool, order, "next", CRITICAL, gate)
    await asyncio.wait_for(early, timeout=5)  # and the early work still runs, later
    assert order == ["next", "ahead"] and pool.busy == 0


class Clock:
    """A hand-moved clock: how long a call held its slot, without waiting for it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_the_grace_is_never_longer_than_the_longest_call():
    """Early work that takes a slot delays a critical call by one call at most: after
    millisecond calls (a test double, a fast local model) it waited GRACE_S each time."""
    clock = Clock()
    lane = PriorityPool(2, clock=clock).lane(2)
    assert lane.pool.grace_s == GRACE_S  # no call has ended yet
    async with lane:
        clock.now += 0.004
    assert lane.pool.grace_s == pytest.approx(0.004)
    async with lane:
        clock.now += 0.001  # a shorter call keeps the longest
    assert lane.pool.grace_s == pytest.approx(0.004)
    async with lane:
        clock.now += 3.0  # a real model's call: the whole grace again
    assert lane.pool.grace_s == GRACE_S


async def test_after_quick_calls_early_work_does_not_wait_for_a_late_critical_call():
    """Calls that end at once: the early job takes the idle slot before a critical call
    that asks a while later (which then waits one quick call, not GRACE_S). The call's
    length is set on a hand-moved clock, so a loaded machine cannot stretch it."""
    clock = Clock()
    pool = PriorityPool(1, clock=clock).lane(1)
    order: list[str] = []
    gate = asyncio.Event()
    gate.set()
    async with pool:  # a critical call, answered in a millisecond
        clock.now += 0.001
    early = asyncio.create_task(holders(pool, order, "ahead", AHEAD, gate))
    await asyncio.sleep(GRACE_S / 5)
    await holders(pool, order, "late", CRITICAL, gate)
    await early
    assert order == ["ahead", "late"] and pool.busy == 0
