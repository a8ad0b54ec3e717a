"""core/safe_git.py: git on a repository someone else wrote runs nothing of theirs. Each
hostile repository is real (made with git) and plants a command that would leave a marker
file: `core.fsmonitor`, a hook, a filter or diff driver picked by attributes, an included
config file. The commands our code runs (add, commit, diff, log, archive) leave no marker."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from core.safe_git import run_git
from tests.support.skills_git import plain_git as git


def _plant(git_dir: Path, work: Path, marker: Path, how: str) -> None:
    touch = f"touch {marker}"
    config = git_dir / "config"
    if how == "fsmonitor":
        config.write_text(config.read_text() + f'[core]\n\tfsmonitor = "{touch}"\n')
    elif how == "hook":
        for name in ("post-index-change", "pre-commit", "post-commit", "reference-transaction"):
            hook = git_dir / "hooks" / name
            hook.parent.mkdir(exist_ok=True)
            hook.write_text(f"#!/bin/sh\n{touch}\n")
            hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    elif how in ("filter-info", "filter-tree"):
        config.write_text(
            config.read_text() + f'[filter "x"]\n\tclean = "{touch}; cat"\n'
            f'\tsmudge = "{touch}; cat"\n\tprocess = "{touch}"\n'
            f'[diff "x"]\n\ttextconv = "{touch}; cat"\n\tcommand = "{touch}"\n'
        )
        where = git_dir / "info" / "attributes" if how == "filter-info" else work / ".gitattributes"
        where.parent.mkdir(exist_ok=True)
        where.write_text("* filter=x diff=x\n")
    elif how == "include":
        extra = git_dir.parent / "extra.cfg"
        extra.write_text(f'[core]\n\tfsmonitor = "{touch}"\n[filter "y"]\n\tclean = "{touch}"\n')
        config.write_text(config.read_text() + f"[include]\n\tpath = {extra}\n")
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("* filter=y\n")
    elif how == "pager-editor":
        config.write_text(
            config.read_text() + f'[core]\n\tpager = "{touch}"\n\teditor = "{touch}"\n'
            f'[gc]\n\tauto = 1\n[diff]\n\texternal = "{touch}"\n'
        )


def _repository(tmp_path: Path) -> Path:
    """A real repository with one commit of `a.txt`; its git directory is `.git`."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "start")
    return work


HOW = ("fsmonitor", "hook", "filter-info", "filter-tree", "include", "pager-editor")


@pytest.mark.parametrize("how", HOW)
def test_a_hostile_repository_runs_nothing_of_ours(tmp_path, how):
    work = _repository(tmp_path)
    git_dir = work / ".git"
    marker = tmp_path / "RAN"
    _plant(git_dir, work, marker, how)
    (work / "a.txt").write_text("two\n")

    def ours(*args: str) -> subprocess.CompletedProcess[bytes]:
        return run_git(*args, git_dir=git_dir, work_tree=work, cwd=work)

    assert ours("add", "-A").returncode == 0
    assert ours("status", "--porcelain").returncode == 0
    assert ours("commit", "-q", "-m", "two").returncode == 0
    diff = ours("diff", "--no-ext-diff", "--no-textconv", "HEAD~1", "HEAD")
    assert b"+two" in diff.stdout
    assert ours("log", "-p", "--no-ext-diff", "--no-textconv", "-1").returncode == 0
    assert run_git("archive", "--format=tar", "HEAD", cwd=work).returncode == 0
    assert ours("checkout", "-q", "HEAD~1", "--", "a.txt").returncode == 0  # a smudge
    assert not marker.exists(), f"git ran the repository's {how}"


def test_a_driver_command_our_call_forgot_to_turn_off_fails_rather_than_runs(tmp_path):
    """A diff without --no-textconv cannot run the planted textconv: git fails instead."""
    work = _repository(tmp_path)
    marker = tmp_path / "RAN"
    _plant(work / ".git", work, marker, "filter-info")
    (work / "a.txt").write_text("two\n")
    run_git("diff", "HEAD", git_dir=work / ".git", work_tree=work, cwd=work)
    assert not marker.exists()


def test_nothing_inherited_points_git_elsewhere(tmp_path, monkeypatch):
    """GIT_DIR, GIT_CONFIG_PARAMETERS and friends in our own environment change nothing."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q")
    marker = tmp_path / "RAN"
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {marker}'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {marker}")
    (work / "a.txt").write_text("x\n")
    done = run_git("add", "-A", git_dir=work / ".git", work_tree=work, cwd=work)
    assert done.returncode == 0 and not marker.exists()
    assert os.environ["GIT_DIR"].endswith("elsewhere")


def test_a_driver_planted_after_an_earlier_call_is_pinned_too(tmp_path):
    """The driver pins are kept per config file as it is: a config changed between two
    calls is listed again."""
    work = _repository(tmp_path)
    git_dir = work / ".git"
    assert run_git("add", "-A", git_dir=git_dir, work_tree=work, cwd=work).returncode == 0
    marker = tmp_path / "RAN"
    _plant(git_dir, work, marker, "filter-info")
    (work / "a.txt").write_text("two\n")
    assert run_git("add", "-A", git_dir=git_dir, work_tree=work, cwd=work).returncode == 0
    assert not marker.exists()
