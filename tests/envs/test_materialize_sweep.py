"""Every materialiser against the same garbage sources, with the published manifests: a
non-UTF-8 file, /dev/null, a FIFO, an empty folder, a folder of garbage under every name
a materialiser looks for, symlink loops, a garbage tarball, JSON of the wrong shape. Each
is one EnvError line and no data directory (nothing hangs on the FIFO)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from core.environment.contract import EnvError
from envs import manifest_dir_of, spec_of

ENVS = ["searchqa", "livemath", "docvqa", "officeqa", "spreadsheetbench", "alfworld"]
NAMES = ("a.json", "b.jsonl", "officeqa_full.csv", "dataset.json", "qa_1_final.json", "t.txt")


def garbage_folder(path: Path) -> None:
    path.mkdir()
    for name in NAMES:
        (path / name).write_bytes(b"\xff garbage \x00")


def loops(path: Path) -> None:
    path.mkdir()
    (path / "loop.json").symlink_to(path / "loop.json")
    (path / "self").symlink_to(path)


def wrong_shapes(path: Path) -> None:
    path.mkdir()
    (path / "a.json").write_text('[1, 2, "x"]')
    (path / "dataset.json").write_text("[1]")
    (path / "qa_1_final.json").write_text("[1]")
    (path / "officeqa_full.csv").write_text("uid\n\n,,,,\n")


SOURCES = {
    "non-utf8.jsonl": lambda p: p.write_bytes(b"\xff\xfe\x00"),
    "devnull": lambda p: p.symlink_to("/dev/null"),
    "fifo": os.mkfifo,
    "empty": lambda p: p.mkdir(),
    "garbage": garbage_folder,
    "loops": loops,
    "release.tar.gz": lambda p: p.write_bytes(b"\x1f\x8b garbage"),
    "wrong-shapes": wrong_shapes,
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("env", ENVS)
def test_garbage_source_is_one_line_and_writes_nothing(tmp_path, env, source):
    module, function = spec_of(env).materializer.split(":")
    materialize = getattr(importlib.import_module(module), function)
    path = tmp_path / source
    SOURCES[source](path)
    out = tmp_path / "data" / env
    with pytest.raises(EnvError) as caught:
        materialize(path, out, manifest_dir_of(env))
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "data").exists()
