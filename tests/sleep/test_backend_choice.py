"""`skillopt sleep init`'s suggestion: an API key, else a coding-agent CLI that is logged
in (asked with the real CLIs' own status commands), else handoff; never a CLI whose every
night would fail for want of a login."""

from __future__ import annotations

import json

import pytest

from core.models.agents.process import AGENTS_BIN
from sleep.state.backend_choice import agent_logged_in, suggest_backend
from tests.support.agent_clis import fake_claude_login, requires_agents

ON_PATH = {"claude": "/opt/bin/claude", "codex": "/opt/bin/codex"}


def test_an_api_key_wins_over_any_cli():
    backend, why = suggest_backend({"ANTHROPIC_API_KEY": "k"}, ON_PATH.get, lambda b, p: True)
    assert (backend, why) == ("anthropic", "ANTHROPIC_API_KEY is set")


def test_a_cli_that_is_not_logged_in_is_passed_over():
    status = {"claude": False, "codex": True}
    backend, why = suggest_backend({}, ON_PATH.get, lambda b, p: status[b])
    assert backend == "codex" and "found `codex`" in why
    backend, why = suggest_backend({}, ON_PATH.get, lambda b, p: False)
    assert backend == "handoff"
    assert "`claude` and `codex` found but not logged in" in why


def test_a_login_that_cannot_be_checked_is_said():
    backend, why = suggest_backend({}, {"codex": "/x/codex"}.get, lambda b, p: None)
    assert backend == "codex" and "could not check its login" in why


def test_nothing_found_is_handoff():
    assert suggest_backend({}, lambda b: None)[0] == "handoff"


@pytest.mark.agents
@requires_agents
@pytest.mark.parametrize("binary", ["claude", "codex"])
def test_the_real_clis_say_not_logged_in_in_an_empty_home(binary, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert agent_logged_in(binary, str(AGENTS_BIN / binary)) is False


@pytest.mark.agents
@requires_agents
def test_the_real_clis_say_logged_in_with_a_login(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    fake_claude_login(tmp_path)  # a subscription login as Claude Code stores it
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-dummy"}))
    assert agent_logged_in("claude", str(AGENTS_BIN / "claude")) is True
    assert agent_logged_in("codex", str(AGENTS_BIN / "codex")) is True
