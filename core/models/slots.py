"""Which roles share a server's slots, and how many the server has (issue 24).

Roles on one server compete for its slots whatever our pools say: with a pool per role, a
target and an optimizer of 4 each on the embedded 4-slot server put up to 8 requests on
it, and the server's own first-come queue, not our priorities, ordered them (a critical
analyst behind the target's early test evaluation). So roles that are served by one
server draw from one pool of its slots, and the priorities hold across them; each role
still stays within its own `concurrency`.

Shared: the embedded server (one per process; `models.local.parallel` slots) and a
self-hosted OpenAI-compatible server, i.e. one `base_url` serving one `model` (its slots
unknown here: the largest `concurrency` of the roles on it). A hosted API (OpenAI,
Anthropic, Azure, a coding-agent CLI) is not a set of slots the roles take from each
other: each role keeps a pool of its own there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from core.models.priority_pool import Lane, PriorityPool


class Slots:
    """Every role's lane into its server's pool, one set per running event loop (an
    asyncio future belongs to the loop it was made on; see openai_backend.PerLoop)."""

    def __init__(self, roles: Iterable[tuple[str, str, int, int]]) -> None:
        """`roles`: (role, server, concurrency, server slots) per role; server "" = a pool
        of the role's own, server slots 0 = unknown."""
        self._roles = list(roles)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lanes: dict[str, Lane] = {}

    def capacity(self, server: str) -> int:
        """The slots of a shared server: what it says it has, else the most any of its
        roles may use at once."""
        mine = [(c, s) for _, key, c, s in self._roles if key == server]
        known = [s for _, s in mine if s]
        return min(known) if known else max(c for c, _ in mine)

    def lane(self, role: str) -> Lane:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._lanes, self._loop = self._build(), loop
        return self._lanes[role]

    def _build(self) -> dict[str, Lane]:
        pools: dict[str, PriorityPool] = {}
        lanes = {}
        for role, server, concurrency, _ in self._roles:
            if not server:
                lanes[role] = PriorityPool(concurrency).lane(concurrency)
                continue
            if server not in pools:
                pools[server] = PriorityPool(self.capacity(server))
            lanes[role] = pools[server].lane(concurrency)
        return lanes
