"""Issue 9, secrets: a key in an error body or echoed in a model's reply is masked before
anything is cut or written; a key pasted as `api_key_env` is refused without being echoed;
the official backends never follow OPENAI_BASE_URL / ANTHROPIC_BASE_URL."""

from __future__ import annotations

import pytest

from core.config import ConfigError, config_from_dict
from core.models.factory import build_model_client
from core.models.types import ModelError
from tests.core.models.helpers import TEST_KEY, TEST_KEY_VAR, USER, FakeSleep, loopback_config
from tests.support.loopback_anthropic import LoopbackAnthropic
from tests.support.loopback_openai import Fault, LoopbackOpenAI, Reply

SERVERS = {"openai": LoopbackOpenAI, "anthropic": LoopbackAnthropic}


def fragments(secret: str, size: int = 10) -> list[str]:
    """Every piece of `secret` long enough to be a leak."""
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


def leaked(text: str, secret: str = TEST_KEY) -> list[str]:
    return [f for f in fragments(secret) if f in text]


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
@pytest.mark.parametrize("offset", [280, 290, 295, 299])
async def test_a_key_split_by_the_cut_of_an_error_body_is_masked(tmp_path, backend, offset):
    body = {"error": "x" * (offset - len('{"error": "')) + TEST_KEY + " was rejected" * 30}
    with SERVERS[backend]() as server:
        server.queue(Fault.raw(400, body))
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        async with build_model_client(
            config, environ={TEST_KEY_VAR: TEST_KEY}, retry_sleep=FakeSleep()
        ) as client:
            with pytest.raises(ModelError) as caught:
                await client.complete(USER, role="target")
    assert leaked(str(caught.value)) == [], str(caught.value)
    if offset <= 297:  # the mask itself fits before the cut
        assert "***" in str(caught.value)


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_a_key_echoed_in_the_reply_never_reaches_the_caller_or_the_cache(tmp_path, backend):
    with SERVERS[backend]() as server:
        server.queue(Reply(f"my key is {TEST_KEY}, obviously"))
        config = loopback_config(server.base_url, tmp_path, backend=backend)
        async with build_model_client(config, environ={TEST_KEY_VAR: TEST_KEY}) as client:
            completion = await client.complete(USER, role="target")
            again = await client.complete(USER, role="target")
    assert completion.text == "my key is ***, obviously"
    assert again.cached and again.text == completion.text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TEST_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    "value", ["sk-proj-Abc123def456ghi789", "sk-ant-api03-XYZ_secret-value", "abc def", "1KEY"]
)
def test_api_key_env_must_be_a_variable_name_and_is_never_echoed(value):
    tree = {"models": {"target": {"backend": "openai", "api_key_env": value}}}
    with pytest.raises(ConfigError) as caught:
        config_from_dict(tree, {"models.target.api_key_env": "cfg.yaml"})
    message = str(caught.value)
    assert "models.target.api_key_env" in message and "variable name" in message
    assert value not in message and leaked(message, value) == []


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_official_backends_ignore_base_url_variables(tmp_path, monkeypatch, backend):
    var = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}[backend]
    key_var = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[backend]
    with SERVERS[backend]() as elsewhere:
        monkeypatch.setenv(var, elsewhere.base_url)
        monkeypatch.setenv(key_var, "sk-official-key-must-stay-home")
        config = config_from_dict(
            {
                "models": {"target": {"backend": backend, "timeout_s": 2.0, "max_retries": 0}},
                "cache": {"enabled": False},
            }
        )
        async with build_model_client(config, retry_sleep=FakeSleep()) as client:
            official = "api.openai.com" if backend == "openai" else "api.anthropic.com"
            assert official in client.settings_key("target")
            with pytest.raises(ModelError) as caught:  # no internet here: it cannot connect
                await client.complete(USER, role="target")
    assert elsewhere.requests == []
    assert var not in str(caught.value)
