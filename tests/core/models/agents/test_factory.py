"""How the model factory resolves the coding-agent backends (no CLI process is started
here): defaults, keys, logins, the `auto` notice, and what keys the rollout cache."""

from __future__ import annotations

import pytest

from core.config import RoleConfig, config_from_dict
from core.models.agents.cli import chat_prompt
from core.models.agents.process import AGENTS_BIN
from core.models.factory import build_model_client
from core.models.ledger import UsageLedger
from core.models.types import AuthError, BadRequestError, Request, Usage
from tests.support.agent_clis import fake_claude_login, requires_agents


def test_agent_backends_default_to_two_concurrent_calls():
    assert RoleConfig(backend="claude_code").concurrency == 2
    assert RoleConfig(backend="codex", concurrency=5).concurrency == 5
    assert RoleConfig(backend="openai").concurrency == 4


@requires_agents
def test_auto_never_picks_a_logged_in_cli_it_only_says_so(tmp_path, monkeypatch):
    home = tmp_path / "home"
    fake_claude_login(home)
    monkeypatch.setenv("PATH", f"{AGENTS_BIN}:/usr/bin:/bin")
    client = build_model_client(
        config_from_dict({}), environ={"HOME": str(home)}, cache_path=tmp_path / "cache.sqlite"
    )
    assert client.runtime("target").kind == "local"
    (notice,) = [n for n in client.notices if "claude" in n]
    assert "backend: claude_code" in notice and "subscription" in notice
    assert not any("codex" in n for n in client.notices)  # not logged in
    quiet = build_model_client(
        config_from_dict({}), environ={"HOME": str(tmp_path / "x")}, cache_path=tmp_path / "c2"
    )
    assert not any("logged-in" in n for n in quiet.notices)


async def test_a_named_key_that_is_missing_fails_on_the_first_call(tmp_path):
    config = config_from_dict(
        {
            "models": {
                "target": {"backend": "codex", "api_key_env": "MY_CODEX_KEY", "binary": "/bin/true"}
            }
        }
    )
    client = build_model_client(config, environ={}, cache_path=tmp_path / "cache.sqlite")
    with pytest.raises(AuthError, match="MY_CODEX_KEY"):
        await client.complete([{"role": "user", "content": "hi"}], role="target")


async def test_claude_without_key_or_login_says_how_to_log_in(tmp_path):
    config = config_from_dict(
        {"models": {"target": {"backend": "claude_code", "binary": "/bin/true"}}}
    )
    client = build_model_client(
        config, environ={"HOME": str(tmp_path)}, cache_path=tmp_path / "cache.sqlite"
    )
    with pytest.raises(AuthError, match="/login"):
        await client.complete([{"role": "user", "content": "hi"}], role="target")


def test_the_rollout_cache_key_covers_how_the_agent_runs():
    def key(**role):
        tree = {"models": {"target": {"backend": "claude_code", "binary": "/bin/true", **role}}}
        return build_model_client(config_from_dict(tree), environ={}).settings_key("target")

    assert key() == key(keep_workspace=True)
    assert key() != key(skill_placement="claude_md")
    assert key() != key(allowed_tools=["Read"])


def test_a_reported_cost_is_taken_as_is():
    ledger = UsageLedger({"m": {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}})
    ledger.record("target", "m", Usage(10, 10, cost_usd=0.25), cached=False)
    ledger.record("target", "unpriced", Usage(10, 10, cost_usd=0.5), cached=False)
    assert ledger.snapshot().cost_usd == pytest.approx(0.75)
    assert ledger.unpriced_models == []


def test_chat_messages_become_one_prompt():
    one = Request(
        "codex", "m", [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"}]
    )
    assert chat_prompt(one) == ("S", "Q")
    turns = Request(
        "codex",
        "m",
        [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": "A1"},
            {"role": "user", "content": "Q2"},
        ],
        {"response_format": {"type": "json_object"}},
    )
    system, prompt = chat_prompt(turns)
    assert "JSON" in system
    assert prompt.index("[user]\nQ1") < prompt.index("[assistant]\nA1") < prompt.index("[user]\nQ2")
    with pytest.raises(BadRequestError, match="unknown model setting"):
        chat_prompt(Request("codex", "m", [{"role": "user", "content": "Q"}], {"temprature": 1}))
