"""The workspace tools read and change the workspace and nothing else: every attempt that
would leak (`..`, absolute paths, a symlink pointing out, a huge file, a catastrophic
regex, bad numbers) is refused as a message, and nothing outside changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.agent_loop.tools import MAX_FILE_BYTES, MAX_WRITE_CHARS, WorkspaceTools


@pytest.fixture
def world(tmp_path: Path) -> tuple[WorkspaceTools, Path, Path]:
    root = tmp_path / "work"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def total(xs):\n    return sum(xs)\n")
    (root / "README.md").write_text("# demo\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET\n")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    return WorkspaceTools(root), root, outside


def test_reads_lists_globs_and_greps_inside(world):
    tools, _, _ = world
    assert tools.call("list_dir", {"path": "."}).splitlines() == [
        "README.md",
        "link.txt",
        "linkdir/",
        "src/",
    ]
    assert tools.call("read_file", {"path": "src/app.py"}) == (
        "1: def total(xs):\n2:     return sum(xs)"
    )
    assert tools.call("glob", {"pattern": "**/*.py"}) == "src/app.py"
    assert tools.call("grep", {"pattern": r"sum\(", "path": "."}) == (
        "src/app.py:2:     return sum(xs)"
    )


def test_edits_and_writes_inside(world):
    tools, root, _ = world
    result = tools.call(
        "edit_file", {"path": "src/app.py", "old": "sum(xs)", "new": "sum(xs or [])"}
    )
    assert result == "edited src/app.py"
    assert "sum(xs or [])" in (root / "src" / "app.py").read_text()
    assert tools.call("write_file", {"path": "docs/notes.md", "content": "hi\n"}).startswith(
        "wrote docs/notes.md"
    )
    assert (root / "docs" / "notes.md").read_text() == "hi\n"
    refused = tools.call("edit_file", {"path": "src/app.py", "old": "nothing", "new": "x"})
    assert refused.startswith("refused: the old text does not occur")


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("read_file", {"path": "src/../../outside/secret.txt"}),
        ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": "~/.bashrc"}),
        ("read_file", {"path": "link.txt"}),
        ("read_file", {"path": "linkdir/secret.txt"}),
        ("list_dir", {"path": "linkdir"}),
        ("list_dir", {"path": ".."}),
        ("grep", {"pattern": "SECRET", "path": "linkdir"}),
        ("glob", {"pattern": "../**"}),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("write_file", {"path": "/tmp/skillopt-leak-test.txt", "content": "x"}),
        ("write_file", {"path": "link.txt", "content": "overwritten"}),
        ("write_file", {"path": "linkdir/new.txt", "content": "x"}),
        ("edit_file", {"path": "link.txt", "old": "TOP", "new": "NOT"}),
    ],
)
def test_attempts_to_leave_the_workspace_are_refused(world, name, args):
    tools, _, outside = world
    before = {p.name: p.read_text() for p in outside.iterdir()}
    result = tools.call(name, args)
    assert result.startswith("refused:"), result
    assert "TOP SECRET" not in result
    assert {p.name: p.read_text() for p in outside.iterdir()} == before
    assert not Path("/tmp/skillopt-leak-test.txt").exists()


def test_whole_tree_search_never_follows_a_link_out(world):
    tools, _, _ = world
    assert tools.call("grep", {"pattern": "TOP SECRET"}) == "no line matches 'TOP SECRET'"
    assert "secret" not in tools.call("glob", {"pattern": "**/*"})


def test_a_huge_file_is_not_read_searched_or_edited(world):
    tools, root, _ = world
    (root / "big.log").write_bytes(b"needle\n" * (MAX_FILE_BYTES // 7 + 1))
    assert tools.call("read_file", {"path": "big.log"}).startswith("refused: 'big.log' is larger")
    assert tools.call("edit_file", {"path": "big.log", "old": "a", "new": "b"}).startswith(
        "refused:"
    )
    assert tools.call("grep", {"pattern": "needle"}) == "no line matches 'needle'"
    content = "x" * (MAX_WRITE_CHARS + 1)
    assert tools.call("write_file", {"path": "w.txt", "content": content}).startswith("refused:")
    assert not (root / "w.txt").exists()


def test_a_catastrophic_regex_is_stopped(world):
    tools, root, _ = world
    (root / "evil.txt").write_text("a" * 40 + "!\n")
    result = tools.call("grep", {"pattern": "(a*)*$x", "path": "evil.txt"})
    assert result.startswith("refused: the pattern") and "was stopped" in result


@pytest.mark.parametrize(
    "args",
    [
        {"path": "src/app.py", "offset": float("inf")},
        {"path": "src/app.py", "limit": "all"},
        {"path": ["src/app.py"]},
        {"path": "src/app.py", "mode": "rb"},
    ],
)
def test_bad_arguments_are_messages(world, args):
    tools, _, _ = world
    assert tools.call("read_file", args).startswith(("refused:", "error:"))


def test_no_shell_without_a_jail(world):
    tools, _, _ = world
    assert "shell" not in [s.name for s in tools.specs]
    assert tools.call("shell", {"command": "cat /etc/passwd"}).startswith("error: unknown tool")
