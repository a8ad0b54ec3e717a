"""File names that are not UTF-8: a folder under ~/.claude/projects or Codex's sessions,
a `cwd` recorded with a lone surrogate, a project or state path given on the command
line. Found names are shown with `\\xNN` escapes in text and JSON (both output modes
raised UnicodeEncodeError); a path to record is refused in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sleep.cli_world import make_world, one_line_error
from tests.sleep.transcripts import claude_user, codex_meta, codex_prompt, jsonl

BAD = os.fsdecode(b"caf\xe9-\xff")  # Latin-1 bytes: not UTF-8


def _plant_bad_folders(world) -> tuple[Path, Path]:
    claude = world.claude / "projects" / f"-proj-{BAD}" / "c-2.jsonl"
    claude.parent.mkdir(parents=True)
    claude.write_bytes(jsonl([claude_user("explain the retry logic in the client",
                                          cwd=str(world.project), session="c-2")]))  # fmt: skip
    thread = "019e0000-0000-7000-8000-0000000000bb"
    codex = world.codex / "sessions" / BAD / f"rollout-2026-06-11T00-00-00-{thread}.jsonl"
    codex.parent.mkdir(parents=True)
    codex.write_bytes(jsonl([codex_meta(thread=thread, cwd=str(world.project)),
                             *codex_prompt("explain the retry logic in the client")]))  # fmt: skip
    return claude, codex


@pytest.mark.parametrize("as_json", [False, True])
def test_harvest_shows_non_utf8_file_names_escaped(tmp_path, as_json):
    world = make_world(tmp_path)
    claude, codex = _plant_bad_folders(world)
    out = world.run(
        "sleep", "harvest", "--all-projects", "--mark-read", *(["--json"] if as_json else [])
    )
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    if as_json:
        files = {s["file"] for s in json.loads(out.stdout)["sessions"]}
        assert any("caf\\xe9-\\xff" in f and f.endswith("c-2.jsonl") for f in files), files
        assert any("caf\\xe9-\\xff" in f and "0000000000bb" in f for f in files), files
        assert len(files) == 4
    else:
        assert "4 new task(s) in 4 session(s)" in out.stdout
    again = world.run("sleep", "harvest", "--all-projects", "--json")  # cursors were saved
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sessions"] == []


def test_a_recorded_cwd_with_a_lone_surrogate_is_harvested(tmp_path):
    world = make_world(tmp_path)
    raw = json.dumps(claude_user("add a flag for verbose output", cwd="/p\\udcff/x",
                                 session="c-3")).replace("\\\\udcff", "\\udcff")  # fmt: skip
    path = world.claude / "projects" / "-p-x" / "c-3.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(raw + "\n")
    out = world.run("sleep", "harvest", "--all-projects", "--json")
    assert out.returncode == 0, out.stderr
    [session] = [s for s in json.loads(out.stdout)["sessions"] if s["session_id"] == "c-3"]
    cwd = session["cwd"]  # the surrogate replaced, the rest kept
    assert cwd.startswith("/p\ufffd") and cwd.endswith("/x") and set(cwd[2:-2]) == {"\ufffd"}


def test_a_night_over_non_utf8_file_names_runs(tmp_path):
    world = make_world(tmp_path)
    _plant_bad_folders(world)
    init = world.run("sleep", "init", "--project", str(world.project), "--yes")
    assert init.returncode == 0, init.stderr
    dry = world.run("sleep", "dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["sessions"] == 4
    # handoff: waits for answers (exit 3), or finishes when the split of these few tasks
    # (a hash of the temporary project path) leaves nothing to gate on
    night = world.run("sleep", "run", "--json")
    assert night.returncode in (0, 3) and "Traceback" not in night.stderr, night.stderr
    assert json.loads(night.stdout)["status"] in ("waiting", "finished")
    [folder] = (world.state / "nights").iterdir()
    saved = json.loads((folder / "sessions.json").read_text(encoding="utf-8"))
    assert len(saved["sessions"]) == 4


@pytest.mark.parametrize(
    "command",
    [
        ["sleep", "init", "--yes", "--project", "{bad}"],
        ["sleep", "init", "--yes", "--project", "{project}", "--skills-repo", "{bad}"],
        ["sleep", "harvest", "--project", "{bad}"],
        ["sleep", "dry-run", "--project", "{bad}"],
        ["sleep", "run", "--project", "{bad}"],
        ["sleep", "status", "--state-dir", "{bad}"],
        ["sleep", "run", "--state-dir", "{bad}"],
        ["sleep", "harvest", "--all-projects", "--state-dir", "{bad}"],
    ],
)
def test_a_non_utf8_path_to_record_is_refused_in_one_line(tmp_path, command):
    world = make_world(tmp_path)
    bad = tmp_path / f"proj-{BAD}"
    bad.mkdir()
    (bad / "CLAUDE.md").write_text("# Notes\n")
    args = [a.format(bad=bad, project=world.project) for a in command]
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    error = one_line_error(world.run(*args))
    assert "not valid UTF-8" in error and "caf\\xe9-\\xff" in error
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
