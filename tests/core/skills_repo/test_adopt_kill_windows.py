"""kill -9 at every point of an adopt (every crash point and every atomic file write it
reaches, traced from a real run). Right after the kill, with no other command run, main
is either where it was, or at the finished adopt with the work tree, deploy target, deploy
record and staged/adopted refs all matching it; the next start removes the journal and
lands exactly on "before" or "after". Main moves last, so no window has it moved ahead
of the rest (round 3 found two such windows: main moved, deploy target still old)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.skills_repo import SkillsRepo
from tests.support.skills_git import BASE_TEXT, SKILL, edit_lines, plain_git, run_python

NEW = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})
ADOPT = "from core.skills_repo import SkillsRepo\nSkillsRepo.open({path!r}).adopt('r')\n"
# Fixed dates: every copy of the template makes the same adopt commit, so "after" is one.
DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def state(live: Path) -> dict:
    """What a user can see, journal aside."""
    repo = live / "skills"
    return {
        "main": plain_git(repo, "rev-parse", "refs/heads/main").strip(),
        "refs": plain_git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "file": (repo / SKILL / "SKILL.md").read_bytes(),
        "target": (live / "deployed" / "SKILL.md").read_bytes(),
        "status": plain_git(repo, "status", "--porcelain"),
        "record": json.loads((repo / ".git/skillopt/deployed.json").read_text()),
    }


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A repo with a deployed skill and a staged branch, kept aside to restore from."""
    live = tmp_path / "live"
    repo = SkillsRepo.init(live / "skills", identity=("Test Bot", "bot@example.com"))
    repo.add_skill(SKILL, BASE_TEXT, deploy_to=str(live / "deployed" / "SKILL.md"))
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    shutil.copytree(live, tmp_path / "template", symlinks=True)
    return tmp_path / "template"


def fresh(template: Path) -> Path:
    live = template.parent / "live"
    shutil.rmtree(live)
    shutil.copytree(template, live, symlinks=True)
    return live


def adopt(live: Path, env: dict[str, str]):
    return run_python(ADOPT.format(path=str(live / "skills")), env={**DATES, **env}, timeout=60)


def test_every_kill_window_leaves_main_unmoved_or_the_adopt_whole(template, tmp_path):
    live = fresh(template)
    before = state(live)
    trace = tmp_path / "points.txt"
    assert adopt(live, {"SKILLOPT_CRASH_TRACE": str(trace)}).returncode == 0
    after = state(live)
    assert after["target"] == NEW.encode() and after["main"] != before["main"]
    points = trace.read_text().split()
    assert "adopt:after-records#1" in points and "write:before-rename:SKILL.md#1" in points
    landed = {}
    for point in points:
        live = fresh(template)
        done = adopt(live, {"SKILLOPT_CRASH_AT": point})
        assert done.returncode == 86, (point, done.stderr)
        right_after = state(live)
        if right_after["main"] != before["main"]:  # past the commit point: whole already
            assert right_after == after, point
        SkillsRepo.open(live / "skills")  # the next start
        assert not (live / "skills/.git/skillopt/journal.json").exists(), point
        healed = state(live)
        assert healed in (before, after), point
        assert healed["main"] == right_after["main"], point  # healing never moves main
        landed[point] = "after" if healed == after else "before"
    assert set(landed.values()) == {"before", "after"}, landed
    assert landed["adopt:after-records#1"] == "before"  # the last step before main moves
    assert landed["adopt:after-refs#1"] == "after"


def test_a_ref_transaction_killed_halfway_is_finished_with_its_stale_locks(template):
    """kill -9 of the whole process group can stop git inside `update-ref --stdin` with
    main renamed into place and the staged/adopted refs still locked: the next start
    finishes the transaction (main moved = the commit point passed) and removes the
    stale `.lock` files that would otherwise fail every later git command."""
    live = fresh(template)
    before = state(live)
    assert adopt(live, {}).returncode == 0
    after = state(live)
    live = fresh(template)
    assert adopt(live, {"SKILLOPT_CRASH_AT": "adopt:after-records#1"}).returncode == 86
    git_dir = live / "skills" / ".git"
    plan = json.loads((git_dir / "skillopt" / "journal.json").read_text())
    assert plan["refs"][0][0] == "refs/heads/main"
    plain_git(live / "skills", "update-ref", "refs/heads/main", plan["new_main"])  # main only
    for ref, _old, _new in plan["refs"][1:]:
        (git_dir / f"{ref}.lock").parent.mkdir(parents=True, exist_ok=True)
        (git_dir / f"{ref}.lock").write_text("stale\n")
    (git_dir / "index.lock").write_text("")
    reopened = SkillsRepo.open(live / "skills")
    assert "it had completed" in (reopened.recovered or "")
    assert state(live) == after != before
    assert not list(git_dir.rglob("*.lock")) or all(
        p.name == "skillopt.lock" for p in git_dir.rglob("*.lock")
    )


def test_stale_git_locks_do_not_block_undoing_an_adopt(template):
    live = fresh(template)
    before = state(live)
    assert adopt(live, {"SKILLOPT_CRASH_AT": "adopt:after-worktree#1"}).returncode == 86
    git_dir = live / "skills" / ".git"
    (git_dir / "refs" / "heads" / "main.lock").write_text("stale\n")
    (git_dir / "index.lock").write_text("")
    reopened = SkillsRepo.open(live / "skills")
    assert "restored" in (reopened.recovered or "")
    assert state(live) == before
