"""The capitals environment against a real model client and a loopback server: a wrong
key or model fails the rollout (and so the run) with a message naming it; only a server
that keeps failing scores the item zero."""

from __future__ import annotations

import pytest

from core.config import EnvConfig
from core.environment.verdicts import VERDICT_MODEL_ERROR, verdict_of
from core.models.factory import build_model_client
from core.models.types import AuthError, BadRequestError
from envs import get_environment
from tests.core.models.helpers import ENV, TEST_KEY, TEST_KEY_VAR, FakeSleep, loopback_config
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply


@pytest.fixture(scope="module")
def env():
    return get_environment(EnvConfig(name="capitals"))


@pytest.fixture(scope="module")
def item(env):
    return next(i for i in env.load_split("val"))


@pytest.fixture
def server():
    with LoopbackOpenAI() as srv:
        yield srv


def client_for(server, tmp_path, sleep=None):
    config = loopback_config(server.base_url, tmp_path)
    return build_model_client(config, environ=ENV, retry_sleep=sleep or FakeSleep())


async def test_401_propagates_naming_the_credential(env, item, server, tmp_path):
    server.queue(Fault.error(401, message="invalid api key"))
    async with client_for(server, tmp_path) as client:
        with pytest.raises(AuthError) as info:
            await env.rollout(item, "Answer briefly.", client.bind("target"))
    message = str(info.value)
    assert TEST_KEY_VAR in message and "models.target" in message
    assert TEST_KEY not in message
    assert len(server.requests) == 1  # not retried, and nothing scored


async def test_404_unknown_model_propagates_naming_the_model(env, item, server, tmp_path):
    server.queue(Fault.error(404, message="model not found"))
    async with client_for(server, tmp_path) as client:
        with pytest.raises(BadRequestError, match="'loopback-model'"):
            await env.rollout(item, "", client.bind("target"))
    assert len(server.requests) == 1


async def test_server_failing_past_the_retries_scores_zero_with_the_error(
    env, item, server, tmp_path
):
    server.queue(Fault.error(503), Fault.error(503), Fault.error(503), Reply("never read"))
    async with client_for(server, tmp_path) as client:  # max_retries=2: three attempts
        result = await env.rollout(item, "", client.bind("target"))
    assert (result.hard, result.soft, result.prediction) == (0.0, 0.0, "")
    assert result.error is not None and "gave up after 3 attempts: HTTP 503" in result.error
    assert verdict_of(result.explanation) == VERDICT_MODEL_ERROR
    assert len(server.requests) == 3
