"""Routing by the agent that will read the file: Claude Code's tasks improve CLAUDE.md and
`.claude/skills`, Codex's improve AGENTS.md and `.agents/skills`; a skill's gate sees only
tasks of agents that read it. The night tests run on the transcripts the real CLIs wrote
(tests/sleep/fixtures/real, moved into a private home by tests/support/sleep_world.py)
and the scripted TEST DOUBLE (tests/sleep/night_double.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import UserError
from core.skills_repo import SkillsRepo
from core.skills_repo.types import SkillEntry
from sleep.mine.tasks import MinedTask, TaskArchive
from sleep.night.routing import (
    BY_FLAG,
    BY_MAIN_FILE,
    BY_TRANSCRIPT,
    left_out_reason,
    plan_routes,
    readers,
)
from tests.support.sleep_world import real_cli_world, world_night

PROJECT = Path("/home/alex/src/app")


def entry(name: str, deploy_to: str | None) -> SkillEntry:
    return SkillEntry(name, f"{name}/SKILL.md", deploy_to)


ENTRIES = [
    entry("app", str(PROJECT / "CLAUDE.md")),
    entry("app-agents", str(PROJECT / "AGENTS.md")),
    entry("review", "~/.claude/skills/review/SKILL.md"),
    entry("release", str(PROJECT / ".agents" / "skills" / "release" / "SKILL.md")),
    entry("notes", None),
]


def session(source: str, sid: str, skills: list[str] | None = None) -> dict:
    return {"source": source, "session_id": sid, "cwd": str(PROJECT), "skills": skills or []}


def test_each_skill_is_read_by_the_agents_of_its_deploy_target():
    assert {e.name: readers(e) for e in ENTRIES} == {
        "app": {"claude"},
        "app-agents": {"agents"},
        "review": {"claude"},
        "release": {"agents"},
        "notes": None,
    }


def test_sessions_go_to_the_main_file_their_agent_reads():
    routing = plan_routes(
        [session("claude", "c1"), session("codex", "x1"), session("codex", "x2")],
        ENTRIES,
        project=PROJECT,
    )
    got = {r.skill: (r.routed_by, [s["session_id"] for s in r.sessions]) for r in routing.routes}
    assert got == {
        "app": (BY_MAIN_FILE["claude"], ["c1"]),
        "app-agents": (BY_MAIN_FILE["agents"], ["x1", "x2"]),
    }


def test_the_other_agents_read_agents_md_and_say_so_in_routed_by():
    """pi, OpenCode, Copilot CLI, VS Code Copilot Chat and Cursor sessions go to the skill
    deployed to the project's AGENTS.md, never to CLAUDE.md, and the route names them."""
    sources = ["pi", "opencode", "copilot", "vscode", "cursor"]
    routing = plan_routes(
        [session(source, f"{source}-1") for source in sources], ENTRIES, project=PROJECT
    )
    (route,) = routing.routes
    assert route.skill == "app-agents"
    assert route.routed_by == "; ".join(
        f"{name} reads AGENTS.md"
        for name in ("pi", "OpenCode", "Copilot CLI", "VS Code Copilot Chat", "Cursor")
    )
    assert route.accepts(["pi:pi-1"]) and not route.accepts(["claude:c1"])


def test_a_named_skill_counts_only_when_the_sessions_agent_reads_it():
    routing = plan_routes(
        [
            session("claude", "c1", ["review"]),
            session("codex", "x1", ["review"]),  # Codex does not read ~/.claude/skills
            session("codex", "x2", ["release"]),
            session("claude", "c2", ["notes"]),  # deployed nowhere known: any agent
        ],
        ENTRIES,
        project=PROJECT,
    )
    got = {r.skill: (r.routed_by, [s["session_id"] for s in r.sessions]) for r in routing.routes}
    assert got == {
        "review": (BY_TRANSCRIPT, ["c1"]),
        "app-agents": (BY_MAIN_FILE["agents"], ["x1"]),
        "release": (BY_TRANSCRIPT, ["x2"]),
        "notes": (BY_TRANSCRIPT, ["c2"]),
    }


def test_a_route_filled_by_two_rules_names_both():
    routing = plan_routes(
        [session("claude", "c1", ["app"]), session("claude", "c2")], ENTRIES, project=PROJECT
    )
    [route] = routing.routes
    assert route.routed_by == f"{BY_TRANSCRIPT}; {BY_MAIN_FILE['claude']}"


def test_codex_sessions_without_an_agents_file_are_left_out_not_sent_to_claude_md():
    only_claude = [ENTRIES[0], ENTRIES[2]]
    routing = plan_routes(
        [session("codex", "x1"), session("claude", "c1")], only_claude, project=PROJECT
    )
    assert [r.skill for r in routing.routes] == ["app"]
    assert [s["session_id"] for s in routing.routes[0].sessions] == ["c1"]
    assert routing.left_out == [
        {"session": "codex:x1", "source": "codex", "reason": left_out_reason("agents")}
    ]
    assert "AGENTS.md" in routing.left_out[0]["reason"]
    [line] = routing.describe_left_out()
    assert "AGENTS.md" in line and "--skill" in line


def test_skill_flag_overrides_every_rule():
    routing = plan_routes(
        [session("codex", "x1"), session("claude", "c1")], ENTRIES, project=PROJECT, forced="app"
    )
    [route] = routing.routes
    assert (route.skill, route.routed_by, len(route.sessions)) == ("app", BY_FLAG, 2)
    assert route.accepts(["codex:x1"])
    with pytest.raises(UserError, match="no such skill"):
        plan_routes([], ENTRIES, project=PROJECT, forced="nope")


def test_no_skill_for_the_project_at_all_is_a_clear_error():
    with pytest.raises(UserError, match="sleep init"):
        plan_routes([session("claude", "c1")], [ENTRIES[2], ENTRIES[3]], project=PROJECT)


# -- a night over the real CLIs' transcripts ------------------------------------------------


@pytest.fixture
def world(tmp_path):
    return real_cli_world(tmp_path)


def _tasks_of(folder: Path) -> dict[str, list[dict]]:
    frozen = json.loads((folder / "tasks.json").read_text())["skills"]
    return {skill: [t for ts in splits.values() for t in ts] for skill, splits in frozen.items()}


def _gated_of(folder: Path) -> dict[str, list[dict]]:
    """The tasks each skill was gated and tested on (val and test)."""
    frozen = json.loads((folder / "tasks.json").read_text())["skills"]
    return {skill: splits["val"] + splits["test"] for skill, splits in frozen.items()}


async def test_codex_tasks_never_gate_claude_md(world):
    night = world_night(world)
    plan = await night.plan()
    routes = {r["skill"]: r for r in plan.routes}
    assert routes["notes-app"]["routed_by"] == BY_MAIN_FILE["claude"]
    assert routes["notes-app"]["sessions"] == 2  # the interactive and the print-mode session
    assert routes["notes-app-agents"]["routed_by"] == BY_MAIN_FILE["agents"]
    assert routes["notes-app-agents"]["sessions"] == 1  # the `codex exec` session

    result = await world_night(world).run()
    tasks = _tasks_of(result.folder)
    gated = _gated_of(result.folder)
    # each main file learns from both agents' tasks (a need is the person's) ...
    for skill in ("notes-app", "notes-app-agents"):
        sources = {s.split(":")[0] for t in tasks[skill] for s in t["source_sessions"]}
        assert sources == {"claude", "codex"}, (skill, sources)
    # ... and is gated only on tasks of the agent that reads it
    assert all(s.startswith("claude:") for t in gated["notes-app"] for s in t["source_sessions"])
    assert all(
        s.startswith("codex:") for t in gated["notes-app-agents"] for s in t["source_sessions"]
    )
    assert "Count the lines of notes.py." in [t["intent"] for t in tasks["notes-app-agents"]]
    repo = SkillsRepo.open(world.skills)
    for branch in repo.staged_branches():
        [evidence] = repo.diff(branch.name).evidence
        assert evidence.trailers["Routed-By"] == result.skills[branch.skill]["routed_by"]


async def test_an_archive_from_before_routing_by_agent_keeps_codex_tasks_off_claude_md(world):
    """Nights of the old routing filed Codex tasks under the CLAUDE.md skill; the gate of
    CLAUDE.md must not take them up again from the archive (it may learn from them)."""
    stale = MinedTask(
        id="t-stalecodex01",
        intent="explain the release checklist for this repository",
        project=str(world.project),
        skill="notes-app",
        source_sessions=["codex:019e0000-old"],
    )
    TaskArchive(world.state / "tasks.json").merge([stale])
    result = await world_night(world).run()
    assert "t-stalecodex01" not in {t["id"] for t in _gated_of(result.folder)["notes-app"]}


def test_an_agents_own_skill_folder_is_read_by_that_agent_only():
    """pi reads .pi/skills, OpenCode .opencode/skills, Copilot CLI .github/skills (where
    the agent backends place a skill): a skill deployed there takes that agent's sessions
    that name it, never another AGENTS.md reader's, and gates only on that agent's tasks."""
    own = [
        entry("lint", str(PROJECT / ".pi" / "skills" / "lint" / "SKILL.md")),
        entry("ship", str(PROJECT / ".opencode" / "skills" / "ship" / "SKILL.md")),
        entry("triage", str(PROJECT / ".github" / "skills" / "triage" / "SKILL.md")),
        entry("app-agents", str(PROJECT / "AGENTS.md")),
    ]
    assert [readers(e) for e in own] == [{"pi"}, {"opencode"}, {"copilot"}, {"agents"}]
    routing = plan_routes(
        [
            session("pi", "p1", ["lint"]),
            session("codex", "x1", ["lint"]),  # Codex does not read .pi/skills
            session("opencode", "o1", ["ship"]),
            session("copilot", "c1", ["triage"]),
        ],
        own,
        project=PROJECT,
    )
    got = {r.skill: (r.routed_by, [s["session_id"] for s in r.sessions]) for r in routing.routes}
    assert got == {
        "lint": (BY_TRANSCRIPT, ["p1"]),
        "ship": (BY_TRANSCRIPT, ["o1"]),
        "triage": (BY_TRANSCRIPT, ["c1"]),
        "app-agents": ("Codex reads AGENTS.md", ["x1"]),
    }
    lint = next(r for r in routing.routes if r.skill == "lint")
    assert lint.accepts(["pi:p1"]) and not lint.accepts(["codex:x1", "opencode:o1"])
