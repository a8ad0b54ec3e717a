"""`skillopt data materialize` with hostile sources and outputs, as a user runs it against
the published manifests: one `skillopt: error:` line, exit 2, no traceback, the data
directory as it was (a read-only folder is made with a bubblewrap read-only bind)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.skillopt_tui.cli.test_envs_cmds import REPO, SKILLOPT, skillopt

PNG = base64.b64encode(b"\x89PNG page").decode()


def docvqa_source(folder: Path, image_of=lambda i: {"bytes": PNG}) -> Path:
    """Rows for every id of the published docvqa manifest."""
    manifest = REPO / "manifests" / "docvqa_id_split"
    ids = [
        e["id"]
        for split in ("train", "val", "test")
        for e in json.loads((manifest / split / "items.json").read_text())
    ]
    folder.mkdir(parents=True)
    rows = [
        {"questionId": i, "question": "q?", "answers": ["a"], "image": image_of(i)} for i in ids
    ]
    (folder / "validation.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return folder


def first_val_id() -> str:
    path = REPO / "manifests" / "docvqa_id_split" / "val" / "items.json"
    return json.loads(path.read_text())[0]["id"]


def one_error_line(result: subprocess.CompletedProcess, expected: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("skillopt: error:"), result.stderr
    assert expected in lines[0], lines[0]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_image_path_to_etc_is_refused_and_nothing_written(tmp_path):
    src = docvqa_source(tmp_path / "src", lambda i: {"path": "/etc/hostname"})
    result = skillopt(tmp_path, "data", "materialize", "docvqa", "--source", str(src))
    one_error_line(result, "'/etc/hostname' is an absolute path")
    assert not (tmp_path / "data").exists()


def test_bad_val_row_after_a_good_run_keeps_the_old_data(tmp_path):
    good = docvqa_source(tmp_path / "good")
    assert (
        skillopt(tmp_path, "data", "materialize", "docvqa", "--source", str(good)).returncode == 0
    )
    before = tree(tmp_path / "data" / "docvqa")
    bad_id = first_val_id()
    src = docvqa_source(
        tmp_path / "bad", lambda i: {"bytes": "@@@"} if i == bad_id else {"bytes": PNG[:-4]}
    )
    result = skillopt(tmp_path, "data", "materialize", "docvqa", "--source", str(src))
    one_error_line(result, "not valid base64")
    assert tree(tmp_path / "data" / "docvqa") == before
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["docvqa"]


def test_out_that_is_a_file(tmp_path):
    src = docvqa_source(tmp_path / "src")
    (tmp_path / "notes").write_text("mine")
    result = skillopt(
        tmp_path,
        "data",
        "materialize",
        "docvqa",
        "--source",
        str(src),
        "--out",
        str(tmp_path / "notes"),
    )
    one_error_line(result, "is not a folder")
    assert (tmp_path / "notes").read_text() == "mine"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a read-only bind")
def test_out_on_a_read_only_folder(tmp_path):
    src = docvqa_source(tmp_path / "src")
    locked = tmp_path / "locked"
    locked.mkdir()
    command = [
        "bwrap", "--dev-bind", "/", "/", "--ro-bind", str(locked), str(locked),
        str(SKILLOPT), "data", "materialize", "docvqa", "--source", str(src),
        "--out", str(locked / "docvqa"),
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)},
    )  # fmt: skip
    one_error_line(result, "Read-only file system")
    assert list(locked.iterdir()) == []


def test_garbage_release_archive(tmp_path):
    archive = tmp_path / "spreadsheetbench_verified_400.tar.gz"
    archive.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    result = skillopt(tmp_path, "data", "materialize", "spreadsheetbench", "--source", str(archive))
    one_error_line(result, "not a readable tar archive")
    assert not (tmp_path / "data").exists()
