"""Where a transcript is expected, something else: a FIFO, a symlink to /dev/zero or to a
FIFO, a directory, a binary file. The harvest reads only regular files, says why it
skipped each other one, and always returns (a FIFO used to block it forever)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sleep.cli_world import make_world


def _plant(folder: Path, name: str, kind: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-to-fifo":
        os.mkfifo(folder / f".{name}.fifo")
        path.symlink_to(folder / f".{name}.fifo")
    elif kind == "dangling":
        path.symlink_to(folder / "nowhere")
    return path


KINDS = {
    "fifo": "not a regular file (a FIFO)",
    "dev-zero": "not a regular file (a symlink to a character device)",
    "link-to-fifo": "not a regular file (a symlink to a FIFO)",
    "dangling": "cannot stat",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("tool", ["claude", "codex"])
def test_harvest_skips_what_is_not_a_regular_file_and_returns(tmp_path, tool, kind):
    world = make_world(tmp_path)
    if tool == "claude":
        bad = _plant(world.claude / "projects" / "-proj", "bad.jsonl", kind)
    else:
        bad = _plant(world.codex / "sessions" / "2026" / "06" / "11",
                     "rollout-2026-06-11T00-00-00-019e0000-0000-7000-8000-00000000000f.jsonl",
                     kind)  # fmt: skip
    out = world.run("sleep", "harvest", "--all-projects", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert sorted(s["source"] for s in data["sessions"]) == ["claude", "codex"]
    [skipped] = [s for s in data["skipped"] if s["file"] == str(bad)]
    assert KINDS[kind] in skipped["reason"]
    text = world.run("sleep", "harvest", "--all-projects")  # cursors moved: nothing new
    assert text.returncode == 0, text.stderr
    assert f"skipped {bad}: " in text.stderr and KINDS[kind] in text.stderr


def test_binary_and_directory_transcripts_do_not_stop_the_harvest(tmp_path):
    world = make_world(tmp_path)
    folder = world.claude / "projects" / "-proj"
    folder.mkdir(parents=True)
    (folder / "binary.jsonl").write_bytes(bytes(range(256)) * 64 + b"\n\xff\xfe{}\n")
    (folder / "dir.jsonl").mkdir()
    (folder / "dir.jsonl" / "inner.jsonl").write_bytes(b"{}\n")
    zst = world.codex / "sessions" / "2026" / "06" / "12"
    zst.mkdir(parents=True)
    (
        zst / "rollout-2026-06-12T00-00-00-019e0000-0000-7000-8000-0000000000aa.jsonl.zst"
    ).write_bytes(b"not zstd at all")
    out = world.run("sleep", "harvest", "--all-projects", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert sorted(s["source"] for s in data["sessions"]) == ["claude", "codex"]
    reasons = {Path(s["file"]).name: s["reason"] for s in data["skipped"]}
    assert "not a JSON object" in reasons["binary.jsonl"]
    assert any(name.endswith(".zst") for name in reasons)
