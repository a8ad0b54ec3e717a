"""A replay's workspace: a fresh copy at the recorded commit (or a plain copy), the skill in
place, a diff of what changed, removed afterwards; the user's checkout never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.agent_loop.workspace import (
    MAX_COPIED_FILE_BYTES,
    WorkspaceError,
    replay_workspace,
)
from tests.support.skills_git import plain_git as git


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    (repo / "CLAUDE.md").write_text("old rules\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    commit = git(repo, "rev-parse", "HEAD").strip()
    # After the night started: a new commit and uncommitted work the copy must not see.
    (repo / "later.py").write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "later")
    (repo / "app.py").write_text("uncommitted work\n")
    return repo, commit


def test_copy_is_the_recorded_commit_with_the_skill_placed(project):
    repo, commit = project
    before = snapshot(repo)
    with replay_workspace(repo, commit, skill_path="CLAUDE.md", skill_text="new rules\n") as ws:
        root = ws.root
        assert (root / "app.py").read_text() == "def total(xs):\n    return sum(xs)\n"
        assert not (root / "later.py").exists()
        assert (root / "CLAUDE.md").read_text() == "new rules\n"
        assert not (root / ".git").exists()  # its git directory is beside the tree
        assert ws.diff() == ""
        (root / "app.py").write_text("def total(xs):\n    return sum(xs or [])\n")
        (root / "new.txt").write_text("hello\n")
        diff = ws.diff()
    assert "+    return sum(xs or [])" in diff
    assert "b/new.txt" in diff and "+hello" in diff
    assert "CLAUDE.md" not in diff
    assert not root.exists() and not ws.git_dir.exists()
    assert snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == " M app.py\n"


def test_skill_in_a_deploy_path_and_empty_skill_placed_nowhere(project):
    repo, commit = project
    place = ".claude/skills/tidy/SKILL.md"
    with replay_workspace(repo, commit, skill_path=place, skill_text="skill\n") as ws:
        assert (ws.root / place).read_text() == "skill\n"
    with replay_workspace(repo, commit, skill_path="AGENTS.md", skill_text="  ") as ws:
        assert not (ws.root / "AGENTS.md").exists()


def test_a_commit_the_project_lacks_is_one_clear_error(project):
    repo, _ = project
    workspace = replay_workspace(repo, "0" * 40, skill_path="CLAUDE.md", skill_text="s")
    with pytest.raises(WorkspaceError, match="cannot copy commit"), workspace:
        pass


def test_the_skill_place_cannot_leave_the_project(project):
    repo, commit = project
    workspace = replay_workspace(repo, commit, skill_path="../x.md", skill_text="s")
    with pytest.raises(WorkspaceError, match="inside the project"), workspace:
        pass


def test_plain_copy_skips_git_bulk_big_files_and_links_out(tmp_path: Path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n")
    folder = tmp_path / "plain"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "a.py").write_text("a = 1\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")
    (folder / "node_modules" / "dep").mkdir(parents=True)
    (folder / "node_modules" / "dep" / "index.js").write_text("x\n")
    (folder / "huge.bin").write_bytes(b"0" * (MAX_COPIED_FILE_BYTES + 1))
    os.symlink(outside, folder / "leak.txt")
    os.symlink(tmp_path, folder / "up")
    os.symlink("src/a.py", folder / "inner.py")
    os.mkfifo(folder / "pipe")
    with replay_workspace(folder, None, skill_path="AGENTS.md", skill_text="rules\n") as ws:
        names = sorted(
            p.relative_to(ws.root).as_posix() for p in ws.root.rglob("*") if not p.is_dir()
        )
    assert names == ["AGENTS.md", "inner.py", "src/a.py"]


def test_committed_links_out_and_huge_files_are_left_out_of_the_copy(tmp_path: Path):
    (tmp_path / "secret.txt").write_text("secret\n")
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "ok.py").write_text("ok = 1\n")
    os.symlink("../secret.txt", repo / "up.txt")
    os.symlink("/etc/passwd", repo / "abs.txt")
    os.symlink("ok.py", repo / "inner.py")
    (repo / "huge.bin").write_bytes(b"0" * (MAX_COPIED_FILE_BYTES + 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links")
    commit = git(repo, "rev-parse", "HEAD").strip()
    with replay_workspace(repo, commit, skill_path="CLAUDE.md", skill_text="s\n") as ws:
        names = sorted(p.name for p in ws.root.iterdir())
        assert ws.diff() == ""
    assert names == ["CLAUDE.md", "inner.py", "ok.py"]
