"""The deterministic night of the preference gate (sleep/preference_gate.py), on the
scripted TEST DOUBLE of tests/sleep/preference_double.py and a real skills repository.

A person asked four times, in four sessions, for a debug message and corrected the
agent's `print` to logging each time (one preference, four occurrences); four other
requests they accepted as answered (regression guards). The optimizer proposes
(a) the preference's rule: staged, its held-out occurrences now pass, the commit carries
    the sign test's p (weak here, said so) and the items that moved;
(b) an irrelevant rule: nothing staged;
(c) the rule plus one that breaks a guard: nothing staged, although the mean rises;
and edit by edit: a good rule beside an irrelevant one stages the good one alone, two
rules for two preferences stage both, each with its own sessions, and a rule naming a
project file its corrections never named is flagged."""

from __future__ import annotations

import dataclasses
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
    CLAIMED_RULE,
    DEBUG_PROMPT,
    EXPLAIN_PROMPT,
    FACTS_RULE,
    GUARD_BREAKER,
    IRRELEVANT_RULE,
    PREFERENCE_RULE,
    TESTS_PROMPT,
    YES_NO_RULE,
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


def session(project: Path, source: str, sid: str, stamp: str, texts: list[str]) -> dict:
    return {
        "source": source,
        "session_id": sid,
        "cwd": str(project),
        "branch": "main",
        "file": f"/x/{sid}.jsonl",
        "automation": False,
        "tasks": [
            {"text": t, "timestamp": stamp, "aborted": False, "answer": "Done: it works."}
            for t in texts
        ],
    }


def sessions(project: Path) -> list[dict]:
    """Four sessions: a debug request corrected to logging, then a request accepted."""
    debug = _pick(project, DEBUG_PROMPT, val=2, train=2)
    explain = _pick(project, EXPLAIN_PROMPT, val=1, train=3)
    return [
        session(
            project,
            "claude" if i % 2 == 0 else "codex",
            f"s{i}",
            f"2026-11-{10 + i:02d}T10:00:00Z",
            [DEBUG_PROMPT.format(part=d), CORRECTION, EXPLAIN_PROMPT.format(part=e), "thanks"],
        )
        for i, (d, e) in enumerate(zip(debug, explain, strict=True))
    ]


def corrected_tasks(
    project: Path,
    harvested: list[dict],
    correction: str = CORRECTION,
    asked: str = "debug message",
    preference: str | None = PREFERENCE,
) -> list[MinedTask]:
    """What mining attaches to the requests a session starts with that hold `asked`
    (sleep-mining's work; written here so this test pins the gate alone): each corrected
    request with its correction and the preference id it shares with the others."""
    out = []
    for held in harvested:
        first = held["tasks"][0]
        if asked not in first["text"]:
            continue
        sid = f"{held['source']}:{held['session_id']}"
        out.append(
            MinedTask(
                id=task_id(str(project), shape_of(first["text"])),
                intent=first["text"],
                project=str(project),
                rubric=f"The user corrected: {correction}",
                source_sessions=[sid],
                skill="project",
                first_seen=first["timestamp"],
                last_seen=first["timestamp"],
                corrections=[Correction(correction, sid, held["source"], first["timestamp"])],
                preference=preference,
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


async def night_with(
    tmp_path,
    repo,
    project,
    brain: str,
    harvested: list[dict] | None = None,
    mined: list[MinedTask] | None = None,
):
    """A night of the double `brain` on `harvested` (the four logging sessions unless
    given), with `mined` in the archive (unless given, the corrected requests' tasks as
    mining would leave them)."""
    harvested = harvested if harvested is not None else sessions(project)
    if mined is None:
        mined = corrected_tasks(project, harvested)
        mined += corrected_tasks(project, harvested, YES_NO, "tests pass", preference=None)
    TaskArchive(tmp_path / "state" / "tasks.json").merge(mined)
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
    assert f'"{PREFERENCE_RULE}": addresses "{CORRECTION}"' in commit.body
    sessions = "claude:s0 (claude, 2026-11-10); codex:s1 (codex, 2026-11-11); "
    assert commit.trailers["Edit-1-Sessions"].startswith(sessions)
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


# -- per edit: each staged rule traces to a preference whose held-out occurrences moved --

YES_NO = "answer yes or no first"


def two_preference_sessions(project: Path) -> list[dict]:
    """The four logging sessions, and three more where the person asked whether a part's
    tests pass and corrected a long answer: "answer yes or no first" (a second preference,
    corrected in sessions of its own; one request held out, two to learn from)."""
    return sessions(project) + [
        session(
            project,
            "codex" if i % 2 == 0 else "claude",
            f"q{i}",
            f"2026-11-{20 + i:02d}T10:00:00Z",
            [TESTS_PROMPT.format(part=part), YES_NO],
        )
        for i, part in enumerate(_pick(project, TESTS_PROMPT, val=1, train=2))
    ]


def staged_text(repo: SkillsRepo) -> str:
    [branch] = repo.staged_branches()
    return repo.git.blob(branch.head, repo.entry("project").path).decode()


async def test_a_good_rule_beside_an_irrelevant_one_stages_only_the_good_rule(
    tmp_path, repo, project
):
    """Fails on the old code: the gate judged the candidate whole, so the irrelevant rule
    rode along with the one that moved the held-out occurrences and was staged too."""
    night, result, lines = await night_with(
        tmp_path, repo, project, "brain_rule_and_irrelevant", sessions(project)
    )
    outcome = result.skills["project"]
    assert outcome["staged"] == "staged/sleep-2026-11-30-project"
    text = staged_text(repo)
    assert PREFERENCE_RULE in text and IRRELEVANT_RULE not in text
    [dropped] = outcome["dropped_edits"]
    assert dropped["content"] == IRRELEVANT_RULE
    assert dropped["reason"].startswith("no held-out evidence")
    assert any(
        ln.startswith("project: dropped: append 'Write commit messages")
        and "no held-out evidence" in ln
        for ln in lines
    ), lines
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["skills"]["project"]["dropped_edits"][0]["content"] == IRRELEVANT_RULE
    status = _cli(tmp_path, ["sleep", "status", "--state-dir", str(tmp_path / "state")])
    assert "staged/sleep-2026-11-30-project, 1 edit(s) dropped (no held-out" in status.stdout
    [commit] = repo.diff(outcome["staged"]).evidence
    assert commit.trailers["Edits"] == "1" and IRRELEVANT_RULE not in commit.body
    # what was staged was gated itself: the re-gate without the dropped edit is recorded
    gates = [
        json.loads(p.read_text()) for p in (night.folder / "project").glob("steps/*/gate.json")
    ]
    assert any(g.get("accepted") and "re-gated without 1 edit(s)" in g["reason"] for g in gates)


async def test_a_rule_claiming_a_preference_it_does_not_move_is_ablated_away(
    tmp_path, repo, project
):
    """Fails on the old code: two edits naming the same preference were staged together,
    though the candidate does as well without one (n37's "do not hedge" rule)."""
    _night, result, lines = await night_with(
        tmp_path, repo, project, "brain_rule_and_claimed", sessions(project)
    )
    outcome = result.skills["project"]
    text = staged_text(repo)
    assert PREFERENCE_RULE in text and CLAIMED_RULE not in text
    [dropped] = outcome["dropped_edits"]
    assert dropped["content"] == CLAIMED_RULE and "(ablation)" in dropped["reason"]
    assert any(ln.startswith("project: dropped: append 'Never hedge") for ln in lines), lines


async def test_two_rules_for_two_preferences_stage_both_with_their_own_sessions(
    tmp_path, repo, project
):
    """Fails on the old code: the commit listed every session of the night under one
    `Source-Sessions`, with no edit tied to the preference and sessions it came from."""
    harvested = two_preference_sessions(project)
    _night, result, _lines = await night_with(tmp_path, repo, project, "brain_two_rules", harvested)
    outcome = result.skills["project"]
    assert outcome["staged"] and not outcome.get("dropped_edits")
    text = staged_text(repo)
    assert PREFERENCE_RULE in text and YES_NO_RULE in text
    [commit] = repo.diff(outcome["staged"]).evidence
    trailers = commit.trailers
    by_text = {
        trailers[f"Edit-{i}-Preference"]: trailers[f"Edit-{i}-Sessions"].split("; ") for i in (1, 2)
    }
    assert set(by_text) == {CORRECTION, YES_NO}
    logging_sessions = [s.split(" ")[0] for s in by_text[CORRECTION]]
    yes_no_sessions = [s.split(" ")[0] for s in by_text[YES_NO]]
    assert logging_sessions == ["claude:s0", "codex:s1", "claude:s2", "codex:s3"]
    assert yes_no_sessions == ["codex:q0", "claude:q1", "codex:q2"]
    assert "codex:q0 (codex, 2026-11-20)" in by_text[YES_NO]
    edits = outcome["evidence"]["edits"]
    assert [e["preferences"][0]["text"] for e in edits] == [CORRECTION, YES_NO]


async def test_a_rule_naming_a_project_file_is_flagged(tmp_path, repo, project):
    """Fails on the old code: a rule that copied one project's file into the person's
    preference was staged with no word of it."""
    (project / "app.py").write_text("print('starting')\n")
    night, result, lines = await night_with(
        tmp_path, repo, project, "brain_project_facts", sessions(project)
    )
    outcome = result.skills["project"]
    assert outcome["staged"] and FACTS_RULE in staged_text(repo)
    [commit] = repo.diff(outcome["staged"]).evidence
    assert commit.trailers["Edit-1-Names-Project-Files"] == "app.py"
    assert "FLAGGED: edit 1 names project file(s) app.py" in commit.body
    assert any("FLAGGED: edit 1 names project file(s) app.py" in ln for ln in lines), lines
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["skills"]["project"]["evidence"]["edits"][0]["project_facts"] == ["app.py"]


async def test_a_night_whose_held_out_tasks_hold_no_correction_stages_nothing(
    tmp_path, repo, project
):
    """Fails on the old code: with no held-out occurrence the mean gate decided, and the
    rule rode in on a rubric nobody corrected (the debug requests' rubric asks for logging,
    but the person never said so: a generic rule with no preference behind it)."""
    uncorrected = [
        {**s, "tasks": [t for t in s["tasks"] if t["text"] != CORRECTION]}
        for s in sessions(project)
    ]
    rubric_only = [
        dataclasses.replace(t, corrections=[], preference=None)
        for t in corrected_tasks(project, uncorrected)
    ]
    _night, result, lines = await night_with(
        tmp_path, repo, project, "brain_rule", uncorrected, rubric_only
    )
    outcome = result.skills["project"]
    assert outcome["val"] == 3 and outcome["best_val"] == outcome["baseline_val"]
    assert outcome["staged"] is None and repo.staged_branches() == []
    assert outcome["no_occurrence"] is True
    assert any("none of its held-out tasks is something the person corrected" in ln for ln in lines)
