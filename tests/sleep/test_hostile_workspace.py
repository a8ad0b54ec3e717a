"""Hostile workspaces (issue 35): what anything beside a replay workspace can write there
(the person's own agent works in it) runs nothing of ours and leads no write out of it, and
a project that commits a symlink out of itself still replays.

- a handoff workspace's git directory given a `core.fsmonitor`, hooks, a filter picked by
  attributes: answering and running again runs none of them;
- the workspace folder, or its git directory, swapped for a symlink: nothing is written
  through the link (the copy is prepared again and the answer asked again);
- a committed symlink out of the project (absolute, `../victim`): the agent replay, a
  follow-up's edited tree and the tools workspace copy all leave it out and say so.
The person's agent and the judge are answered by the tests (TEST DOUBLES) through the real
handoff files, over real git projects."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from core.agent_loop.workspace import replay_workspace
from core.models.agents.workspace import pristine_tree
from core.models.handoff import HandoffWaiting
from sleep.harvest.file_edits import FileEdit
from sleep.night.edited_tree import edited_tree
from tests.sleep.handoff_replay_world import Night
from tests.support.project_tree import snapshot
from tests.support.skills_git import plain_git as git


def plant(git_dir: Path, work: Path, marker: Path) -> None:
    """Everything that would run `touch marker` in a git that obeys the repository."""
    touch = f"touch {marker}"
    config = git_dir / "config"
    config.write_text(
        config.read_text() + f'[core]\n\tfsmonitor = "{touch}"\n'
        f'[filter "x"]\n\tclean = "{touch}; cat"\n\tprocess = "{touch}"\n'
        f'[diff "x"]\n\ttextconv = "{touch}; cat"\n'
    )
    for name in ("post-index-change", "pre-commit", "post-commit"):
        hook = git_dir / "hooks" / name
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(f"#!/bin/sh\n{touch}\n")
        hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("* filter=x diff=x\n")
    (work / ".gitattributes").write_text("* filter=x diff=x\n")


def waiting_night(tmp_path: Path) -> tuple[Night, Path, Path]:
    """A night waiting on its replay-workspace prompt: (night, its status, the place)."""
    night = Night(tmp_path)
    with pytest.raises(HandoffWaiting):
        night.round()
    [status] = night.waiting()
    place = next(p for p in (night.handoff / "workspaces").iterdir() if p.is_dir())
    return night, status, place


def answer(status, work: Path) -> None:
    (work / "app.py").write_text((work / "app.py").read_text() + "# validated\n")
    status.answer.write_text("Validated total().")


def test_a_handoff_workspace_git_runs_no_planted_config_hook_or_filter(tmp_path):
    night, status, place = waiting_night(tmp_path)
    marker = tmp_path / "RAN"
    answer(status, place / "work")
    plant(place / "git", place / "work", marker)
    with pytest.raises(HandoffWaiting):  # now the judge is asked, with the diff read
        night.round()
    assert not marker.exists(), "the workspace's git ran what was planted in it"
    judged = [s.prompt.read_text() for s in night.waiting()]
    assert any("+# validated" in text for text in judged)


def test_a_workspace_swapped_for_a_symlink_is_not_written_through(tmp_path):
    night, status, place = waiting_night(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    place.rename(elsewhere)
    place.symlink_to(elsewhere)
    answer(status, elsewhere / "work")
    before = snapshot(elsewhere)
    with pytest.raises(HandoffWaiting, match="repair"):  # prepared again, asked again
        night.round()
    assert snapshot(elsewhere) == before  # no index, objects or read.json through the link
    assert place.is_dir() and not place.is_symlink()


@pytest.mark.parametrize("swapped", ["git", "git/objects"])
def test_a_git_directory_swapped_for_a_symlink_is_not_written_through(tmp_path, swapped):
    night, status, place = waiting_night(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (place / swapped).rename(elsewhere)
    (place / swapped).symlink_to(elsewhere)
    answer(status, place / "work")
    before = snapshot(elsewhere)
    with pytest.raises(HandoffWaiting):
        night.round()
    assert snapshot(elsewhere) == before


def test_a_symlinked_workspaces_folder_is_refused_in_one_line(tmp_path):
    night, status, place = waiting_night(tmp_path)
    folder = night.handoff / "workspaces"
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    before = snapshot(elsewhere)
    with pytest.raises(Exception, match="is a symlink") as raised:
        night.round()
    assert "\n" not in str(raised.value)
    assert snapshot(elsewhere) == before


@pytest.fixture
def linked_project(tmp_path: Path) -> tuple[Path, str]:
    """A real git project committing symlinks out of itself, beside an inside one."""
    (tmp_path / "victim").mkdir()
    (tmp_path / "victim" / "secret.txt").write_text("not the project's\n")
    root = tmp_path / "mono" / "app"
    root.mkdir(parents=True)
    (root / "app.py").write_text("x = 1\n")
    (root / "etc-link").symlink_to("/etc/hosts")
    (root / "sibling").symlink_to("../../victim")
    (root / "inside").symlink_to("app.py")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    return root, git(root, "rev-parse", "HEAD").strip()


def test_an_agent_replay_copy_leaves_committed_links_out_and_says_so(linked_project):
    root, commit = linked_project
    with pristine_tree(root, commit) as tree:
        assert (tree.root / "app.py").read_text() == "x = 1\n"
        assert (tree.root / "inside").is_symlink()
        assert not (tree.root / "etc-link").exists() and not (tree.root / "sibling").exists()
        notes = "\n".join(tree.left_out)
    assert "etc-link" in notes and "/etc/hosts" in notes and "sibling" in notes


def test_a_follow_up_tree_over_committed_links_out_applies_its_edits(linked_project):
    root, commit = linked_project
    edit = FileEdit(path="app.py", old="x = 1", new="x = 2")
    with edited_tree(root, commit, [edit]) as tree:
        assert (tree.root / "app.py").read_text() == "x = 2\n"
        assert tree.applied and not tree.skipped
        assert any("sibling" in note for note in tree.left_out)


def test_a_tools_workspace_over_committed_links_out_notes_them(linked_project):
    root, commit = linked_project
    with replay_workspace(root, commit, skill_path="CLAUDE.md", skill_text="# s\n") as ws:
        assert not (ws.root / "sibling").exists()
        assert any("etc-link" in note for note in ws.left_out)


def test_a_handoff_replay_over_committed_links_out_is_judged_and_says_so(tmp_path, linked_project):
    """Round 1 prepares the copy (links left out), round 3 reads the answer back from a
    workspace kept between runs: the trajectory still says what the copy left out."""
    (tmp_path / "n").mkdir()
    night = Night(tmp_path / "n")
    night.root, night.commit = linked_project
    with pytest.raises(HandoffWaiting):
        night.round()
    [status] = night.waiting()
    place = next(p for p in (night.handoff / "workspaces").iterdir() if p.is_dir())
    assert not (place / "work" / "sibling").exists()
    answer(status, place / "work")
    with pytest.raises(HandoffWaiting):
        night.round()
    [judge] = night.waiting()
    judge.answer.write_text(json.dumps({"score": 0.9, "reason": "validates the input"}))
    result = night.round()
    [note] = [m["content"] for m in result.trajectory if m["role"] == "workspace"]
    assert "etc-link" in note and "/etc/hosts" in note and "sibling" in note
