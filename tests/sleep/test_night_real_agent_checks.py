"""Issue 21 done-when: a night with the REAL `claude` binary (Claude Code) as target, on a
project whose person's sessions ran `make test`: the mined check runs in the replay
workspace (the recorded commit's tree with the agent's changes), in the bubblewrap jail,
and decides the item.

The agent's brain is a scripted loopback Anthropic server (TEST DOUBLE): it edits calc.py
with the agent's own Bash tool, a right fix for two of the four tasks and a wrong one that
claims the fix for the others, then says it is done. The judge (scripted TEST DOUBLE,
tests/sleep/night_checks_world.judge_says_fixed) gives every reply 0.9; so the replays
whose `make test` fails score 0, the others keep 0.9."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.agents.process import AGENTS_BIN
from core.skills_repo import SkillsRepo
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from tests.sleep.night_checks_world import (
    FIXED,
    WRONG,
    git,
    make_project,
    part_of,
    parts_for,
    replayed_items,
    sessions,
)
from tests.support.agent_clis import AGENT_TESTS
from tests.support.jail import jail  # noqa: F401 - the fixture
from tests.support.loopback_agent_servers import LoopbackMessagesSSE, Reply, ToolCall

pytestmark = AGENT_TESTS
SCRIPTED = "tests.sleep.night_checks_world:judge_says_fixed"
TRAIN = {
    "epochs": 1,
    "strategy": "llm",
    "gate": {"metric": "soft"},
    "schedule": {"kind": "constant", "start": 2, "end": 2},
    "slow_update": {"enabled": False},
    "meta_skill": {"enabled": False},
}


class AgentBrain:
    """Stateless per request: which task this session is (its prompt, in what the agent
    sent), then how many tool results it has had: 0 → the edit, else → done."""

    def __init__(self, parts: list[str], fixing: set[str]) -> None:
        self.parts, self.fixing = parts, fixing

    def __call__(self, record) -> Reply | ToolCall:
        body = record.body if isinstance(record.body, dict) else {}
        messages = body.get("messages", [])
        sent = json.dumps([m for m in messages if m.get("role") == "user"])
        part = part_of(sent, self.parts)
        if part is None:
            return Reply("ok")
        done = sum(
            1
            for m in messages
            if isinstance(m.get("content"), list)
            for block in m["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        if done:
            return Reply("Done: total() now skips None values.")
        code = FIXED if part in self.fixing else WRONG
        command = f"cat > calc.py <<'EOF'\n{code}EOF"
        return ToolCall("Bash", {"command": command, "description": "fix total()"})


@pytest.mark.usefixtures("jail")
async def test_the_real_claude_replay_is_decided_by_the_sessions_make_test(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLOPT_STATE_DIR", str(tmp_path / "ours"))
    project = make_project(tmp_path)
    head = git(project, "rev-parse", "HEAD").strip()
    parts = parts_for(project)
    fixing = {parts[0], parts[2]}  # one val and one train task get the right fix
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("calc", "# Calc\n\nKeep answers short.\n", deploy_to=str(project / "CLAUDE.md"))
    with LoopbackMessagesSSE(AgentBrain(parts, fixing)) as server:
        roles = {r: {"backend": "scripted", "model": SCRIPTED} for r in ("optimizer", "judge")}
        roles["target"] = {
            "backend": "claude_code",
            "base_url": server.base_url,
            "binary": str(AGENTS_BIN / "claude"),
            "skill_placement": "claude_md",
            "timeout_s": 90.0,
            "max_retries": 1,
        }
        night = Night(
            state_dir=tmp_path / "state",
            repo=repo,
            config=config_from_dict({"models": roles, "train": TRAIN}),
            harvest=lambda _freeze: Harvested(sessions(project, parts)),
            project=project,
            today=dt.date(2026, 12, 2),
            check_timeout_s=60.0,
            min_val_tasks=2,  # parts_for gives two held-out tasks, not the default six
        )
        plan = await night.plan()
        result = await night.run()
    assert result.status == "finished", result.message
    assert {t["replay"] for t in plan.routes[0]["tasks"]} == {"agent"}
    assert all(
        t["checks"] == [{"kind": "command", "value": "make test", "will_run": True, "not_run_reason": ""}]
        for t in plan.routes[0]["tasks"]
    )  # fmt: skip
    items = replayed_items(night.folder / "calc")
    assert {part_of(r["question"], parts) for r in items} == set(parts)
    for row in items:
        [checks] = [m for m in row["trajectory"] if m["role"] == "checks"]
        [check] = checks["checks"]
        assert "judge 0.90" in row["explanation"]
        assert (
            "+    return sum(x for x in xs" in row["prediction"]
            or "+    # skips None" in row["prediction"]
        )
        if part_of(row["question"], parts) in fixing:
            assert (check["status"], check["exit_code"]) == ("pass", 0) and "OK" in check["output"]
            assert (row["soft"], row["hard"]) == (0.9, 1.0)
        else:
            assert check["status"] == "fail" and "TypeError" in check["output"]
            assert (row["soft"], row["hard"]) == (0.0, 0.0)
            assert "hard fail: `make test`: FAILED" in row["explanation"]
    saved = json.loads((night.folder / "night.json").read_text())["skills"]["calc"]
    assert saved["checks"]["pass"] > 0 and saved["checks"]["fail"] > 0
    # The replays and their checks ran on the recorded commit's tree, never in the checkout.
    assert json.loads((night.folder / "replay.json").read_text())["commit"] == head
    assert (project / "calc.py").read_text() == "def total(xs):\n    return sum(xs)\n"
    assert git(project, "status", "--porcelain").strip() == "?? scratch.txt"
    assert not (Path(project) / "__pycache__").exists()
