"""The real `claude` 2.1.328 and `codex` 0.169.0 call `skillopt mcp` (shared AGENT-CLIS.md):
a scripted model on loopback asks for `sleep_review`, the agent runs our server on a fixture
skills repository, and the tool's result reaches the model's next request. Also the real
plugin validator on integrations/claude-code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.loopback_agent_models import (
    AgentRequest,
    Answer,
    LoopbackAgentModels,
    Say,
    UseTool,
)
from tests.support.tui_app import make_skills_repo

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".tools" / "agents" / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(
    not (BIN / "claude").exists() or not (BIN / "codex").exists(),
    reason="the agent CLIs are not installed: make .tools/.installed-agents",
)


def evidence_in(request: AgentRequest) -> bool:
    """The model's request carries our tool's result: the staged branch and its evidence."""
    text = json.dumps(request.body)
    return "staged/demo-finished" in text and "Val-After" in text


def claude_brain(request: AgentRequest) -> Answer:
    if evidence_in(request):
        return Answer([Say("Three hunks are staged.")])
    if "mcp__skillopt__sleep_review" in request.tool_names:
        return Answer([UseTool("mcp__skillopt__sleep_review", {})])
    # Claude Code defers MCP tools behind ToolSearch: load ours first, as a model would.
    return Answer([UseTool("ToolSearch", {"query": "select:mcp__skillopt__sleep_review"})])


def test_claude_plugin_validates(tmp_path):
    for target in (ROOT / "integrations" / "claude-code", ROOT):  # plugin, marketplace
        done = subprocess.run(
            [str(BIN / "claude"), "plugin", "validate", str(target)],
            env={"HOME": str(tmp_path), "PATH": os.environ["PATH"]},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Validation passed" in done.stdout


def test_claude_print_mode_calls_our_server(tmp_path):
    repo = make_skills_repo(tmp_path / "skills")
    config = tmp_path / "mcp.json"
    server = {
        "command": str(VENV_BIN / "skillopt"),
        "args": ["mcp", "--skills-repo", str(repo.path)],
    }
    config.write_text(json.dumps({"mcpServers": {"skillopt": server}}))
    with LoopbackAgentModels(claude_brain) as models:
        env = {
            "HOME": str(tmp_path), "PATH": os.environ["PATH"],
            "ANTHROPIC_BASE_URL": models.root_url, "ANTHROPIC_API_KEY": "sk-ant-loopback-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
        }  # fmt: skip
        done = subprocess.run(
            [str(BIN / "claude"), "-p", "What is staged for review?", "--output-format", "json",
             "--mcp-config", str(config), "--strict-mcp-config",
             "--allowedTools", "mcp__skillopt__sleep_review"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout)["result"] == "Three hunks are staged."
    last = models.requests[-1]
    assert evidence_in(last) and last.after_tool_result
    result = json.dumps(last.body["messages"][-1])
    assert "Val-After" in result and "hunk_count" in result  # our JSON, in the tool_result


def test_the_plugins_session_end_hook_runs_in_a_real_session(tmp_path):
    """`claude -p --plugin-dir integrations/claude-code`: when the session ends, the
    plugin's SessionEnd hook appends one line naming that session, and does nothing else."""
    with LoopbackAgentModels(lambda request: Answer([Say("Hello.")])) as models:
        env = {
            "HOME": str(tmp_path), "PATH": f"{VENV_BIN}:{os.environ['PATH']}",
            "ANTHROPIC_BASE_URL": models.root_url, "ANTHROPIC_API_KEY": "sk-ant-loopback-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
        }  # fmt: skip
        done = subprocess.run(
            [str(BIN / "claude"), "-p", "Say hello", "--output-format", "json",
             "--plugin-dir", str(ROOT / "integrations" / "claude-code")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    session = json.loads(done.stdout)["session_id"]
    state = tmp_path / ".local" / "state" / "skillopt" / "sleep"
    [line] = (state / "sessions-ended.log").read_text().splitlines()
    when, payload = line.split("\t")
    ended = json.loads(payload)
    assert (ended["hook_event_name"], ended["session_id"]) == ("SessionEnd", session)
    assert Path(ended["transcript_path"]).is_file()  # the transcript Sleep will harvest
    assert when.endswith("Z")
    assert sorted(p.name for p in state.iterdir()) == ["sessions-ended.log"]  # no night


def codex_brain(skills_repo: str):
    def brain(request: AgentRequest) -> Answer:
        if evidence_in(request):
            return Answer([Say("Three hunks are staged.")])
        if "mcp__skillopt" in request.tool_names:  # Codex lists MCP tools in a namespace
            review = UseTool(
                "sleep_review", {"skills_repo": skills_repo}, namespace="mcp__skillopt"
            )
            return Answer([review])
        return Answer([Say("no skillopt tools")])

    return brain


def test_codex_exec_calls_the_server_that_install_configured(tmp_path):
    repo = make_skills_repo(tmp_path / "skills")
    home = tmp_path / "home"
    home.mkdir()
    install = subprocess.run(
        [str(VENV_BIN / "skillopt"), "integrations", "install", "codex", "--home", str(home)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    with LoopbackAgentModels(codex_brain(str(repo.path))) as models:
        provider = (
            f'model_providers.lp={{name="lp",base_url="{models.root_url}/v1",'
            'env_key="LOCAL_KEY",wire_api="responses"}'
        )
        done = subprocess.run(
            [str(BIN / "codex"), "exec", "--json", "--skip-git-repo-check", "-s", "read-only",
             "-m", "local-model", "-c", "model_provider=lp", "-c", provider,
             "What is staged for review?"],
            # In the folder holding the skills repo: the server's roots are its working
            # directory (never the home itself) and what `sleep init` recorded.
            cwd=tmp_path, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
            env={"HOME": str(home), "PATH": os.environ["PATH"], "CODEX_HOME": str(home / ".codex"),
                 "LOCAL_KEY": "loopback-dummy"},
            check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    calls = [
        e["item"]
        for e in events
        if e.get("type") == "item.completed" and e["item"]["type"] == "mcp_tool_call"
    ]
    assert [(c["server"], c["tool"], c["status"]) for c in calls] == [
        ("skillopt", "sleep_review", "completed")
    ]
    last = models.requests[-1]
    assert last.after_tool_result and evidence_in(last)
    assert "hunk_count" in json.dumps(last.body["input"][-1])  # our JSON, in the call's output
