"""Response cache and budget cap, end to end through ModelClient and a loopback server."""

from __future__ import annotations

import asyncio

import pytest

from core.models.factory import build_model_client
from core.models.types import BudgetExceeded
from tests.core.models.helpers import ENV, USER, loopback_config
from tests.support.loopback_openai import LoopbackOpenAI, Reply


@pytest.fixture
def server():
    with LoopbackOpenAI() as srv:
        yield srv


async def test_repeat_is_a_cache_hit_that_never_reaches_the_server(server, tmp_path):
    server.queue(Reply("Paris", input_tokens=10, output_tokens=1))
    config = loopback_config(server.base_url, tmp_path)
    async with build_model_client(config, environ=ENV) as client:
        first = await client.complete(USER, role="target")
        second = await client.complete(USER, role="target")
    assert len(server.requests) == 1
    assert not first.cached and second.cached
    assert second.text == "Paris" and second.usage == first.usage
    snap = client.ledger.snapshot()
    assert (snap.calls, snap.cache_hits, snap.input_tokens, snap.output_tokens) == (2, 1, 10, 1)
    assert snap.per_role["target"]["cache_hits"] == 1


async def test_resumed_run_with_a_new_client_respends_nothing(server, tmp_path):
    config = loopback_config(server.base_url, tmp_path)
    async with build_model_client(config, environ=ENV) as client:
        await client.complete(USER, role="target")
    async with build_model_client(config, environ=ENV) as again:
        hit = await again.complete(USER, role="target")
    assert hit.cached and len(server.requests) == 1
    assert again.ledger.snapshot().input_tokens == 0


async def test_any_setting_change_is_a_miss(server, tmp_path):
    config = loopback_config(server.base_url, tmp_path)
    async with build_model_client(config, environ=ENV) as client:
        await client.complete(USER, role="target")
        await client.complete(USER, role="target", temperature=0.5)
        await client.complete(USER, role="target", max_tokens=7)
        await client.complete([{"role": "system", "content": "be brief"}, *USER], role="target")
    assert len(server.requests) == 4


@pytest.mark.parametrize(
    "switch", [{"role": {"cache": False}}, {"cache_enabled": False}], ids=["per-role", "global"]
)
async def test_cache_can_be_switched_off(server, tmp_path, switch):
    config = loopback_config(server.base_url, tmp_path, role=switch.get("role"))
    if "cache_enabled" in switch:
        config.cache.enabled = False
    async with build_model_client(config, environ=ENV) as client:
        await client.complete(USER, role="target")
        repeat = await client.complete(USER, role="target")
    assert not repeat.cached and len(server.requests) == 2
    assert client.ledger.snapshot().cache_hits == 0


async def test_token_cap_raises_before_the_next_call(server, tmp_path):
    server.queue(Reply("Paris", input_tokens=6, output_tokens=4))
    config = loopback_config(server.base_url, tmp_path, budget={"max_tokens": 10})
    async with build_model_client(config, environ=ENV) as client:
        await client.complete(USER, role="target")
        with pytest.raises(BudgetExceeded, match="10 of 10 tokens"):
            await client.complete([{"role": "user", "content": "another"}], role="target")
        # A cache hit costs nothing, so it is still served under the cap.
        assert (await client.complete(USER, role="target")).cached
    assert len(server.requests) == 1


async def test_cost_cap_uses_the_price_table(server, tmp_path):
    server.queue(Reply("Paris", input_tokens=1_000_000, output_tokens=0))
    config = loopback_config(
        server.base_url,
        tmp_path,
        budget={"max_cost_usd": 1.5},
        prices={"loopback-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}},
    )
    async with build_model_client(config, environ=ENV) as client:
        await client.complete(USER, role="target")
        assert client.ledger.snapshot().cost_usd == pytest.approx(2.0)
        with pytest.raises(BudgetExceeded, match="cost budget"):
            await client.complete([{"role": "user", "content": "more"}], role="target")
    assert len(server.requests) == 1


async def test_call_cap_holds_with_calls_in_flight(tmp_path):
    """Eight calls at once under `max_calls: 3`: only three reach the server. The cap was
    checked against recorded calls only, so all eight passed the check while none was
    recorded yet, and the server saw all eight."""
    with LoopbackOpenAI(latency_s=0.3) as slow:
        config = loopback_config(
            slow.base_url, tmp_path, role={"concurrency": 4}, budget={"max_calls": 3}
        )
        async with build_model_client(config, environ=ENV) as client:
            asks = [[{"role": "user", "content": f"question {i}"}] for i in range(8)]
            results = await asyncio.gather(
                *(client.complete(ask, role="target") for ask in asks), return_exceptions=True
            )
        refused = [r for r in results if isinstance(r, BudgetExceeded)]
        assert len(slow.requests) == 3 and len(refused) == 5
        assert "in flight" in str(refused[0])
        assert client.ledger.snapshot().calls == 3


@pytest.mark.parametrize("damage", ["corrupt_file", "directory"])
async def test_unusable_cache_on_read_degrades_to_no_cache(server, tmp_path, damage):
    config = loopback_config(server.base_url, tmp_path)
    cache_path = tmp_path / "cache.sqlite"
    if damage == "corrupt_file":
        cache_path.write_bytes(b"this is not an SQLite database\n" * 200)
    else:
        cache_path.mkdir()
    server.queue(Reply("Paris"), Reply("Paris"))
    async with build_model_client(config, environ=ENV) as client:
        first = await client.complete(USER, role="target")
        second = await client.complete(USER, role="target")
    assert first.text == second.text == "Paris"
    assert not second.cached and len(server.requests) == 2  # caching is off, calls proceed
    [notice] = [n for n in client.notices if "response cache" in n]
    assert notice.startswith("response cache disabled for this run:")
    assert str(cache_path) in notice and "delete the file or set cache.enabled false" in notice
    assert client.cache is None
    if damage == "corrupt_file":  # the damaged file is left for the user to inspect
        assert cache_path.read_bytes().startswith(b"this is not an SQLite database")
