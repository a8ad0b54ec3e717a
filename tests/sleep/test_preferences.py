"""Preferences (issue 37): corrections that say the same thing in different sessions,
under different requests and agents, are one preference with each time it was said; a
stated constraint counts as saying it; `dry-run --json` lists them at the top level."""

from __future__ import annotations

import json

from core.skills_repo import SkillsRepo
from sleep.mine.heuristic import mine_sessions
from sleep.mine.preferences import Occurrence, group_preferences
from sleep.mine.tasks import MinedTask, TaskArchive
from tests.sleep.test_night import SKILL_TEXT, make_night


def session(sid: str, source: str, day: int, *prompts: tuple[str, str]) -> dict:
    return {"source": source, "session_id": sid, "cwd": "/p", "automation": False,
            "tasks": [{"text": t, "answer": a, "timestamp": f"2026-12-0{day}T10:00:00Z",
                       "tools": ["Edit"]} for t, a in prompts]}  # fmt: skip


SESSIONS = [
    session("a", "claude", 1, ("add a --verbose flag to cli.py", "Added print() calls."),
            ("no, use logging instead of print", "Switched to logging.")),
    session("b", "codex", 2, ("add progress output to sync.py", "Added print()."),
            ("use the logging module, not print()", "Now logs.")),
    session("c", "claude", 3, ("report skipped rows in loader.py", "print() per row."),
            ("logging, not print", "Uses logging.")),
    session("d", "codex", 4, ("parse the export in orders.py, standard library only", "Done with csv."),
            ("refactor billing.py (keep the public API unchanged)", "Refactored.")),
    session("e", "claude", 5, ("add retries to client.py", "Added tenacity."),
            ("don't add dependencies", "Rewrote with a loop."),
            ("split report.py into modules", "Split it; renamed render()."),
            ("you changed the public API, keep it unchanged", "Restored render().")),
]  # fmt: skip


def test_the_same_correction_in_different_sessions_is_one_preference():
    tasks = mine_sessions(SESSIONS)
    preferences = {p.text: p for p in group_preferences(tasks)}
    logging = preferences["use the logging module, not print()"]  # the clearest wording
    assert [(o.session, o.agent, o.date) for o in logging.occurrences] == [
        ("claude:a", "claude", "2026-12-01T10:00:00Z"),
        ("codex:b", "codex", "2026-12-02T10:00:00Z"),
        ("claude:c", "claude", "2026-12-03T10:00:00Z"),
    ]
    assert len({o.task for o in logging.occurrences}) == 3  # three different requests
    no_deps = [p for p in preferences.values() if "dependencies" in p.text or "standard" in p.text]
    assert len(no_deps) == 1 and len(no_deps[0].sessions) == 2  # once said up front
    api = [p for p in preferences.values() if "public API" in p.text]
    assert len(api) == 1 and len(api[0].sessions) == 2
    by_task = {t.intent: t for t in tasks}
    assert by_task["add progress output to sync.py"].preference == logging.id
    assert by_task["add a --verbose flag to cli.py"].preference == logging.id


def test_a_preference_id_is_stable_whichever_wording_came_first():
    forward = group_preferences(mine_sessions(SESSIONS[:3]))[0]
    backward = group_preferences(mine_sessions(SESSIONS[2::-1]))[0]
    assert forward.id == backward.id
    assert Occurrence is type(forward.occurrences[0])


def test_an_archive_without_corrections_or_preferences_still_loads(tmp_path):
    path = tmp_path / "tasks.json"
    old = {"id": "t-1", "intent": "fix the flaky test", "project": "/p", "kind": "agentic",
           "rubric": "", "checks": [], "source_sessions": ["claude:s"], "skill": None,
           "occurrences": 1, "first_seen": None, "last_seen": None, "branch": None}  # fmt: skip
    path.write_text(json.dumps({"version": 1, "tasks": [old]}))
    [task] = TaskArchive(path).load().values()
    assert task.corrections == [] and task.preference is None
    assert "corrections" not in task.to_dict() and "preference" not in task.to_dict()
    [again] = mine_sessions(SESSIONS[:1])
    stored = MinedTask.from_dict(json.loads(json.dumps(again.to_dict())))
    assert stored.corrections == again.corrections and stored.preference == again.preference


async def test_dry_run_lists_the_preferences(tmp_path):
    from skillopt_tui.cli.sleep_night_cmds import _plan_json

    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text(SKILL_TEXT)
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("project", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    (project / "AGENTS.md").write_text(SKILL_TEXT)
    repo.add_skill("agents", SKILL_TEXT, deploy_to=str(project / "AGENTS.md"))
    harvested = [{**s, "cwd": str(project), "branch": "main", "file": f"/x/{s['session_id']}"}
                 for s in SESSIONS]  # fmt: skip
    # the heuristic's grouping: the night's scripted miner (night_double) would read the
    # corrections that do not start with "no," as requests of their own
    night = make_night(tmp_path, repo, project, harvested, dry=True, heuristic_only=True)
    listed = _plan_json(await night.plan(), "double", {})
    texts = {p["text"]: p for p in listed["preferences"]}
    logging = texts["use the logging module, not print()"]
    assert [set(o) for o in logging["occurrences"]] == [{"task", "session", "agent", "date"}] * 3
    assert [o["agent"] for o in logging["occurrences"]] == ["claude", "codex", "claude"]


def test_wordings_that_share_a_meaning_are_one_preference():
    """issue 37 (corpus): "don't print debug output, log it at debug level" stood apart
    from "use logging, not print"; "one line please" from "just yes or no?"; the
    public-API corrections had no words in common."""
    said = [
        ("a", "add a --verbose flag to cli.py", "use logging, not print"),
        ("b", "add a debug dump to pipeline.py", "don't print debug output, log it at debug level"),
        ("c", "are late fees compounded daily?", "that's a lot to read — just yes or no?"),
        ("d", "should CI use a token or a deploy key?", "one line please"),
        ("e", "rename parse_amount to parse_money", "you dropped the old function, callers still use it"),
        ("f", "move format_total into formatting.py", "keep the old import path working"),
    ]  # fmt: skip
    tasks = mine_sessions(
        [session(sid, "claude", 1, (ask, "x"), (fix, "y")) for sid, ask, fix in said]
    )
    groups = sorted(sorted(o.session for o in p.occurrences) for p in group_preferences(tasks))
    assert groups == [["claude:a", "claude:b"], ["claude:c", "claude:d"], ["claude:e", "claude:f"]]
