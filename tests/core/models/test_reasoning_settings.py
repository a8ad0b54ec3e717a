"""Reasoning models (issue 15): `temperature: null` is not sent, `reasoning_effort` reaches
the backends that take it and is refused by the others. Against a real loopback HTTP
server speaking the OpenAI protocol (tests/support/loopback_openai.py)."""

from __future__ import annotations

import pytest

from core.config import ConfigError
from core.models.factory import build_model_client
from core.models.types import BadRequestError
from tests.core.models.helpers import ENV, USER, FakeSleep, loopback_config
from tests.support.loopback_openai import LoopbackOpenAI


@pytest.fixture
def server():
    with LoopbackOpenAI() as srv:
        yield srv


async def test_null_temperature_is_not_sent(server, tmp_path):
    config = loopback_config(server.base_url, tmp_path, role={"temperature": None})
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(USER, role="target")
    assert "temperature" not in server.requests[0].body


async def test_reasoning_effort_is_sent_to_openai_compatible_servers(server, tmp_path):
    role = {"temperature": None, "reasoning_effort": "high"}
    config = loopback_config(server.base_url, tmp_path, role=role)
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(USER, role="target")
    assert server.requests[0].body["reasoning_effort"] == "high"


async def test_reasoning_effort_is_refused_where_the_backend_cannot_take_it(tmp_path):
    config = loopback_config(
        "http://127.0.0.1:9/v1", tmp_path, backend="anthropic", role={"reasoning_effort": "low"}
    )
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        with pytest.raises(BadRequestError, match="reasoning_effort"):
            await client.complete(USER, role="target")


def test_unknown_reasoning_effort_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="reasoning_effort"):
        loopback_config("http://127.0.0.1:9/v1", tmp_path, role={"reasoning_effort": "max"})


class LoopbackAzure(LoopbackOpenAI):
    """The same server at the path the Azure SDK posts to (deployment in the path)."""

    endpoint_path = "/openai/deployments/loopback-model/chat/completions"


async def test_azure_request_carries_max_completion_tokens(tmp_path):
    # Azure's o-series and GPT-5 deployments answer 400 to max_tokens; every model takes this.
    with LoopbackAzure() as azure:
        role = {"base_url": azure.root_url, "api_version": "2024-10-21", "max_tokens": 77}
        config = loopback_config(azure.root_url, tmp_path, backend="azure", role=role)
        async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
            await client.complete(USER, role="target")
    body = azure.requests[0].body
    assert body["max_completion_tokens"] == 77 and "max_tokens" not in body


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("o3-mini", "max_completion_tokens"),
        ("gpt-5", "max_completion_tokens"),
        ("qwen2", "max_tokens"),
    ],
)
async def test_reasoning_models_on_compatible_servers_get_max_completion_tokens(
    server, tmp_path, model, key
):
    config = loopback_config(server.base_url, tmp_path, role={"model": model})
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(USER, role="target")
    body = server.requests[0].body
    other = ({"max_tokens", "max_completion_tokens"} - {key}).pop()
    assert key in body and other not in body


async def test_target_defaults_are_the_published_ones(server, tmp_path):
    """16,384 completion tokens and no temperature unless a config says otherwise."""
    config = loopback_config(server.base_url, tmp_path)
    assert config.models.target.max_tokens == 16_384 and config.models.target.temperature is None
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(USER, role="target")
    body = server.requests[0].body
    assert body["max_tokens"] == 16_384 and "temperature" not in body


@pytest.mark.parametrize(("model", "sent"), [("gpt-5.5", False), ("o3", False), ("qwen2", True)])
async def test_reasoning_models_get_no_temperature(server, tmp_path, model, sent):
    """Issue 38: the optimizer's default temperature 0.0 would make a GPT-5 or o-series
    optimizer refuse its first call (they take only their default); like
    max_completion_tokens, it follows the model. Fails on the old code (0.0 was sent)."""
    config = loopback_config(server.base_url, tmp_path, role={"model": model, "temperature": 0.0})
    async with build_model_client(config, environ=ENV, retry_sleep=FakeSleep()) as client:
        await client.complete(USER, role="target")
    assert ("temperature" in server.requests[0].body) is sent
