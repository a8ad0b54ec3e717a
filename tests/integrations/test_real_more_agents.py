"""The real `opencode` 1.18.33 and `copilot` 1.0.102 call `skillopt mcp` as
`skillopt integrations install` configured it (issue 23): a scripted model on loopback asks
for `sleep_review`, the agent starts our server from its own config, and the tool's result
reaches the model's next request."""

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

pytestmark = [
    pytest.mark.agents,
    pytest.mark.skipif(
        not (BIN / "opencode").exists() or not (BIN / "copilot").exists(),
        reason="opencode and copilot are not installed: make .tools/.installed-agents",
    ),
]


def evidence_in(request: AgentRequest) -> bool:
    text = json.dumps(request.body)
    return "staged/demo-finished" in text and "Val-After" in text


def brain(skills_repo: str):
    def answer(request: AgentRequest) -> Answer:
        if evidence_in(request):
            return Answer([Say("Three hunks are staged.")])
        ours = [t for t in request.tool_names if "skillopt" in t and "sleep_review" in t]
        if ours:
            return Answer([UseTool(ours[0], {"skills_repo": skills_repo})])
        return Answer([Say("no skillopt tools")])  # e.g. OpenCode's title call

    return answer


def install(agent: str, home: Path) -> None:
    done = subprocess.run(
        [str(VENV_BIN / "skillopt"), "integrations", "install", agent, "--home", str(home)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def run_agent(agent: str, home: Path, cwd: Path, url: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    if agent == "opencode":
        config = home / ".config" / "opencode" / "opencode.json"
        data = json.loads(config.read_text())  # the provider is the test's, beside our entry
        data["provider"] = {"anthropic": {"options": {"baseURL": f"{url}/v1", "apiKey": "x"}}}
        config.write_text(json.dumps(data))
        env.update(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1")
        argv = [str(BIN / "opencode"), "run", "--format", "json",
                "-m", "anthropic/claude-sonnet-4-5", "What is staged for review?"]  # fmt: skip
    else:
        env.update(COPILOT_OFFLINE="true", COPILOT_PROVIDER_TYPE="anthropic",
                   COPILOT_PROVIDER_BASE_URL=url, COPILOT_PROVIDER_API_KEY="x",
                   COPILOT_MODEL="claude-sonnet-4-5")  # fmt: skip
        argv = [str(BIN / "copilot"), "-p", "What is staged for review?", "--allow-all-tools",
                "--output-format", "json", "--no-ask-user"]  # fmt: skip
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("agent", ["opencode", "copilot"])
def test_the_agent_calls_the_server_that_install_configured(tmp_path, agent):
    repo = make_skills_repo(tmp_path / "skills")
    home = tmp_path / "home"
    home.mkdir()
    install(agent, home)
    with LoopbackAgentModels(brain(str(repo.path))) as models:
        # In the folder holding the skills repo: the server's roots are its working
        # directory (never the home itself) and what `sleep init` recorded.
        done = run_agent(agent, home, tmp_path, models.root_url)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    listed = [r for r in models.requests if any("sleep_review" in t for t in r.tool_names)]
    assert listed, "our tools were never offered to the model"
    last = models.requests[-1]
    assert last.after_tool_result and evidence_in(last)
    assert "hunk_count" in json.dumps(last.body["messages"][-1])  # our JSON, in the result
    assert "Three hunks are staged." in done.stdout
