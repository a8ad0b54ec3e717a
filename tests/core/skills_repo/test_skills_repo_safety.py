"""Dirty trees, the lock between processes, and crashes at every step of a main change."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.skills_repo import DirtyTree, SkillsRepo, SkillsRepoBusy
from tests.support.skills_git import BASE_TEXT, ROOT, SKILL, edit_lines, plain_git, run_python

NEW = edit_lines(BASE_TEXT, {1: "line 1, sharper\n", 12: "line 12, sharper\n"})


def test_dirty_tree_is_refused(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    (repo.path / SKILL / "SKILL.md").write_text("half-typed\n")
    with pytest.raises(DirtyTree, match="uncommitted changes"):
        repo.adopt("r")
    with pytest.raises(DirtyTree):
        repo.add_skill("another", "x\n")
    assert (repo.path / SKILL / "SKILL.md").read_text() == "half-typed\n"
    repo.stage(SKILL, "r2", NEW, subject="s", trailers={})  # staging never touches the tree
    plain_git(repo.path, "checkout", "--", ".")
    repo.adopt("r")
    assert target.read_text() == NEW


def test_second_process_gets_busy_then_lock_clears_when_owner_dies(repo: SkillsRepo):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, os\n"
            "from core.skills_repo import SkillsRepo\n"
            f"r = SkillsRepo.open({str(repo.path)!r})\n"
            "r.lock.acquire()\n"
            "print(os.getpid(), flush=True)\n"
            "sys.stdin.read()\n"
            "os._exit(0)\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    try:
        pid = proc.stdout.readline().strip()
        main = repo.main_sha()
        with pytest.raises(
            SkillsRepoBusy, match=f"busy: another skillopt operation \\(pid {pid}\\)"
        ):
            repo.adopt("r")
        assert repo.main_sha() == main
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    repo.adopt("r")  # the dead owner's lock is gone
    assert repo.read_skill(SKILL) == NEW


def test_two_processes_staging_at_once_both_land(repo: SkillsRepo):
    code = (
        "import sys\n"
        "from core.skills_repo import SkillsRepo\n"
        f"r = SkillsRepo.open({str(repo.path)!r})\n"
        "run = sys.argv[1]\n"
        "for i in range(8):\n"
        f"    r.stage({SKILL!r}, run, f'{{run}} {{i}}\\n', subject='s', trailers={{'Step': str(i)}})\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, run], env=env, stderr=subprocess.PIPE)
        for run in ("one", "two")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    counts = {b.run_id: b.commits for b in repo.staged_branches()}
    assert counts == {"one": 8, "two": 8}
    plain_git(repo.path, "fsck", "--strict", "--no-progress")


# Before main moves (the commit point): undone at the next start. After it: complete.
CRASH_POINTS = [
    "adopt:after-journal",
    "adopt:after-worktree",
    "adopt:after-deploy-write",
    "adopt:after-records",
]
COMMITTED_POINTS = ["adopt:after-refs", "adopt:before-journal-clear"]


def _state(repo: SkillsRepo, target: Path) -> dict:
    refs = plain_git(repo.path, "for-each-ref", "--format=%(refname) %(objectname)")
    return {
        "refs": refs,
        "file": (repo.path / SKILL / "SKILL.md").read_bytes(),
        "target": target.read_bytes(),
        "status": plain_git(repo.path, "status", "--porcelain"),
        "record": json.loads((repo.git_dir / "skillopt/deployed.json").read_text()),
    }


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_mid_adopt_recovers_to_before(repo: SkillsRepo, target: Path, point: str):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    before = _state(repo, target)
    done = run_python(
        f"from core.skills_repo import SkillsRepo\nSkillsRepo.open({str(repo.path)!r}).adopt('r')\n",
        env={"SKILLOPT_CRASH_AT": point},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr  # died at the injected point
    assert (repo.git_dir / "skillopt/journal.json").exists()
    reopened = SkillsRepo.open(repo.path)
    assert reopened.recovered and "interrupted adopt" in reopened.recovered
    assert not (repo.git_dir / "skillopt/journal.json").exists()
    assert _state(reopened, target) == before
    reopened.adopt("r")  # and the operation can simply be run again
    assert target.read_text() == NEW == reopened.read_skill(SKILL)


@pytest.mark.parametrize("point", COMMITTED_POINTS)
def test_crash_after_main_moved_finds_the_adopt_complete(repo: SkillsRepo, target: Path, point):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    done = run_python(
        f"from core.skills_repo import SkillsRepo\nSkillsRepo.open({str(repo.path)!r}).adopt('r')\n",
        env={"SKILLOPT_CRASH_AT": point},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr
    whole = _state(repo, target)  # before any other command: nothing half-done to see
    assert target.read_text() == NEW and whole["status"] == ""
    reopened = SkillsRepo.open(repo.path)
    assert reopened.recovered and "interrupted adopt: it had completed" in reopened.recovered
    assert not (repo.git_dir / "skillopt/journal.json").exists()
    assert _state(reopened, target) == whole and reopened.read_skill(SKILL) == NEW


def test_crash_mid_rollback_recovers_to_before(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    repo.adopt("r")
    before = _state(repo, target)
    done = run_python(
        f"from core.skills_repo import SkillsRepo\nSkillsRepo.open({str(repo.path)!r}).rollback({SKILL!r})\n",
        env={"SKILLOPT_CRASH_AT": "rollback:after-deploy-write"},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr
    assert target.read_text() == BASE_TEXT  # the crash left things between...
    reopened = SkillsRepo.open(repo.path)
    assert _state(reopened, target) == before  # ...recovery puts back "before"


def test_threads_sharing_one_repo_object_are_serialised(repo: SkillsRepo):
    import threading

    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            for i in range(4):
                repo.stage(SKILL, name, f"{name} {i}\n", subject="s", trailers={"Step": str(i)})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f"t{n}",)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert {b.run_id: b.commits for b in repo.staged_branches()} == {"t0": 4, "t1": 4, "t2": 4}


def test_another_branch_checked_out_is_left_alone(repo: SkillsRepo, target: Path):
    repo.stage(SKILL, "r", NEW, subject="s", trailers={})
    plain_git(repo.path, "switch", "-q", "-c", "experiments")
    (repo.path / SKILL / "SKILL.md").write_text("work in progress\n")
    repo.adopt("r")  # moves main only: the user's checkout and edits stay as they were
    assert (repo.path / SKILL / "SKILL.md").read_text() == "work in progress\n"
    assert repo.read_skill(SKILL) == NEW == target.read_text()
    assert plain_git(repo.path, "symbolic-ref", "--short", "HEAD").strip() == "experiments"


def test_crash_mid_add_recovers_to_before(repo: SkillsRepo, tmp_path: Path):
    before = plain_git(repo.path, "rev-parse", "main").strip()
    other = tmp_path / "other-target.md"
    done = run_python(
        "from core.skills_repo import SkillsRepo\n"
        f"SkillsRepo.open({str(repo.path)!r}).add_skill('other', 'x\\n', deploy_to={str(other)!r})\n",
        env={"SKILLOPT_CRASH_AT": "add:after-deploy-write"},
        timeout=60,
    )
    assert done.returncode == 86, done.stderr
    assert other.exists() and (repo.path / "other/SKILL.md").exists()  # between...
    reopened = SkillsRepo.open(repo.path)
    assert plain_git(repo.path, "rev-parse", "main").strip() == before
    assert not other.exists() and not (repo.path / "other").exists()
    assert [e.name for e in reopened.list_skills()] == [SKILL]
    assert plain_git(repo.path, "status", "--porcelain") == ""


def test_a_filter_or_diff_driver_planted_in_the_repository_runs_nothing(
    repo: SkillsRepo, target: Path, tmp_path: Path
):
    """Issue 35: the skills repository's git pinned hooks and fsmonitor but obeyed a filter
    or diff driver its own config defined and an attributes file selected (core/safe_git.py)."""
    marker = tmp_path / "RAN"
    config = repo.git_dir / "config"
    config.write_text(
        config.read_text() + f'[filter "x"]\n\tclean = "touch {marker}; cat"\n'
        f'\tsmudge = "touch {marker}; cat"\n[diff "x"]\n\ttextconv = "touch {marker}; cat"\n'
    )
    (repo.git_dir / "info").mkdir(exist_ok=True)
    (repo.git_dir / "info" / "attributes").write_text("* filter=x diff=x\n")
    again = SkillsRepo.open(repo.path)
    again.stage(SKILL, "r", NEW, subject="s", trailers={})
    again.adopt("r")
    assert target.read_text() == NEW
    assert not marker.exists()
