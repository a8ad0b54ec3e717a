"""A whole Sleep night on the scripted TEST DOUBLE (tests/sleep/night_double.py), on a real
skills repository: exact staging, routing, splits that never move, the lock, a failing
backend, a budget stop, and the handoff round trip."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.file_lock import FileLock
from core.skills_repo import SkillsRepo
from sleep.mine.split import split_key, split_of
from sleep.night.held_tasks import Harvested
from sleep.night.run import Night, NightBusy
from tests.sleep.night_double import RULE, parts_for

DAY = dt.date(2026, 11, 30)
BRAIN = "tests.sleep.night_double:brain"
SKILL_TEXT = "# Project notes\n\nKeep answers short.\n"


PARTS = [
    "web",
    "api",
    "docs",
    "cli",
    "worker",
    "admin",
    "mobile",
    "billing",
    "search",
    "auth",
    "infra",
    "ui",
]


def sessions(project: Path, n: int = 12) -> list[dict]:
    """n sessions, each asking a differently worded install question and being corrected
    to pnpm, plus one other request; one automation session that must never be mined."""
    out = []
    for i, part in enumerate(parts_for(project, n)):
        out.append(
            {
                "source": "claude",
                "session_id": f"s{i:02d}",
                "cwd": str(project),
                "branch": "main",
                "file": f"/x/s{i}.jsonl",
                "automation": False,
                "tasks": [
                    {
                        "text": f"how do I install the dependencies of the {part} package?",
                        "timestamp": f"2026-11-{10 + i:02d}T10:00:00Z",
                        "aborted": False,
                    },
                    {"text": "no, use pnpm instead of npm", "timestamp": None, "aborted": False},
                    {
                        "text": f"explain what the {part} module is for",
                        "timestamp": None,
                        "aborted": False,
                    },
                ],
            }
        )
    out.append(
        {
            "source": "claude",
            "session_id": "auto",
            "cwd": str(project),
            "branch": None,
            "file": "/x/a.jsonl",
            "automation": True,
            "tasks": [
                {
                    "text": "automation prompt that must not be mined",
                    "timestamp": None,
                    "aborted": False,
                }
            ],
        }
    )
    return out


def night_config(tmp_path: Path, **budget):
    roles = {
        r: {"backend": "scripted", "model": BRAIN}
        for r in ("target", "optimizer", "judge", "miner")
    }
    return config_from_dict(
        {
            "models": roles,
            "budget": budget,
            "train": {
                "epochs": 1,
                "strategy": "llm",
                "schedule": {"kind": "constant", "start": 2, "end": 2},
                "gate": {"metric": "soft"},
                "slow_update": {"enabled": False},
                "meta_skill": {"enabled": False},
            },
        }
    )


@pytest.fixture
def project(tmp_path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    (p / "CLAUDE.md").write_text(SKILL_TEXT)
    return p


@pytest.fixture
def repo(tmp_path, project) -> SkillsRepo:
    r = SkillsRepo.init(tmp_path / "skills")
    r.add_skill("project", SKILL_TEXT, deploy_to=str(project / "CLAUDE.md"))
    return r


def make_night(tmp_path, repo, project, harvested=None, **kw) -> Night:
    calls = []

    def harvest(_freeze):
        calls.append(1)
        return Harvested(harvested if harvested is not None else sessions(project))

    # parts_for guarantees two held-out tasks, not the default six: the gate's minimum is
    # a setting, lowered here (tests/sleep/test_held_out.py tests the minimum itself)
    kw.setdefault("min_val_tasks", 2)
    night = Night(
        state_dir=tmp_path / "state",
        repo=repo,
        config=kw.pop("config", night_config(tmp_path)),
        harvest=harvest,
        project=project,
        today=kw.pop("today", DAY),
        **kw,
    )
    night.harvest_calls = calls
    return night


async def test_a_night_stages_the_improvement_with_its_evidence(tmp_path, repo, project):
    night = make_night(tmp_path, repo, project)
    result = await night.run()
    assert result.status == "finished", result.message
    outcome = result.skills["project"]
    assert outcome["routed_by"] == "Claude Code reads CLAUDE.md"
    assert outcome["staged"] == "staged/sleep-2026-11-30-project"
    assert outcome["baseline_val"] < outcome["best_val"]
    [branch] = repo.staged_branches()
    assert branch.run_id == "sleep-2026-11-30-project" and branch.skill == "project"
    staged_text = repo.git.blob(branch.head, repo.entry("project").path).decode()
    assert staged_text.startswith(SKILL_TEXT) and RULE in staged_text
    diff = repo.diff(branch.name)
    [commit] = diff.evidence
    assert commit.trailers["Night"] == "sleep-2026-11-30"
    assert commit.trailers["Routed-By"] == "Claude Code reads CLAUDE.md"
    sources = commit.trailers["Source-Sessions"].split(", ")
    assert "claude:auto" not in sources and "claude:s00" in sources
    # nothing reached the live file without adoption
    assert (project / "CLAUDE.md").read_text() == SKILL_TEXT
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["status"] == "finished" and saved["skills"]["project"]["staged"] == branch.name
    # the automation prompt was never mined
    archive = json.loads((tmp_path / "state" / "tasks.json").read_text())
    assert all("automation" not in t["intent"] for t in archive["tasks"])


async def test_splits_are_stable_and_training_tasks_never_validate(tmp_path, repo, project):
    night = make_night(tmp_path, repo, project)
    await night.run()
    tasks = json.loads((night.folder / "tasks.json").read_text())["skills"]["project"]
    for split, items in tasks.items():
        for t in items:
            # a task with nothing to judge it by only ever trains (issue 21)
            hashed = split_of(split_key(t["intent"]), val_fraction=0.3, test_fraction=0.0)
            assert split == ("train" if t["train_only"] else hashed)
    train = {t["id"] for t in tasks["train"]}
    assert train and tasks["val"] and not train & {t["id"] for t in tasks["val"]}
    # The next night sees the same tasks again (and a new one): same ids, same splits.
    later = make_night(tmp_path, repo, project, today=DAY + dt.timedelta(days=1))
    await later.run()
    again = json.loads((later.folder / "tasks.json").read_text())["skills"]["project"]
    assert {t["id"] for t in again["train"]} >= train


async def test_a_second_run_the_same_day_continues_the_finished_night_under_a_new_id(
    tmp_path, repo, project
):
    first = make_night(tmp_path, repo, project)
    await first.run()
    second = make_night(tmp_path, repo, project)
    assert second.night_id == "sleep-2026-11-30-2"


async def test_a_night_holds_a_lock(tmp_path, repo, project):
    night = make_night(tmp_path, repo, project)
    other = FileLock(tmp_path / "state" / "night.lock")
    (tmp_path / "state").mkdir(exist_ok=True)
    assert other.try_acquire()
    try:
        with pytest.raises(NightBusy, match="another Sleep night"):
            await night.run()
    finally:
        other.release()


async def test_a_failing_backend_stages_nothing_and_says_so(tmp_path, repo, project):
    roles = {
        r: {
            "backend": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "max_retries": 0,
            "timeout_s": 2.0,
        }
        for r in ("target", "optimizer", "judge", "miner")
    }
    config = config_from_dict({"models": roles})
    night = make_night(tmp_path, repo, project, config=config)
    result = await night.run()
    assert result.status == "failed"
    assert "nothing staged" in result.message and "127.0.0.1" in result.message
    assert repo.staged_branches() == []


async def test_too_few_tasks_skip_the_skill_without_a_run(tmp_path, repo, project):
    one = sessions(project, n=1)
    one[0]["tasks"] = one[0]["tasks"][:1]  # a single task: nothing to gate on
    night = make_night(tmp_path, repo, project, harvested=one)
    result = await night.run()
    assert result.skills["project"]["status"] == "skipped"
    assert repo.staged_branches() == []


def answer_pending(folder: Path, brain) -> int:
    """A person answering the handoff prompts (here: the test double reading each file)."""
    from core.models.handoff import parse_prompt_file, pending_prompts
    from core.models.types import Request

    pending = pending_prompts(folder)
    for prompt in pending:
        messages = parse_prompt_file(prompt.read_text())
        reply = brain(Request(backend="handoff", model="handoff", messages=messages))
        answer = folder / "answers" / prompt.name
        answer.parent.mkdir(parents=True, exist_ok=True)
        answer.write_text(reply)
    return len(pending)


async def test_handoff_round_trip_reaches_the_same_staging(tmp_path, repo, project):
    from tests.sleep.night_double import Brain

    roles = {r: {"backend": "handoff"} for r in ("target", "optimizer", "judge", "miner")}
    config = config_from_dict({"models": roles, "train": night_config(tmp_path).train.model_dump()})
    from skillopt_tui.cli.sleep_night_cmds import _outcome_line

    brain = Brain()
    rounds, shown, rerun = 0, [], False
    while True:
        night = make_night(tmp_path, repo, project, config=config)
        result = await night.run()
        if result.status != "waiting":
            break
        assert result.pending > 0 and "handoff" in result.message
        if "project" in result.skills:
            shown.append(_outcome_line("project", result.skills["project"]))
            if not rerun:  # the same round again, nothing answered: no scores repeated
                rerun = True
                again = await make_night(tmp_path, repo, project, config=config).run()
                assert again.status == "waiting" and " -> " not in _outcome_line(
                    "project", again.skills["project"]
                )
        assert answer_pending(night.folder / "handoff", brain) == result.pending
        rounds += 1
        assert rounds < 20
    assert result.status == "finished", result.message
    assert rounds >= 3  # baseline, train + judge, optimizer, gate: answered in turns
    # "val a -> b" once per change while waiting (it was every round), and at the end
    scores = [line.split(" tasks)", 1)[1] for line in shown if " -> " in line]
    assert rerun and scores and len(scores) == len(set(scores))
    assert " -> " in _outcome_line("project", result.skills["project"])
    [branch] = repo.staged_branches()
    assert RULE in repo.git.blob(branch.head, repo.entry("project").path).decode()
    assert night.harvest_calls == []  # later rounds reuse the night's saved harvest


async def test_a_budget_cap_stops_the_night_resumably(tmp_path, repo, project):
    night = make_night(tmp_path, repo, project, config=night_config(tmp_path, max_tokens=60))
    result = await night.run()
    assert result.status == "stopped", result.message
    assert "continue" in result.message
    assert repo.staged_branches() == []


async def test_tasks_are_routed_to_the_skill_a_session_used(tmp_path, repo, project):
    repo.add_skill("deploy", "# Deploy\n\nDeploy with care.\n")
    harvested = sessions(project)
    for s in harvested[:6]:
        s["skills"] = ["deploy"]
    night = make_night(tmp_path, repo, project, harvested=harvested)
    plan = await night.plan()
    routes = {r["skill"]: r for r in plan.routes}
    assert routes["deploy"]["routed_by"] == "skill named in the transcripts"
    assert routes["deploy"]["sessions"] == 6
    assert routes["project"]["routed_by"] == "Claude Code reads CLAUDE.md"
    assert routes["project"]["sessions"] == 6  # the automation session is never routed
    result = await night.run()
    staged = {b.skill: b for b in repo.staged_branches()}
    assert set(staged) <= {"deploy", "project"} and staged
    for skill, branch in staged.items():
        assert branch.run_id == f"sleep-2026-11-30-{skill}"
        [evidence] = repo.diff(branch.name).evidence
        sessions_of = set(evidence.trailers["Source-Sessions"].split(", "))
        mine = {f"claude:s{i:02d}" for i in (range(6) if skill == "deploy" else range(6, 12))}
        assert sessions_of <= mine
    assert result.status == "finished"


async def test_the_miner_role_mines_when_the_night_config_names_one(tmp_path, repo, project):
    config = night_config(tmp_path)
    config.models.miner.backend = "scripted"
    config.models.miner.model = BRAIN
    night = make_night(tmp_path, repo, project, config=config)
    result = await night.run()
    assert result.status == "finished", result.message
    tasks = json.loads((night.folder / "tasks.json").read_text())["skills"]["project"]
    rubrics = [t["rubric"] for split in tasks.values() for t in split]
    # the model's rubric, beside the heuristic's record of the correction (it refines the
    # heuristic's tasks, keeping their evidence: sleep/mine/with_model.py)
    assert any("Mined rubric: no, use pnpm" in r and "had to correct" in r for r in rubrics)
    assert result.skills["project"]["staged"]


async def test_an_unusable_miner_reply_stops_the_night_without_staging(tmp_path, repo, project):
    config = night_config(tmp_path)
    config.models.miner.backend = "scripted"
    config.models.miner.model = "tests.sleep.test_night:garbage"
    night = make_night(tmp_path, repo, project, config=config)
    result = await night.run()
    assert result.status == "failed" and "miner" in result.message
    assert repo.staged_branches() == []


def garbage():
    return lambda request: "I would rather not answer in JSON."


async def test_a_call_budget_stops_the_night_resumably(tmp_path, repo, project):
    night = make_night(tmp_path, repo, project, config=night_config(tmp_path, max_calls=5))
    result = await night.run()
    assert result.status == "stopped", result.message
    assert "call budget reached" in result.skills["project"]["reason"]
    assert repo.staged_branches() == []


async def test_a_night_whose_skill_is_already_perfect_says_so(tmp_path, project):
    """Strong-model handoff run (brain4): a skill scoring 1 on every held-out task is
    skipped before the optimizer is asked (skip_when_perfect), yet the night said "the
    optimizer proposed no usable edit". Fails on the old message."""
    perfect = SKILL_TEXT + RULE + "\n"
    (project / "CLAUDE.md").write_text(perfect)
    repo = SkillsRepo.init(tmp_path / "skills")
    repo.add_skill("project", perfect, deploy_to=str(project / "CLAUDE.md"))
    config = night_config(tmp_path)
    config.train.gate.skip_when_perfect = True
    result = await make_night(tmp_path, repo, project, config=config).run()
    assert result.status == "finished", result.message
    assert result.skills["project"]["baseline_val"] == 1.0
    assert "already scores 1.000 on every held-out task" in result.message
    assert "optimizer" not in result.message and repo.staged_branches() == []


async def test_a_night_without_a_candidate_does_not_say_none_beat_the_skill(
    tmp_path, repo, project
):
    """Issue 22 (strong-model run): "no candidate beat the current skill" was said of a
    night that had no candidate at all. An edit budget of 0 proposes nothing. Fails on
    the old message."""
    config = night_config(tmp_path)
    config.train.schedule.start = config.train.schedule.end = 0
    result = await make_night(tmp_path, repo, project, config=config).run()
    assert result.status == "finished", result.message
    assert result.message.startswith("no candidate tonight")
    assert "beat" not in result.message


async def test_a_night_stopped_by_an_unexpected_error_is_saved_failed_not_running(
    tmp_path, repo, project
):
    """Issue 35: a crash (a UnicodeEncodeError writing tasks.json) left night.json at
    "running", and `sleep status` said so from then on."""

    def harvest(_freeze):
        raise UnicodeEncodeError("utf-8", "\ud83d", 0, 1, "surrogates not allowed")

    night = make_night(tmp_path, repo, project)
    night.harvest = harvest
    with pytest.raises(UnicodeEncodeError):
        await night.run()
    saved = json.loads((night.folder / "night.json").read_text())
    assert saved["status"] == "failed" and "UnicodeEncodeError" in saved["message"]
