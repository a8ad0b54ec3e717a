"""Hostile SpreadsheetBench releases (folders a row names outside the release, symlinked
workbooks, tarballs with `..`/absolute/link/device members or garbage) and ALFWorld game
files linked out of the data root: one EnvError line, nothing extracted or copied, the
data directory as it was."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from envs.alfworld.materialize import materialize as alfworld
from envs.spreadsheetbench.materialize import materialize as spreadsheetbench
from tests.envs.benchmarks.fixtures import SPLIT_IDS, write_manifest
from tests.envs.test_materialize_hostile import SECRET, fails_cleanly, leaked

ALL_IDS = [i for ids in SPLIT_IDS.values() for i in ids]


def release(root: Path, path_of=lambda i: f"spreadsheet/{i}") -> Path:
    """The published layout with placeholder workbooks (materialising only copies them)."""
    rows = []
    for i in ALL_IDS:
        folder = root / "spreadsheet" / i
        folder.mkdir(parents=True)
        (folder / f"1_{i}_input.xlsx").write_bytes(b"input workbook")
        (folder / f"1_{i}_answer.xlsx").write_bytes(b"answer workbook")
        rows.append(
            {"id": i, "instruction": "do", "spreadsheet_path": path_of(i), "answer_position": "A1"}
        )
    (root / "dataset.json").write_text(json.dumps(rows))
    return root


@pytest.fixture
def outside_case(tmp_path):
    """A folder outside the release that looks like an item's workbooks."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "1_v1_input.xlsx").write_bytes(SECRET)
    (folder / "1_v1_answer.xlsx").write_bytes(SECRET)
    return folder


@pytest.fixture
def manifest(tmp_path):
    return write_manifest(tmp_path / "manifest")


def test_a_good_release_still_materialises(tmp_path, manifest):
    report = spreadsheetbench(release(tmp_path / "rel"), tmp_path / "out", manifest)
    assert report.counts == {"train": 2, "val": 1, "test": 1} and report.files == 8


@pytest.mark.parametrize("named", ["{outside}", "../outside", "spreadsheet/../../outside"])
def test_spreadsheet_path_outside_the_release_is_refused(tmp_path, manifest, outside_case, named):
    named = named.format(outside=outside_case)
    src = release(tmp_path / "rel", lambda i: named if i == "v1" else f"spreadsheet/{i}")
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(src, out, manifest), out, repr(named))


def test_item_folder_symlinked_out_of_the_release_is_refused(tmp_path, manifest, outside_case):
    src = release(tmp_path / "rel")
    folder = src / "spreadsheet" / "v1"
    for file in folder.iterdir():
        file.unlink()
    folder.rmdir()
    folder.symlink_to(outside_case)
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(src, out, manifest), out, "points outside")


def test_workbook_symlinked_out_of_the_release_is_not_copied(tmp_path, manifest, outside_case):
    src = release(tmp_path / "rel")
    answer = src / "spreadsheet" / "v1" / "1_v1_answer.xlsx"
    answer.unlink()
    answer.symlink_to(outside_case / "1_v1_answer.xlsx")
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(src, out, manifest), out, "no input/answer workbook")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe", "not UTF-8"),
        (b'{"id": "t1"}', "expected a JSON array of objects"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'[{"id": "t1"}]', "manifest id(s) are not in the source"),
    ],
)
def test_malformed_dataset_json_is_one_line(tmp_path, manifest, content, expected):
    src = release(tmp_path / "rel")
    (src / "dataset.json").write_bytes(content)
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(src, out, manifest), out, expected)


def test_row_missing_its_instruction_is_one_line(tmp_path, manifest):
    src = release(tmp_path / "rel")
    rows = json.loads((src / "dataset.json").read_text())
    del rows[-1]["instruction"]
    (src / "dataset.json").write_text(json.dumps(rows))
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(src, out, manifest), out, "'instruction' is missing")


def archive_with(tmp_path: Path, extra: tarfile.TarInfo, data: bytes = b"") -> Path:
    """The good release as a .tar.gz plus one hostile member."""
    folder = release(tmp_path / "spreadsheetbench_verified_400")
    path = tmp_path / "spreadsheetbench_verified_400.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
        tar.addfile(extra, io.BytesIO(data) if extra.isfile() else None)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 0):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, size
    return info


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        (member("../escaped.txt", size=6), "lies outside"),
        (member("/tmp/skillopt-absolute-escape.txt", size=6), "lies outside"),
        (member("spreadsheetbench_verified_400/l", tarfile.SYMTYPE, "/etc/hostname"), "symlink"),
        (member("spreadsheetbench_verified_400/l", tarfile.SYMTYPE, "../../.."), "symlink"),
        (member("spreadsheetbench_verified_400/h", tarfile.LNKTYPE, "../x"), "hard link"),
        (member("spreadsheetbench_verified_400/dev", tarfile.CHRTYPE), "device"),
        (member("spreadsheetbench_verified_400/fifo", tarfile.FIFOTYPE), "device or FIFO"),
    ],
)
def test_archive_with_a_hostile_member_extracts_nothing(tmp_path, manifest, info, expected):
    archive = archive_with(tmp_path, info, b"escape" if info.isfile() else b"")
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(archive, out, manifest), out, expected)
    assert not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/skillopt-absolute-escape.txt").exists()


@pytest.mark.parametrize("content", [b"garbage, not gzip", b"\x1f\x8b\x08\x00truncated"])
def test_garbage_archive_is_one_line(tmp_path, manifest, content):
    archive = tmp_path / "release.tar.gz"
    archive.write_bytes(content)
    out = tmp_path / "out"
    fails_cleanly(lambda: spreadsheetbench(archive, out, manifest), out, "not a readable tar")


def test_alfworld_game_file_linked_out_of_the_root_is_missing(tmp_path):
    games = {"g1": "json_2.1.1/train/a/game.tw-pddl", "g2": "json_2.1.1/valid/b/game.tw-pddl"}
    manifest = write_manifest(
        tmp_path / "manifest",
        {"train": ["g1"], "val": ["g2"], "test": []},
        **{k: {"gamefile": v} for k, v in games.items()},
    )
    root = tmp_path / "alfworld_data"
    for path in games.values():
        (root / path).parent.mkdir(parents=True)
    (root / games["g1"]).write_text("{}")
    (tmp_path / "secret.pddl").write_bytes(SECRET)
    (root / games["g2"]).symlink_to(tmp_path / "secret.pddl")
    out = tmp_path / "out"
    fails_cleanly(lambda: alfworld(root, out, manifest), out, "1 game file(s)")
    assert not leaked(tmp_path / "manifest")
