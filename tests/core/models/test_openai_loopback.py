"""The OpenAI backend through ModelClient against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest

from core.models.factory import build_model_client
from core.models.types import AuthError, BadRequestError, ModelError
from tests.core.models.helpers import ENV, TEST_KEY, TEST_KEY_VAR, USER, FakeSleep, loopback_config
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply


@pytest.fixture
def server():
    with LoopbackOpenAI() as srv:
        yield srv


def make_client(server, tmp_path, sleep=None, **kwargs):
    config = loopback_config(server.base_url, tmp_path, **kwargs)
    return build_model_client(config, environ=ENV, retry_sleep=sleep or FakeSleep())


async def test_success_returns_text_usage_and_sends_role_settings(server, tmp_path):
    server.queue(Reply("Paris", input_tokens=11, output_tokens=2))
    async with make_client(server, tmp_path, role={"temperature": 0.3, "seed": 7}) as client:
        completion = await client.complete(USER, role="target")
    assert completion.text == "Paris"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (11, 2)
    assert completion.finish_reason == "stop" and not completion.cached
    assert completion.model == "loopback-model"
    [request] = server.requests
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert request.body["model"] == "loopback-model"
    assert request.body["messages"] == USER
    assert request.body["temperature"] == 0.3 and request.body["seed"] == 7
    assert request.body["max_tokens"] == 16_384  # the published target default
    snap = client.ledger.snapshot()
    assert (snap.calls, snap.input_tokens, snap.output_tokens) == (1, 11, 2)


async def test_call_settings_override_role_settings(server, tmp_path):
    async with make_client(server, tmp_path, role={"stop": ["\n"]}) as client:
        await client.complete(USER, role="target", temperature=0.9, stop=None, max_tokens=5)
    body = server.requests[0].body
    assert body["temperature"] == 0.9 and body["max_tokens"] == 5
    assert "stop" not in body


async def test_429_honours_retry_after_then_succeeds(server, tmp_path):
    sleep = FakeSleep()
    server.queue(Fault.error(429, retry_after=7), Reply("Paris"))
    async with make_client(server, tmp_path, sleep) as client:
        completion = await client.complete(USER, role="target")
    assert completion.text == "Paris"
    assert len(server.requests) == 2
    assert len(sleep.delays) == 1 and sleep.delays[0] >= 7


async def test_500_then_success_backs_off(server, tmp_path):
    sleep = FakeSleep()
    server.queue(Fault.error(500), Fault.error(503), Reply("ok"))
    async with make_client(server, tmp_path, sleep) as client:
        completion = await client.complete(USER, role="target")
    assert completion.text == "ok" and len(server.requests) == 3
    assert len(sleep.delays) == 2
    assert 0 < sleep.delays[0] <= 0.5 and 0 < sleep.delays[1] <= 1.0


async def test_hung_connection_times_out_retries_then_fails(server, tmp_path):
    # A first, answered call warms the SDK up: its one-off set-up can take longer than
    # the short timeout below on a busy machine, which would time out before sending.
    server.queue(Reply("warm"), Fault.hang(), Fault.hang())
    async with make_client(server, tmp_path, role={"timeout_s": 0.3, "max_retries": 1}) as client:
        await client.complete([{"role": "user", "content": "warm up"}], role="target", timeout_s=60)
        with pytest.raises(ModelError, match=r"gave up after 2 attempts: no answer within 0.3s"):
            await client.complete(USER, role="target")
    assert len(server.requests) == 3
    # The server had both timed-out requests and may bill them: each is counted at its
    # estimate (the whole max_tokens of output), so a budget cap sees them.
    snap = client.ledger.snapshot()
    max_tokens = client.runtime("target").settings["max_tokens"]
    assert snap.calls == 3 and snap.output_tokens == 1 + 2 * max_tokens


async def test_401_fails_fast_naming_the_variable_and_hiding_the_key(server, tmp_path):
    server.queue(Fault.error(401, message=f"Incorrect API key provided: {TEST_KEY}"))
    async with make_client(server, tmp_path) as client:
        with pytest.raises(AuthError) as info:
            await client.complete(USER, role="target")
    assert len(server.requests) == 1
    message = str(info.value)
    assert TEST_KEY_VAR in message and "models.target" in message
    assert TEST_KEY not in message and "***" in message


async def test_404_is_a_bad_request_naming_the_model(server, tmp_path):
    server.queue(Fault.error(404))
    async with make_client(server, tmp_path) as client:
        with pytest.raises(BadRequestError, match="loopback-model"):
            await client.complete(USER, role="target")
    assert len(server.requests) == 1


@pytest.mark.parametrize("fault", [Fault.malformed_json, Fault.truncated_body])
async def test_broken_body_is_retried_then_succeeds(server, tmp_path, fault):
    server.queue(fault(), Reply("Paris"))
    async with make_client(server, tmp_path) as client:
        completion = await client.complete(USER, role="target")
    assert completion.text == "Paris" and len(server.requests) == 2


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (Fault.malformed_json, "malformed response body"),
        (Fault.truncated_body, "connection failed"),
    ],
)
async def test_broken_body_every_time_is_a_clear_error(server, tmp_path, fault, why):
    server.queue(fault(), fault(), fault())
    # Unstreamed (a whole body): the default 16,384-token budget would stream the call.
    async with make_client(server, tmp_path, role={"stream": "never"}) as client:
        with pytest.raises(ModelError, match=f"gave up after 3 attempts: {why}"):
            await client.complete(USER, role="target")
    assert len(server.requests) == 3


async def test_concurrency_limit_is_honoured(tmp_path):
    with LoopbackOpenAI(latency_s=0.15) as server:
        seen = []
        config = loopback_config(server.base_url, tmp_path, role={"concurrency": 3})
        client = build_model_client(config, environ=ENV, on_usage=seen.append)
        async with client:
            results = await asyncio.gather(
                *(
                    client.complete([{"role": "user", "content": f"q{i}"}], role="target")
                    for i in range(9)
                )
            )
    assert sorted(r.text for r in results) == sorted(f"echo: q{i}" for i in range(9))
    assert server.max_in_flight == 3
    assert len(seen) == 9 and seen[-1].calls == 9


async def test_unknown_setting_is_refused_before_any_request(server, tmp_path):
    async with make_client(server, tmp_path) as client:
        with pytest.raises(BadRequestError, match="temprature"):
            await client.complete(USER, role="target", temprature=0.5)
    assert server.requests == []
