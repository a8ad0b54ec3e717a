"""A worker's copies of the folders an environment declares (core/training/ray_files.py),
without a cluster: the object store is stood in for by the packed bytes themselves, so
what is tested is the worker's side — paths rewritten, one copy per content, stale copies
pruned, a folder that cannot be had named in one line. The real object store and workers
are tested in test_ray_workloads.py."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the ray extra: pip install -e '.[ray]'")

from core.environment.contract import TaskItem  # noqa: E402
from core.training import ray_files  # noqa: E402
from core.training.ray_files import ShippedPath, localize, pack  # noqa: E402


@pytest.fixture
def node_tmp(tmp_path, monkeypatch):
    """This 'node': its temp folder under tmp_path, its object store the bytes at hand."""
    monkeypatch.setattr(ray_files.tempfile, "tempdir", str(tmp_path / "node-tmp"))
    (tmp_path / "node-tmp").mkdir()
    monkeypatch.setattr(ray_files.ray, "get", lambda blob: blob)
    return tmp_path / "node-tmp" / ray_files.CACHE_DIR


def shipped_copy(folder) -> ShippedPath:
    blob = pack(folder)
    return ShippedPath(str(folder), blob, hashlib.sha256(blob).hexdigest()[:32])


def item_reading(folder) -> TaskItem:
    return TaskItem(
        "t1",
        "sheet",
        "Fill the column.",
        "",
        {"workbook": f"{folder}/wb/in.xlsx", "files": [f"{folder}/notes.txt"], "n": 3},
    )


def test_a_worker_without_the_folder_reads_one_copy_of_it_per_content(tmp_path, node_tmp):
    data = tmp_path / "data"
    (data / "wb").mkdir(parents=True)
    (data / "wb" / "in.xlsx").write_bytes(b"cells")
    (data / "notes.txt").write_text("notes")
    os.utime(data, (0, 0))  # the tar carries the driver's old folder time
    shipped = shipped_copy(data)
    shutil.move(data, tmp_path / "elsewhere")  # this worker lacks the path

    item, missing = localize(item_reading(data), (shipped,))
    assert missing is None
    copy = node_tmp / shipped.digest
    assert item.data["workbook"] == f"{copy}/wb/in.xlsx"
    assert item.data["files"] == [f"{copy}/notes.txt"]
    assert item.data["n"] == 3
    assert Path(item.data["workbook"]).read_bytes() == b"cells"
    assert time.time() - copy.stat().st_mtime < 3600  # in use now, whatever the tar said

    again, _ = localize(item_reading(data), (shipped,))
    assert again.data == item.data
    assert [p.name for p in node_tmp.iterdir()] == [shipped.digest]  # unpacked once


def test_a_new_copy_prunes_the_ones_no_task_used_for_a_day(tmp_path, node_tmp):
    node_tmp.mkdir()
    stale, recent = node_tmp / "0", node_tmp / "1"
    for old in (stale, node_tmp / ".half-unpacked", recent):
        (old / "x").mkdir(parents=True)
    day_ago = time.time() - ray_files.PRUNE_AFTER_S - 60
    for old in (stale, node_tmp / ".half-unpacked"):
        os.utime(old, (day_ago, day_ago))

    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.txt").write_text("notes")
    shipped = shipped_copy(data)
    shutil.rmtree(data)
    localize(item_reading(data), (shipped,))
    assert sorted(p.name for p in node_tmp.iterdir()) == sorted(["1", shipped.digest])


def test_a_mounted_folder_is_read_in_place(tmp_path, node_tmp):
    data = tmp_path / "data"
    data.mkdir()
    item = item_reading(data)
    assert localize(item, (shipped_copy(data),)) == (item, None)
    assert not node_tmp.exists()


def test_a_folder_not_shipped_and_not_here_is_named_in_one_line(tmp_path, node_tmp):
    gone = tmp_path / "games"
    shipped = ShippedPath(str(gone), why_not="it is over the 256 MiB the executor ships")
    _, missing = localize(item_reading(gone), (shipped,))
    assert missing == (
        f"cannot read {gone} (it is over the 256 MiB the executor ships): mount it at that path"
    )
