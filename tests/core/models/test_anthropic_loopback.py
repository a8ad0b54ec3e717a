"""The Anthropic backend against a real Messages-protocol server on 127.0.0.1."""

from __future__ import annotations

import pytest

from core.models.factory import build_model_client
from core.models.types import AuthError
from tests.core.models.helpers import ENV, TEST_KEY, TEST_KEY_VAR, FakeSleep, loopback_config
from tests.support.loopback_anthropic import Fault, LoopbackAnthropic, Reply

MESSAGES = [
    {"role": "system", "content": "Answer with the city only."},
    {"role": "user", "content": "Capital of France?"},
]


@pytest.fixture
def server():
    with LoopbackAnthropic() as srv:
        yield srv


def make_client(server, tmp_path, sleep=None):
    config = loopback_config(server.base_url, tmp_path, backend="anthropic")
    return build_model_client(config, environ=ENV, retry_sleep=sleep or FakeSleep())


async def test_success_maps_system_usage_and_stop_reason(server, tmp_path):
    server.queue(Reply("Paris", input_tokens=9, output_tokens=1, finish_reason="length"))
    async with make_client(server, tmp_path) as client:
        completion = await client.complete(MESSAGES, role="target", stop=["\n"])
    assert completion.text == "Paris"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (9, 1)
    assert completion.finish_reason == "length" and completion.truncated
    [request] = server.requests
    assert request.path == "/v1/messages"
    # This SDK sends the key as a bearer token; older ones used x-api-key.
    sent_key = request.headers.get("x-api-key") or request.headers["authorization"][7:]
    assert sent_key == TEST_KEY
    assert request.body["system"] == "Answer with the city only."
    assert request.body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert request.body["stop_sequences"] == ["\n"] and request.body["max_tokens"] == 16_384
    assert client.describe("target") == "anthropic:loopback-model"


async def test_429_with_retry_after_is_retried(server, tmp_path):
    sleep = FakeSleep()
    server.queue(Fault.error(429, retry_after=3), Reply("Paris"))
    async with make_client(server, tmp_path, sleep) as client:
        completion = await client.complete(MESSAGES, role="target")
    assert completion.text == "Paris" and len(server.requests) == 2
    assert sleep.delays and sleep.delays[0] >= 3


async def test_overloaded_529_is_retried(server, tmp_path):
    server.queue(Fault.error(529), Reply("Paris"))
    async with make_client(server, tmp_path) as client:
        assert (await client.complete(MESSAGES, role="target")).text == "Paris"
    assert len(server.requests) == 2


async def test_401_fails_fast(server, tmp_path):
    server.queue(Fault.error(401))
    async with make_client(server, tmp_path) as client:
        with pytest.raises(AuthError, match=TEST_KEY_VAR):
            await client.complete(MESSAGES, role="target")
    assert len(server.requests) == 1


async def test_json_schema_response_format_becomes_output_config(server, tmp_path):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    response_format = {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}
    # A base_url of the user's is a server of unknown kind: schemas go to it when asked.
    config = loopback_config(
        server.base_url, tmp_path, backend="anthropic", role={"structured": "schema"}
    )
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(MESSAGES, role="target", response_format=response_format)
    body = server.requests[0].body
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert body["system"] == "Answer with the city only."


async def test_sampling_settings_are_not_sent(server, tmp_path):
    async with make_client(server, tmp_path) as client:
        await client.complete(MESSAGES, role="target", temperature=0.5, seed=3)
    body = server.requests[0].body
    assert body["messages"] and "max_tokens" in body
    assert not {"temperature", "top_p", "seed"} & set(body)
