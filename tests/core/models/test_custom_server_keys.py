"""A server at a custom base_url gets only the key named by api_key_env — never the user's
OPENAI_API_KEY / ANTHROPIC_API_KEY, whether our lookup or the SDK's own would find it."""

from __future__ import annotations

import pytest

from core.models.factory import build_model_client
from core.models.types import AuthError
from tests.core.models.helpers import TEST_KEY, TEST_KEY_VAR, USER, FakeSleep, loopback_config
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import Fault, LoopbackOpenAI

STANDARD_KEYS = {
    "OPENAI_API_KEY": "sk-openai-must-not-leak-0001",
    "ANTHROPIC_API_KEY": "sk-ant-must-not-leak-0002",
    "ANTHROPIC_AUTH_TOKEN": "tok-ant-must-not-leak-0003",
}
SERVERS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}


@pytest.fixture
def standard_keys(monkeypatch):
    """The user's real keys in the process environment, where the SDKs look by default."""
    for name, value in STANDARD_KEYS.items():
        monkeypatch.setenv(name, value)
    return dict(STANDARD_KEYS)


def sent_credentials(headers: dict[str, str]) -> str:
    return " ".join(v for k, v in headers.items() if k in ("authorization", "x-api-key"))


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_without_api_key_env_no_standard_key_is_sent(tmp_path, standard_keys, backend):
    with SERVERS[backend]() as server:
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        config.models.target.api_key_env = None
        async with build_model_client(config, environ=standard_keys) as client:
            await client.complete(USER, role="target")
    [request] = server.requests
    sent = sent_credentials(request.headers)
    assert all(value not in sent for value in STANDARD_KEYS.values()), sent


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_with_api_key_env_only_that_key_is_sent(tmp_path, standard_keys, backend):
    with SERVERS[backend]() as server:
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        environ = {**standard_keys, TEST_KEY_VAR: TEST_KEY}
        async with build_model_client(config, environ=environ) as client:
            await client.complete(USER, role="target")
    [request] = server.requests
    sent = sent_credentials(request.headers)
    assert TEST_KEY in sent
    assert all(value not in sent for value in STANDARD_KEYS.values()), sent


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_401_without_a_key_says_which_setting_to_fill(tmp_path, backend):
    with SERVERS[backend]() as server:
        server.queue(Fault.error(401))
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        config.models.target.api_key_env = None
        async with build_model_client(config, environ={}, retry_sleep=FakeSleep()) as client:
            with pytest.raises(AuthError, match=r"models\.target\.api_key_env \(unset"):
                await client.complete(USER, role="target")
    assert len(server.requests) == 1
