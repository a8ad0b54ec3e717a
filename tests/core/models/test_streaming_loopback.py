"""Streamed replies (issue 15) through ModelClient, against real loopback servers on
127.0.0.1 that speak SSE: the OpenAI chat-completions chunks and the Anthropic Messages
events (tests/support/loopback_openai.py, loopback_anthropic.py)."""

from __future__ import annotations

import asyncio

import pytest

from core.models.factory import build_model_client
from core.models.ledger import stage
from core.models.spend_journal import SpendJournal
from core.models.types import ModelError
from core.optimizer.json_reply import NOTES_SHAPE, ask_json
from tests.core.models.helpers import ENV, TEST_KEY, USER, FakeSleep, loopback_config
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply

PROTOCOLS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}
LONG = " ".join(f"word{i}" for i in range(300))  # ~2,400 characters
PRICES = {"loopback-model": {"input_per_mtok": 1000.0, "output_per_mtok": 2000.0}}


@pytest.fixture(params=sorted(PROTOCOLS))
def protocol(request):
    return request.param


@pytest.fixture
def server(protocol):
    with PROTOCOLS[protocol]() as srv:
        yield srv


def make_client(server, protocol, tmp_path, sleep=None, **role):
    role = {"stream": "always", **role}
    config = loopback_config(server.base_url, tmp_path, backend=protocol, role=role, prices=PRICES)
    return build_model_client(config, environ=ENV, retry_sleep=sleep or FakeSleep())


async def warm(client):
    """One answered call first: the SDK's one-off set-up can outlast the short timeouts
    the stall tests use on a busy machine (see test_openai_loopback)."""
    await client.complete([{"role": "user", "content": "warm up"}], role="target", timeout_s=60)


async def test_a_reply_in_many_chunks_is_assembled_with_its_usage(server, protocol, tmp_path):
    server.queue(Reply(LONG, input_tokens=40, output_tokens=300, chunk_chars=7))
    journal = SpendJournal(tmp_path / "spend.jsonl")
    async with make_client(server, protocol, tmp_path) as client:
        client.ledger.attach_journal(journal)
        with stage("analyst"):
            completion = await client.complete(USER, role="target")
        (entry,) = journal.read()  # on disk when complete() returned
    assert completion.text == LONG and completion.finish_reason == "stop"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (40, 300)
    body = server.requests[0].body
    assert body["stream"] is True
    if protocol == "openai":
        assert body["stream_options"] == {"include_usage": True}
    snap = client.ledger.snapshot()
    assert (snap.calls, snap.input_tokens, snap.output_tokens) == (1, 40, 300)
    assert (entry["stage"], entry["input_tokens"], entry["output_tokens"]) == ("analyst", 40, 300)
    assert entry["cost_usd"] == pytest.approx((40 * 1000 + 300 * 2000) / 1e6)


async def test_a_streamed_reply_cut_at_the_limit_is_never_applied(server, protocol, tmp_path):
    cut = Reply('{"notes": "the reply stops here, mid', finish_reason="length", chunk_chars=5)
    server.queue(cut)
    async with make_client(server, protocol, tmp_path) as client:

        async def complete(messages, **settings):
            return await client.complete(messages, role="target", **settings)

        reply = await ask_json(complete, USER, NOTES_SHAPE)
    assert reply.value is None and not reply.ok
    assert "reply truncated at the token limit (finish_reason='length'" in (reply.error or "")
    assert reply.completions[0].truncated and reply.calls == 1  # not re-asked either


async def test_a_stalled_stream_times_out_and_is_retried(server, protocol, tmp_path):
    sleep = FakeSleep()
    server.queue(Reply("warm"), Fault.stream_stall(after=2), Reply("Paris"))
    async with make_client(server, protocol, tmp_path, sleep, timeout_s=0.5) as client:
        await warm(client)
        completion = await client.complete(USER, role="target")
    assert completion.text == "Paris" and len(server.requests) == 3
    assert len(sleep.delays) == 1


async def test_a_stream_that_always_stalls_fails_in_bounded_time(server, protocol, tmp_path):
    server.queue(Reply("warm"), Fault.stream_stall(after=2), Fault.stream_stall(after=3))
    async with make_client(server, protocol, tmp_path, timeout_s=0.4, max_retries=1) as client:
        await warm(client)
        with pytest.raises(ModelError, match=r"gave up after 2 attempts: the stream stalled"):
            await client.complete(USER, role="target")
        snap = client.ledger.snapshot()
    # Both stalled attempts were in the server's hands: counted at their estimate (the
    # whole max_tokens), never as answers.
    max_tokens = client.runtime("target").settings["max_tokens"]
    assert snap.calls == 3 and snap.output_tokens >= 2 * max_tokens


async def test_a_dropped_stream_is_retried_and_its_partial_reply_never_used(
    server, protocol, tmp_path
):
    server.queue(Fault.stream_drop(after=4), Reply("Paris", chunk_chars=2))
    async with make_client(server, protocol, tmp_path) as client:
        completion = await client.complete(USER, role="target")
        again = await client.complete(USER, role="target")  # from the cache
    assert completion.text == "Paris" and len(server.requests) == 2
    assert again.cached and again.text == "Paris"


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (Fault.stream_drop, "the stream broke off mid-reply"),
        (Fault.stream_end, "the stream ended before the reply was finished"),
    ],
)
async def test_a_stream_broken_every_time_is_a_clear_error(server, protocol, tmp_path, fault, why):
    server.queue(fault(after=3), fault(after=3), fault(after=3))
    async with make_client(server, protocol, tmp_path) as client:
        with pytest.raises(ModelError, match=f"gave up after 3 attempts: {why}"):
            await client.complete(USER, role="target")
        snap = client.ledger.snapshot()
    assert len(server.requests) == 3
    # each broken attempt may be billed: counted at its estimate, never as an answer
    max_tokens = client.runtime("target").settings["max_tokens"]
    assert snap.calls == 3 and snap.output_tokens == 3 * max_tokens


async def test_an_error_event_mid_stream_is_retried_and_masks_secrets(server, protocol, tmp_path):
    leaky = f"Overloaded (your key {TEST_KEY})"
    server.queue(Fault.stream_error(message=leaky), Reply("Paris"))
    async with make_client(server, protocol, tmp_path) as client:
        assert (await client.complete(USER, role="target")).text == "Paris"
    server.reset()
    server.queue(*[Fault.stream_error(message=leaky)] * 3)
    async with make_client(server, protocol, tmp_path, cache=False) as client:
        with pytest.raises(ModelError) as info:
            await client.complete(USER, role="target")
    message = str(info.value)
    assert "gave up after 3 attempts: the server reported an error mid-stream" in message
    if protocol == "anthropic":
        assert "overloaded_error: Overloaded" in message
    assert TEST_KEY not in message and "***" in message


async def test_429_before_the_stream_starts_is_retried_as_today(server, protocol, tmp_path):
    sleep = FakeSleep()
    server.queue(Fault.error(429, retry_after=4), Reply("Paris", chunk_chars=1))
    async with make_client(server, protocol, tmp_path, sleep) as client:
        assert (await client.complete(USER, role="target")).text == "Paris"
    assert len(server.requests) == 2 and sleep.delays[0] >= 4


async def test_a_cancelled_streamed_call_is_still_counted(server, protocol, tmp_path):
    server.queue(Fault.stream_stall(after=3, seconds=5.0))
    async with make_client(server, protocol, tmp_path, max_tokens=50) as client:
        call = asyncio.create_task(client.complete(USER, role="target"))
        while not server.requests:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the stream has started
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        snap = client.ledger.snapshot()
    assert snap.calls == 1 and snap.output_tokens == 50 and snap.cost_usd > 0


async def test_the_cache_holds_a_streamed_reply_as_an_unstreamed_one(server, protocol, tmp_path):
    server.queue(Reply(LONG, input_tokens=12, output_tokens=300, chunk_chars=9))
    async with make_client(server, protocol, tmp_path) as client:
        streamed = await client.complete(USER, role="target")
    # The resumed run streams no longer (or never did): the paid answer is not asked again.
    async with make_client(server, protocol, tmp_path, stream="never") as client:
        replayed = await client.complete(USER, role="target")
        assert client.ledger.snapshot().cache_hits == 1
    assert len(server.requests) == 1
    assert replayed.cached and (replayed.text, replayed.usage) == (streamed.text, streamed.usage)
    assert replayed.finish_reason == streamed.finish_reason == "stop"


async def test_never_sends_no_stream_flag_even_for_a_long_call(server, protocol, tmp_path):
    async with make_client(server, protocol, tmp_path, stream="never", max_tokens=8192) as client:
        await client.complete(USER, role="target")
    assert "stream" not in server.requests[0].body
    assert "stream_options" not in server.requests[0].body


async def test_auto_streams_only_calls_allowed_a_long_reply(server, protocol, tmp_path):
    async with make_client(server, protocol, tmp_path, stream="auto", max_tokens=512) as client:
        await client.complete([{"role": "user", "content": "short"}], role="target")
        await client.complete([{"role": "user", "content": "long"}], role="target", max_tokens=2048)
        await client.complete([{"role": "user", "content": "edge"}], role="target", max_tokens=2047)
    streamed = [r.body.get("stream") is True for r in server.requests]
    assert streamed == [False, True, False]


async def test_a_long_slow_reply_outlives_the_whole_call_timeout_only_when_streamed(tmp_path):
    # 40 deltas 0.05 s apart: ~2.2 s in all, twice the 1 s timeout; each gap a twentieth.
    slow = Reply(LONG, chunk_chars=60, chunk_interval_s=0.05)
    with LoopbackOpenAI() as server:
        server.queue(Reply("warm"), slow, slow)
        async with make_client(server, "openai", tmp_path, timeout_s=1.0, max_retries=0) as client:
            await warm(client)
            assert (await client.complete(USER, role="target")).text == LONG
        never = {"timeout_s": 1.0, "max_retries": 0, "stream": "never", "cache": False}
        async with make_client(server, "openai", tmp_path, **never) as client:
            with pytest.raises(ModelError, match=r"no answer within 1s"):
                await client.complete(USER, role="target")


class NoStreamUsage(LoopbackOpenAI):
    """An OpenAI-compatible server that ignores `stream_options.include_usage`."""

    def render_stream(self, record, reply):
        events = super().render_stream(record, reply)
        return [(name, data) for name, data in events if "usage" not in data]


async def test_a_stream_without_usage_is_counted_at_an_estimate_never_zero(tmp_path):
    with NoStreamUsage() as server:
        server.queue(Reply(LONG, chunk_chars=50))
        async with make_client(server, "openai", tmp_path) as client:
            completion = await client.complete(USER, role="target")
            snap = client.ledger.snapshot()
    assert completion.text == LONG
    prompt_chars = len(USER[0]["content"])
    assert completion.usage.input_tokens == prompt_chars // 4 + 1
    assert completion.usage.output_tokens == -(-len(LONG) // 4)
    assert (snap.input_tokens, snap.output_tokens) == (
        completion.usage.input_tokens,
        completion.usage.output_tokens,
    )
    assert snap.cost_usd > 0
