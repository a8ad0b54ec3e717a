"""A need learned from one agent's sessions is proposed to every main instruction file of
the project (sleep/night/routing.sibling_files): tonight only Claude Code sessions came,
and AGENTS.md is still proposed what they teach, trained on them, and gated only on
Codex's own tasks. Fails on the old code: AGENTS.md never heard of a need the person
corrected only in Claude Code sessions (no route, and Claude tasks never reached it)."""

from __future__ import annotations

import datetime as dt

from core.skills_repo import SkillsRepo
from sleep.mine.heuristic import shape_of
from sleep.mine.tasks import MinedTask, TaskArchive, task_id
from sleep.night.held_tasks import Harvested
from sleep.night.routing import BY_SIBLING
from sleep.night.run import Night
from tests.sleep.preference_double import EXPLAIN_PROMPT
from tests.sleep.test_preference_night import _pick, night_config, sessions

DAY = dt.date(2026, 11, 30)
CODEX_PROMPT = EXPLAIN_PROMPT.replace("the {part}", "our {part}")


async def test_agents_md_learns_from_claude_sessions_and_gates_on_codex_tasks(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("CLAUDE.md", "AGENTS.md"):
        (project / name).write_text("# Notes\n")
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("proj", "# Notes\n", deploy_to=str(project / "CLAUDE.md"))
    repo.add_skill("proj-agents", "# Notes\n", deploy_to=str(project / "AGENTS.md"))
    # Codex's own tasks from an earlier night: one held out, one to train on
    codex = [
        MinedTask(
            id=task_id(str(project), shape_of(CODEX_PROMPT.format(part=part))),
            intent=CODEX_PROMPT.format(part=part),
            project=str(project),
            skill="proj-agents",
            reference="It is for handling requests.",
            source_sessions=[f"codex:old-{part}"],
        )  # fmt: skip
        for part in _pick(project, CODEX_PROMPT, val=1, train=1)
    ]
    TaskArchive(tmp_path / "state" / "tasks.json").merge(codex)
    tonight = [s for s in sessions(project) if s["source"] == "claude"]
    night = Night(
        state_dir=tmp_path / "state", repo=repo, config=night_config("x:y"),
        harvest=lambda _freeze: Harvested(tonight), project=project, today=DAY, dry=True,
    )  # fmt: skip
    plan = await night.plan()
    routes = {r["skill"]: r for r in plan.routes}
    assert set(routes) == {"proj", "proj-agents"}
    agents = routes["proj-agents"]
    assert agents["routed_by"] == BY_SIBLING and agents["sessions"] == 0
    trained = {t["source"] for t in agents["tasks"] if t["split"] == "train"}
    gated = {t["source"] for t in agents["tasks"] if t["split"] != "train"}
    assert "claude" in trained  # learned from the Claude Code sessions
    assert gated == {"codex"}  # gated on Codex's own tasks only
    claude = routes["proj"]
    assert {t["source"] for t in claude["tasks"] if t["split"] != "train"} <= {"claude"}
