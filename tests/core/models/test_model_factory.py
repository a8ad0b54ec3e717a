"""Backend resolution, defaults and per-role configuration problems (no network needed)."""

from __future__ import annotations

import json

import pytest

from core.config import config_from_dict
from core.models.factory import EMBEDDED_NOTICE, build_model_client, named_responders
from core.models.types import AuthError, BadRequestError


def client_for(tmp_path, models=None, environ=None, **kwargs):
    tree = {"run": {"runs_dir": str(tmp_path)}, "models": models or {}}
    return build_model_client(config_from_dict(tree), environ=environ or {}, **kwargs)


def test_auto_without_keys_is_the_embedded_model_with_a_notice(tmp_path):
    client = client_for(tmp_path)
    assert client.describe("target") == "local:smollm2"
    assert all(client.is_local(role) for role in ("target", "optimizer", "judge", "miner"))
    assert client.notices == [EMBEDDED_NOTICE]
    # No stop sequence, as published sends none (the newline_stop overlay sets one).
    assert "stop" not in json.loads(client.settings_key("target"))["settings"]


def test_auto_prefers_openai_then_anthropic(tmp_path):
    both = client_for(
        tmp_path, environ={"OPENAI_API_KEY": "sk-a1b2c3", "ANTHROPIC_API_KEY": "sk-x"}
    )
    assert both.describe("target") == "openai:gpt-4.1-mini"
    assert not both.is_local("target") and both.notices == []
    only_anthropic = client_for(tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-123"})
    assert only_anthropic.describe("optimizer") == "anthropic:claude-sonnet-4-5"


def test_auto_with_base_url_resolves_to_the_openai_compatible_backend(tmp_path):
    # (A base_url carrying user:password@ is refused by the config; public_url's own test
    # covers stripping it.)
    client = client_for(
        tmp_path, models={"target": {"base_url": "http://gpu-box:8000/v1/", "model": "qwen"}}
    )
    assert client.describe("target") == "openai:qwen@gpu-box:8000"
    assert json.loads(client.settings_key("target"))["endpoint"] == "http://gpu-box:8000/v1"


def test_settings_key_is_stable_and_changes_with_sampling(tmp_path):
    a = client_for(tmp_path, models={"target": {"temperature": 0.0}})
    b = client_for(tmp_path, models={"target": {"temperature": 0.0}})
    c = client_for(tmp_path, models={"target": {"temperature": 0.7}})
    assert a.settings_key("target") == b.settings_key("target") != c.settings_key("target")


@pytest.mark.parametrize(
    ("models", "error", "needle"),
    [
        ({"target": {"backend": "openai"}}, AuthError, "OPENAI_API_KEY is not set"),
        ({"target": {"backend": "anthropic"}}, AuthError, "ANTHROPIC_API_KEY is not set"),
        ({"target": {"backend": "openai", "api_key_env": "MY_KEY"}}, AuthError, "MY_KEY"),
        ({"target": {"base_url": "http://h:1/v1"}}, BadRequestError, "models.target.model"),
        ({"target": {"backend": "azure", "model": "d"}}, BadRequestError, "base_url"),
        (
            {
                "target": {
                    "backend": "azure",
                    "model": "d",
                    "base_url": "https://r.openai.azure.com",
                }
            },
            BadRequestError,
            "api_version",
        ),
        ({"target": {"backend": "scripted"}}, BadRequestError, "test double"),
    ],
)
async def test_role_problems_surface_on_first_call_only(tmp_path, models, error, needle):
    client = client_for(tmp_path, models=models)
    assert client.describe("optimizer") == "local:smollm2"  # other roles are unaffected
    with pytest.raises(error, match=needle):
        await client.complete([{"role": "user", "content": "hi"}], role="target")
    assert client.ledger.snapshot().calls == 0


def test_env_file_supplies_keys_without_exporting_them(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env_file = tmp_path / ".env"
    env_file.write_text("OPENAI_API_KEY=sk-from-dotenv-1234\n")
    tree = {"run": {"runs_dir": str(tmp_path)}, "models": {"env_file": str(env_file)}}
    client = build_model_client(config_from_dict(tree))
    assert client.describe("target") == "openai:gpt-4.1-mini"
    import os

    assert "OPENAI_API_KEY" not in os.environ


async def test_unknown_role_is_a_clear_error(tmp_path):
    client = client_for(tmp_path)
    with pytest.raises(BadRequestError, match="unknown model role 'critic'"):
        await client.complete([{"role": "user", "content": "x"}], role="critic")


def test_scripted_responder_named_by_import_path_is_built_once_and_shared(tmp_path):
    config = config_from_dict(
        {
            "models": {
                "target": {
                    "backend": "scripted",
                    "model": "tests.doubles.skill_sensitive_target:SkillSensitiveTarget",
                },
                "optimizer": {
                    "backend": "scripted",
                    "model": "tests.doubles.skill_sensitive_target:SkillSensitiveTarget",
                },
            },
            "cache": {"enabled": False},
        }
    )
    responders = named_responders(config)
    assert set(responders) == {"target", "optimizer"}
    assert responders["target"] is responders["optimizer"]
    bad = config_from_dict(
        {"models": {"target": {"backend": "scripted", "model": "nowhere.at_all:make"}}}
    )
    with pytest.raises(BadRequestError, match="cannot load the scripted responder"):
        named_responders(bad)


def test_the_embedded_model_stays_greedy_under_the_published_null_temperature(tmp_path):
    """The target's published default sends no temperature; the embedded llama.cpp model
    would then sample at its own 0.8, so the local backend answers greedily unless told."""
    config = config_from_dict({"models": {"target": {"backend": "local"}}})
    assert config.models.target.temperature is None
    client = build_model_client(config, environ={})
    assert client.runtime("target").settings["temperature"] == 0.0
    warm = config_from_dict({"models": {"target": {"backend": "local", "temperature": 0.7}}})
    assert build_model_client(warm, environ={}).runtime("target").settings["temperature"] == 0.7
