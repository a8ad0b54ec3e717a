"""Chat use of the coding-agent backends: the REAL `claude` and `codex` binaries behind
`ModelClient.complete`, against loopback servers speaking their streaming APIs with a
scripted brain. Each failure the issue lists, for both CLIs."""

from __future__ import annotations

import time
import uuid

import pytest

from core.models.agents.process import recorded_sessions
from core.models.factory import build_model_client
from core.models.types import (
    AuthError,
    BadRequestError,
    RetriesExhausted,
    UsageLimitReached,
)
from tests.core.models.helpers import FakeSleep
from tests.support.agent_clis import (
    AGENT_TESTS,
    AGENTS,
    SERVER,
    agent_config,
    fake_claude_login,
    shell_call,
)
from tests.support.loopback_agent_servers import AgentFault, Fault, Reply

pytestmark = AGENT_TESTS
MESSAGES = [
    {"role": "system", "content": "SYSTEM-MARKER: answer in one word."},
    {"role": "user", "content": "What is the capital of France?"},
]


def client_for(agent, server, tmp_path, *, role=None, environ=None, **tree):
    config = agent_config(agent, server, tmp_path, role=role, **tree)
    sleep = FakeSleep()
    client = build_model_client(config, environ=environ or {}, retry_sleep=sleep)
    return client, sleep


@pytest.mark.parametrize("agent", AGENTS)
async def test_plain_text_through_complete_with_usage_cost_and_cache(agent, tmp_path):
    prices = {"local-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
    with SERVER[agent](replies=[Reply("Paris", output_tokens=7)]) as server:
        client, _ = client_for(agent, server, tmp_path)
        client.ledger.prices.update(prices)
        first = await client.complete(MESSAGES, role="target")
        again = await client.complete(MESSAGES, role="target")
        await client.aclose()
        assert len(server.model_requests) == 1  # the second answer came from the cache
    assert first.text == "Paris" and not first.cached
    assert first.finish_reason == "stop" and first.latency_s > 0
    assert first.usage.output_tokens == 7 and first.usage.input_tokens > 0
    assert again.cached and again.text == "Paris"
    sent = server.sent_text()
    assert "SYSTEM-MARKER" in sent and "capital of France" in sent
    snapshot = client.ledger.snapshot()
    assert snapshot.calls == 2 and snapshot.cache_hits == 1
    if agent == "claude_code":
        # Claude Code prices its own calls: the ledger takes its total_cost_usd.
        assert first.usage.cost_usd is not None and first.usage.cost_usd > 0
        assert snapshot.cost_usd == pytest.approx(first.usage.cost_usd)
    else:
        # Codex reports tokens only: priced by the config's table.
        expected = (first.usage.input_tokens * 1.0 + 7 * 2.0) / 1e6
        assert first.usage.cost_usd is None
        assert snapshot.cost_usd == pytest.approx(expected)
    # Chat use has no tools to edit anything with: none for Claude, read-only for Codex.
    body = server.model_requests[0].body
    if agent == "claude_code":
        assert body.get("tools", []) == []


@pytest.mark.parametrize("agent", AGENTS)
async def test_401_fails_fast_naming_what_to_do(agent, tmp_path):
    with SERVER[agent](replies=[Fault.error(401, message="invalid x-api-key")]) as server:
        client, sleep = client_for(agent, server, tmp_path)
        with pytest.raises(AuthError) as err:
            await client.complete(MESSAGES, role="target")
        await client.aclose()
        assert len(server.model_requests) == 1 and sleep.delays == []
    message = str(err.value)
    assert message.startswith(f"models.target ({agent}:")
    assert "authenticate" in message and "log in" in message


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("fault", ["rate_limit", "overloaded"])
async def test_429_and_overloaded_are_retried_with_backoff(agent, fault, tmp_path):
    first = Fault.error(429, retry_after=3) if fault == "rate_limit" else AgentFault.overloaded()
    with SERVER[agent](replies=[first, Reply("Paris")]) as server:
        client, sleep = client_for(agent, server, tmp_path)
        completion = await client.complete(MESSAGES, role="target")
        await client.aclose()
        # One CLI process per attempt: the CLI's own retries are off, ours is the only loop.
        assert len(server.model_requests) == 2
    assert completion.text == "Paris"
    assert len(sleep.delays) == 1


@pytest.mark.parametrize("agent", AGENTS)
async def test_malformed_output_is_retried_then_a_clear_error(agent, tmp_path):
    always = SERVER[agent](handler=lambda record: AgentFault.malformed_sse())
    with always as server:
        client, sleep = client_for(agent, server, tmp_path, role={"max_retries": 1})
        with pytest.raises(RetriesExhausted) as err:
            await client.complete(MESSAGES, role="target")
        await client.aclose()
    assert len(sleep.delays) == 1  # retried once, then gave up
    message = str(err.value)
    assert "gave up after 2 attempts" in message
    # The CLI's own account of the broken answer.
    expected = {"claude_code": "JSON Parse error", "codex": "stream disconnected"}[agent]
    assert expected in message


@pytest.mark.parametrize("agent", AGENTS)
async def test_usage_limit_stops_resumably_without_retrying(agent, tmp_path):
    reset = int(time.time()) + 3600
    with SERVER[agent](replies=[AgentFault.usage_limit(reset)]) as server:
        if agent == "claude_code":
            # Limits are a subscription's: the CLI must be logged in (a lent login).
            home = tmp_path / "user-home"
            fake_claude_login(home)
            environ = {"HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url}
            client, sleep = client_for(
                agent, server, tmp_path, role={"base_url": None}, environ=environ
            )
        else:
            client, sleep = client_for(agent, server, tmp_path)
        with pytest.raises(UsageLimitReached) as err:
            await client.complete(MESSAGES, role="target")
        await client.aclose()
        assert len(server.model_requests) == 1 and sleep.delays == []
    message = str(err.value)
    assert "usage limit" in message.lower() and "resumable" in message
    assert "reset" in message or "try again at" in message


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_hung_stream_is_killed_at_the_timeout(agent, tmp_path):
    with SERVER[agent](replies=[AgentFault.stream_hang()]) as server:
        client, _ = client_for(agent, server, tmp_path, role={"timeout_s": 3, "max_retries": 0})
        started = time.monotonic()
        with pytest.raises(RetriesExhausted) as err:
            await client.complete(MESSAGES, role="target")
        elapsed = time.monotonic() - started
        await client.aclose()
    assert "did not finish within 3s; its process group was killed" in str(err.value)
    assert elapsed < 30  # killed, not left to its own (minutes-long) stream timeout


@pytest.mark.parametrize("agent", AGENTS)
async def test_missing_binary_is_one_line_naming_the_fix(agent, tmp_path):
    with SERVER[agent]() as server:
        client, _ = client_for(agent, server, tmp_path, role={"binary": str(tmp_path / "nope")})
        with pytest.raises(BadRequestError) as err:
            await client.complete(MESSAGES, role="target")
        await client.aclose()
        assert server.requests == []
    message = str(err.value)
    assert "\n" not in message and "models.target.binary" in message


def test_not_installed_names_the_install_command(monkeypatch, tmp_path):
    from core.models.agents import process as agent_process

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(agent_process, "AGENTS_BIN", tmp_path / "none")
    with pytest.raises(BadRequestError) as err:
        agent_process.find_binary("codex", None, setting="models.target.binary")
    message = str(err.value)
    assert "make agents" in message
    assert "npm install --prefix .tools/agents @openai/codex@0.169.0" in message


def test_a_relative_binary_is_made_absolute(monkeypatch, tmp_path):
    # The agent runs with its workspace as cwd, or on a Ray worker: a path relative to
    # the driver's cwd would name nothing there.
    from core.models.agents import process as agent_process

    (tmp_path / "bin").mkdir()
    program = tmp_path / "bin" / "codex"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    found = agent_process.find_binary("codex", "bin/codex", setting="models.target.binary")
    assert found == program and found.is_absolute()


@pytest.mark.parametrize("agent", AGENTS)
async def test_sessions_we_start_are_recorded_and_the_users_home_untouched(agent, tmp_path):
    home = tmp_path / "user-home"
    home.mkdir()
    (home / "marker").write_text("mine")
    with SERVER[agent](replies=[Reply("Paris")]) as server:
        client, _ = client_for(agent, server, tmp_path, environ={"HOME": str(home)})
        await client.complete(MESSAGES, role="target")
        await client.aclose()
    sessions = recorded_sessions()
    assert len(sessions) == 1
    (session,) = sessions
    uuid.UUID(session)  # Claude's session id / Codex's thread id
    assert sorted(p.name for p in home.rglob("*")) == ["marker"]


async def test_codex_chat_use_runs_in_a_read_only_sandbox(tmp_path):
    """A chat role's Codex still has a shell; the sandbox refuses every write."""
    target = tmp_path / "escaped.txt"
    write = shell_call("codex", f"touch {target}; echo tried")
    with SERVER["codex"](replies=[write, Reply("ok")]) as server:
        client, _ = client_for("codex", server, tmp_path)
        completion = await client.complete(MESSAGES, role="target")
        await client.aclose()
        (result,) = [
            item["output"]
            for item in server.model_requests[1].body["input"]
            if item.get("type") == "function_call_output"
        ]
    assert completion.text == "ok"
    assert "Read-only file system" in result and not target.exists()
