"""Roles on one server share its slots, and the priorities hold across them (issue 24).

With a pool per role, a target and an optimizer on one server put the sum of their
concurrencies on it, and the server's own queue ordered them: a critical analyst call
waited behind the target's early work. Against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.priority_pool import PRIORITY, SPARE
from tests.core.models.helpers import ENV, TEST_KEY_VAR
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest


def two_roles(base_url: str, tmp_path, target: int, optimizer: int, **optimizer_role):
    def role(concurrency: int) -> dict:
        return {
            "backend": "openai",
            "base_url": base_url,
            "model": "loopback-model",
            "api_key_env": TEST_KEY_VAR,
            "timeout_s": 10.0,
            "concurrency": concurrency,
            "stream": "never",
        }

    tree = {
        "run": {"runs_dir": str(tmp_path / "runs")},
        "models": {"target": role(target), "optimizer": {**role(optimizer), **optimizer_role}},
        "cache": {"enabled": False},
    }
    return build_model_client(config_from_dict(tree), environ=ENV)


def ask(client, role: str, text: str):
    return client.complete([{"role": "user", "content": text}], role=role)


async def until(condition: Callable[[], bool]) -> None:
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


def most_at_once(requests: list[RecordedRequest]) -> int:
    edges = sorted([(r.started, 1) for r in requests] + [(r.finished, -1) for r in requests])
    inside = most = 0
    for _, step in edges:
        inside += step
        most = max(most, inside)
    return most


async def test_two_roles_on_one_server_share_its_slots_each_within_its_own(tmp_path):
    with LoopbackOpenAI(latency_s=0.1) as server:
        async with two_roles(server.base_url, tmp_path, target=1, optimizer=3) as client:
            await asyncio.gather(
                *(ask(client, "target", f"t{i}") for i in range(4)),
                *(ask(client, "optimizer", f"o{i}") for i in range(4)),
            )
        requests = list(server.requests)
    assert len(requests) == 8
    # The server is the largest concurrency of its roles (3), not their sum (4).
    assert server.max_in_flight == 3
    assert most_at_once([r for r in requests if r.last_user.startswith("t")]) == 1


async def test_a_critical_call_of_one_role_goes_before_the_early_work_of_another(tmp_path):
    """Both slots held by target calls; the target's early work queues first, then an
    optimizer call on the critical path: it waits for the server's slot (no third request
    reaches the server) and gets the first one freed."""
    released = {"hold0": threading.Event(), "hold1": threading.Event()}

    def handler(record: RecordedRequest):
        gate = released.get(record.last_user)
        if gate is not None:
            gate.wait(10)
        return None  # the echo

    async def early(client) -> None:
        PRIORITY.set(SPARE)  # this task's context only
        await ask(client, "target", "spare")

    with LoopbackOpenAI(handler) as server:
        async with two_roles(server.base_url, tmp_path, target=2, optimizer=2) as client:
            # Each role's HTTP client exists before the clock matters.
            await asyncio.gather(ask(client, "target", "warm"), ask(client, "optimizer", "warm"))
            server.reset()
            held = [asyncio.create_task(ask(client, "target", f"hold{i}")) for i in (0, 1)]
            await until(lambda: server.in_flight == 2)
            spare = asyncio.create_task(early(client))
            await asyncio.sleep(0.3)  # past the grace: it would have gone by now
            critical = asyncio.create_task(ask(client, "optimizer", "analyst"))
            await asyncio.sleep(0.3)
            arrived_while_full = len(server.requests)
            released["hold0"].set()
            await until(lambda: len(server.requests) >= 3)
            third = server.requests[2].last_user
            released["hold1"].set()
            await asyncio.gather(*held, spare, critical)
    assert arrived_while_full == 2
    assert third == "analyst"
    assert [r.last_user for r in server.requests][3:] == ["spare"]


async def test_a_hosted_api_keeps_a_pool_per_role_and_the_embedded_server_has_one(tmp_path):
    hosted = {"backend": "openai", "api_key_env": TEST_KEY_VAR, "concurrency": 2}
    embedded = {"backend": "local", "concurrency": 4}
    tree = {
        "run": {"runs_dir": str(tmp_path / "runs")},
        "models": {"target": hosted, "optimizer": hosted},
        "cache": {"enabled": False},
    }
    client = build_model_client(config_from_dict(tree), environ=ENV)
    lanes = client._slots.lane("target"), client._slots.lane("optimizer")
    assert lanes[0].pool is not lanes[1].pool

    tree["models"] = {"target": embedded, "optimizer": embedded, "local": {"parallel": 3}}
    client = build_model_client(config_from_dict(tree), environ=ENV)
    lanes = client._slots.lane("target"), client._slots.lane("optimizer")
    assert lanes[0].pool is lanes[1].pool and lanes[0].pool.capacity == 3
