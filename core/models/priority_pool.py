"""A server's concurrency slots, handed out by priority (issue 24).

A run has work on its critical path (train rollouts, analysts, the gate) and work that
only has to be done by some later point (the baseline before the first gate, the initial
skill's test evaluation before the end). Both draw from the same pool; when a slot frees
up, the waiting call of highest priority gets it, so early work fills idle slots and never
holds critical work back in the queue. A pool is a server's: roles served by one server
(both on the embedded model, or on one self-hosted base_url) draw from one pool, each
within its own `models.<role>.concurrency` (core/models/slots.py says which roles share).
A slot already taken is not preempted: a call in flight runs to its end. So early work
never takes a slot the moment it is free: it gets a free slot GRACE_S later, if no
critical call has taken it meanwhile, both at a run's start (step 0's rollouts
start a moment after the early jobs are submitted) and whenever a critical call ends
(its worker asks again for the next one a moment later). The grace is never longer than
the longest call the pool has held a slot for: early work that takes a slot delays a
critical call by at most one call, so waiting longer than a call lasts loses time (calls
answered in a millisecond, by a test double or a fast local model, waited GRACE_S each).

The priority travels in a context variable, like the ledger's stage: the scheduler
(core/training/scheduler.py) sets it for the task of an early job, and every model call
that task makes waits at that priority.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
import time
from collections.abc import Callable

# Lower numbers first. CRITICAL: the run waits on it now. AHEAD: needed later in the run
# (the baseline, by the first gate). SPARE: needed only at the end (test evaluations).
CRITICAL, AHEAD, SPARE = 0, 1, 2

# How long early work leaves a free slot for critical calls about to ask. Taking it at
# once cost a whole round of slots at a run's start (the baseline and the test ran before
# step 0's train rollouts, which the analysts wait for); the price is this delay when no
# critical call comes, e.g. a resumed run's finish.
GRACE_S = 0.25

PRIORITY: contextvars.ContextVar[int] = contextvars.ContextVar(
    "skillopt_priority", default=CRITICAL
)


def off_critical_path() -> bool:
    """Whether the current task is early work (its calls are not the current stage's)."""
    return PRIORITY.get() > CRITICAL


class PriorityPool:
    """A server's slots, handed to waiters by priority, first come first served within
    one priority. Each role draws through its own `Lane`, which also holds the role to its
    own concurrency: roles on one server share its slots, and the priorities order their
    calls together (a critical optimizer call goes before the target's early work)."""

    def __init__(self, capacity: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = max(1, capacity)
        self.busy = 0
        self.clock = clock
        self._longest_hold_s: float | None = None  # None until a call has ended
        self._waiters: list[tuple[int, int, Lane, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @property
    def grace_s(self) -> float:
        """How long early work leaves a free slot to critical calls: GRACE_S, or the
        longest call held so far if shorter."""
        if self._longest_hold_s is None:
            return GRACE_S
        return min(GRACE_S, self._longest_hold_s)

    def held(self, seconds: float) -> None:
        """A call held a slot for `seconds`."""
        self._longest_hold_s = max(seconds, self._longest_hold_s or 0.0)

    def lane(self, capacity: int) -> Lane:
        """A role's share of the slots: at most `capacity` of them at once."""
        return Lane(self, capacity)

    async def _acquire(self, lane: Lane, priority: int | None) -> None:
        rank = PRIORITY.get() if priority is None else priority
        free = self.busy < self.capacity and lane.busy < lane.capacity
        if free and rank == CRITICAL:  # no critical waiter that could run is queued
            self._grant(lane)
            return
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._waiters, (rank, next(self._order), lane, granted))
        if free:  # early work: a free slot, after the grace
            loop.call_later(self.grace_s, self._wake)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # granted, then cancelled
                self._release(lane)
            raise

    def _grant(self, lane: Lane) -> None:
        self.busy += 1
        lane.busy += 1

    def _release(self, lane: Lane) -> None:
        self.busy -= 1
        lane.busy -= 1
        self._wake(early=False)
        if self._waiters:  # a slot still free after the grace goes to early work
            asyncio.get_running_loop().call_later(self.grace_s, self._wake)

    def _wake(self, early: bool = True) -> None:
        """Grant free slots in priority order, passing over the waiters whose role is at
        its own limit (they keep their place); with `early` False, to critical calls only.
        Why: a slot freed by a critical call is wanted again a moment later (a rollout
        worker scores its result, then asks for the next item); handed to early work at
        once, it held back the train rollouts a whole call each time (measured: the
        baseline's calls finished between step 0's train rollouts)."""
        passed = []
        while self.busy < self.capacity and self._waiters:
            waiter = heapq.heappop(self._waiters)
            rank, _, lane, granted = waiter
            if granted.done():  # its waiter was cancelled
                continue
            if lane.busy >= lane.capacity or (rank > CRITICAL and not early):
                passed.append(waiter)
                continue
            self._grant(lane)
            granted.set_result(None)
        for waiter in passed:
            heapq.heappush(self._waiters, waiter)


class Lane:
    """One role's way into a pool: `async with lane:` takes a slot at the context's
    priority (or `acquire(priority)`), within the role's own limit, and tells the pool how
    long the call held it."""

    def __init__(self, pool: PriorityPool, capacity: int) -> None:
        self.pool = pool
        self.capacity = max(1, capacity)
        self.busy = 0
        self._held_since: dict[asyncio.Task | None, float] = {}

    async def acquire(self, priority: int | None = None) -> None:
        await self.pool._acquire(self, priority)

    def release(self) -> None:
        self.pool._release(self)

    async def __aenter__(self) -> Lane:
        await self.acquire()
        self._held_since[asyncio.current_task()] = self.pool.clock()
        return self

    async def __aexit__(self, *exc: object) -> None:
        since = self._held_since.pop(asyncio.current_task(), None)
        if since is not None:  # before the release, whose wake waits the grace
            self.pool.held(self.pool.clock() - since)
        self.release()
