"""The deterministic night of the preference gate (sleep/preference_gate.py), on the
scripted TEST DOUBLE of tests/sleep/preference_double.py and a real skills repository.

A person asked four times, in four sessions, for a debug message and corrected the
agent's `print` to logging each time (one preference, four occurrences); four other
requests they accepted as answered (regression guards). The optimizer proposes
(a) the preference's rule: staged, its held-out occurrences now pass, the commit carries
    the sign test's p (weak here, said so) and the items that moved;
(b) an irrelevant rule: nothing staged;
(c) the rule plus one that breaks a guard: nothing staged, although the mean rises."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from sleep.mine.heuristic import shape_of
from sleep.mine.split import split_key, split_of
from sleep.mine.tasks import Correction, MinedTask, TaskArchive, task_id
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night
from tests.sleep.cli_world import SKILLOPT
from tests.sleep.night_double import NAMES
from tests.sleep.preference_double import (
    DEBUG_PROMPT,
    EXPLAIN_PROMPT,
    GUARD_BREAKER,
    PREFERENCE_RULE,
)
from tests.sleep.test_night import night_config as base_config
from tests.support.cli_in_process import run_main

DAY = dt.date(2026, 11, 30)
SKILL_TEXT = "# Project notes\n\nKeep answers short.\n"
CORRECTION = "no, use logging instead of print"
PREFERENCE = "pref-logging-not-print"


def _split(project: Path, prompt: str) -> str:
    return split_of(split_key(prompt), val_fraction=0.3, test_fraction=0.0)


def _pick(project: Path, prompt: str, val: int, train: int) -> list[str]:
    held = [p for p in NAMES if _split(project, prompt.format(part=p)) == "val"][:val]
    rest = [p for p in NAMES if _split(project, prompt.format(part=p)) == "train"][:train]
    assert len(held) == val and len(rest) == train, "pick more NAMES"
    return held + rest


def sessions(project: Path) -> list[dict]:
    """Four sessions: a debug request corrected to logging, then a request accepted."""
    debug = _pick(project, DEBUG_PROMPT, val=2, train=2)
    explain = _pick(project, EXPLAIN_PROMPT, val=1, train=3)
    out = []
    for i, (d, e) in enumerate(zip(debug, explain, strict=True)):
        stamp = f"2026-11-{10 + i:02d}T10:00:00Z"
        texts = [DEBUG_PROMPT.format(part=d), CORRECTION, EXPLAIN_PROMPT.format(part=e), "thanks"]
        out.append(
            {
                "source": "claude" if i % 2 == 0 else "codex",
                "session_id": f"s{i}",
                "cwd": str(project),
                "branch": "main",
                "file": f"/x/s{i}.jsonl",
                "automation": False,
                "tasks": [
                    {"text": t, "timestamp": stamp, "aborted": False, "answer": "Done: it works."}
                    for t in texts
                ],
            }
        )
    return out


def corrected_tasks(project: Path, harvested: list[dict]) -> list[MinedTask]:
    """What mining attaches to the debug requests (sleep-mining's work; written here so
    this test pins the gate alone): each corrected request with its correction and the
    preference id it shares with the others."""
    out = []
    for session in harvested:
        first = session["tasks"][0]
        sid = f"{session['source']}:{session['session_id']}"
        out.append(
            MinedTask(
                id=task_id(str(project), shape_of(first["text"])),
                intent=first["text"],
                project=str(project),
                rubric=f"The user corrected: {CORRECTION}",
                source_sessions=[sid],
                skill="project",
                first_seen=first["timestamp"],
                last_seen=first["timestamp"],
                corrections=[Correction(CORRECTION, sid, session["source"], first["timestamp"])],
                preference=PREFERENCE,
            )
        )
    return out


def night_config(brain: str):
    """test_night's night config with this double in every role but the miner (the
    heuristic miner mines tonight's sessions)."""
    config = base_config(None)
    for role in ("target", "optimizer", "judge"):
        config.models.role(role).model = brain
    config.models.miner.backend = "auto"
    return config


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    (p / "CLAUDE.md").write_text(SKILL_TEXT)
    return p


@pytest.fixture
def repo(tmp_path, project) -> SkillsRepo:
    r = SkillsRepo.init(tmp_path / "skills")
    r.add_skill("project", SKILL_TEXT, deploy_to=None)
    return r


async def night_with(tmp_path, repo, project, brain: str):
    harvested = sessions(project)
    TaskArchive(tmp_path / "state" / "tasks.json").merge(corrected_tasks(project, harvested))
    lines: list[str] = []
    night = Night(
        state_dir=tmp_path / "state",
        repo=repo,
        config=night_config(f"tests.sleep.preference_double:{brain}"),
        harvest=lambda _freeze: Harvested(harvested),
        project=project,
        today=DAY,
        min_val_tasks=3,
        on_line=lines.append,
    )
    result = await night.run()
    assert result.status == "finished", result.message
    return night, result, lines


async def test_the_preference_rule_is_staged_with_its_items_and_weak_p(tmp_path, repo, project):
    night, result, lines = await night_with(tmp_path, repo, project, "brain_rule")
    outcome = result.skills["project"]
    assert (outcome["train"], outcome["val"]) == (5, 3)  # 2 occurrences + 1 guard held out
    assert outcome["gate"] == "preferences"
    assert outcome["staged"] == "staged/sleep-2026-11-30-project"
    evidence = outcome["evidence"]
    assert (evidence["improved"], evidence["regressed"], evidence["p"]) == (2, 0, 0.5)
    assert evidence["weak"] and any("staged on weak evidence" in ln for ln in lines)
    [commit] = repo.diff(outcome["staged"]).evidence
    assert commit.trailers["Evidence"] == "p=0.5"
    assert commit.trailers["Evidence-Strength"] == "weak"
    assert "Items that moved:" in commit.body
    moved = [m["id"] for m in evidence["moved"]]
    body = commit.body.splitlines()
    # each held-out occurrence: from a fail to a pass (the pass mark 0.7), with its request
    # and replay mode; the double's replies make no diff, so a mined diff check still fails
    line = re.compile(r"- (t-\w+) \[(\w+)\] (\d\.\d\d) -> (\d\.\d\d): 'add a debug message")
    shown = {m[1]: (m[2], float(m[3]), float(m[4])) for m in map(line.match, body) if m}
    assert sorted(shown) == sorted(moved)
    assert all(mode and before < 0.7 <= after for mode, before, after in shown.values())
    assert "decided by judge 1.00: logs, no print" in commit.body
    assert f'"{CORRECTION}": corrected in ' in commit.body
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["skills"]["project"]["evidence"]["weak"] is True  # the TUI reads it
    staged = repo.git.blob(repo.staged_branches()[0].head, repo.entry("project").path).decode()
    assert PREFERENCE_RULE in staged


def _cli(tmp_path, args: list[str]):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    elsewhere = tmp_path / "elsewhere"  # no skills repository here or above
    elsewhere.mkdir(exist_ok=True)
    return run_main(args, env=env, cwd=elsewhere, argv0=str(SKILLOPT))


async def test_the_review_command_works_as_printed_and_status_says_what_moved(
    tmp_path,
    repo,
    project,
):
    """Fails on the old code: the night printed `skillopt skills diff` with no branch and
    no --repo ("not a skills repository" from any other folder), and `sleep status` showed
    no val, items or p."""
    _night, result, _lines = await night_with(tmp_path, repo, project, "brain_rule")
    gated = result.skills["project"]
    printed = re.search(r"`(skillopt skills diff [^`]+)`", result.message)
    assert printed, result.message
    shown = _cli(tmp_path, shlex.split(printed.group(1))[1:])
    assert shown.returncode == 0, shown.stderr
    assert PREFERENCE_RULE in shown.stdout and "Items that moved:" in shown.stdout
    status = _cli(tmp_path, ["sleep", "status", "--state-dir", str(tmp_path / "state")])
    assert status.returncode == 0, status.stderr
    assert (
        f"  project: val {gated['baseline_val']:.3f} -> {gated['best_val']:.3f} on 3 held-out "
        "item(s), 2 improved / 0 regressed, p=0.5 (weak), staged staged/sleep-2026-11-30-project"
    ) in status.stdout, status.stdout


async def test_dry_run_says_what_each_held_out_task_gates_as(tmp_path, repo, project):
    harvested = sessions(project)
    TaskArchive(tmp_path / "state" / "tasks.json").merge(corrected_tasks(project, harvested))
    night = Night(
        state_dir=tmp_path / "state", repo=repo, config=night_config("x:y"), project=project,
        harvest=lambda _freeze: Harvested(harvested), today=DAY, min_val_tasks=3, dry=True,
    )  # fmt: skip
    [route] = (await night.plan()).routes
    held = sorted(
        (t["gates_as"], t["text"].split()[1]) for t in route["tasks"] if t["split"] == "val"
    )
    assert held == [("guard", "what"), ("occurrence", "a"), ("occurrence", "a")]
    assert route["waiting_for_val"] is None


async def test_an_irrelevant_rule_stages_nothing(tmp_path, repo, project):
    _night, result, _lines = await night_with(tmp_path, repo, project, "brain_irrelevant")
    outcome = result.skills["project"]
    assert outcome["staged"] is None and repo.staged_branches() == []
    assert outcome["candidates"] >= 1  # it was gated, and lost
    assert "nothing staged" in result.message


async def test_a_rule_that_breaks_a_guard_stages_nothing(tmp_path, repo, project):
    """Fails on the old code: the mean gate staged it (two occurrences up by 0.8, one
    guard down by 0.8: the mean rose), breaking an answer the person had accepted."""
    night, result, _lines = await night_with(tmp_path, repo, project, "brain_guard_breaker")
    outcome = result.skills["project"]
    assert outcome["staged"] is None and repo.staged_branches() == []
    gates = [
        json.loads(p.read_text()) for p in (night.folder / "project" / "steps").glob("*/gate.json")
    ]
    assert any("guard(s) regressed" in g["reason"] for g in gates), gates
    assert GUARD_BREAKER  # (the rule the double proposed)
