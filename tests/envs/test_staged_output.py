"""The staged data directory: swapped in whole on success (by exchange, or by two renames
where the exchange call is missing), removed with the parents it created on failure, and
the old data back in place when the swap itself fails."""

from __future__ import annotations

import os

import pytest

from core.environment.contract import EnvError
from envs import staged_output
from envs.staged_output import staged_output as stage_for


def build(out, marker: str) -> None:
    with stage_for(out) as stage:
        (stage / "train").mkdir()
        (stage / "train" / "items.json").write_text(marker)


@pytest.mark.parametrize("exchange", [True, False])
def test_success_replaces_the_old_folder_and_leaves_no_sibling(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(staged_output, "_exchange", lambda a, b: False)
    out = tmp_path / "data"
    build(out, "old")
    (out / "images").mkdir()
    build(out, "new")
    assert (out / "train" / "items.json").read_text() == "new"
    assert not (out / "images").exists()
    assert os.listdir(tmp_path) == ["data"]


def test_failure_removes_the_stage_and_the_parents_it_made(tmp_path):
    out = tmp_path / "a" / "b" / "data"
    with pytest.raises(RuntimeError), stage_for(out) as stage:
        (stage / "train").mkdir()
        raise RuntimeError("a bad row")
    assert os.listdir(tmp_path) == []


def test_a_failed_second_rename_puts_the_old_data_back(tmp_path, monkeypatch):
    out = tmp_path / "data"
    build(out, "old")
    monkeypatch.setattr(staged_output, "_exchange", lambda a, b: False)
    real_rename = os.rename

    def rename(src, dst):
        if ".new-" in os.path.basename(src):  # the new data moving into place
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(staged_output.os, "rename", rename)
    with pytest.raises(EnvError, match=r"No space left on device\); the old data was left"):
        build(out, "new")
    assert (out / "train" / "items.json").read_text() == "old"
    assert os.listdir(tmp_path) == ["data"]


def test_an_out_folder_that_is_a_symlink_keeps_the_link(tmp_path):
    (tmp_path / "disk" / "data").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "disk" / "data")
    build(tmp_path / "link", "x")
    build(tmp_path / "link", "y")
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "disk" / "data" / "train" / "items.json").read_text() == "y"
    assert os.listdir(tmp_path / "disk") == ["data"]


def test_a_dangling_out_symlink_is_refused(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(EnvError, match="symlink to no folder"):
        build(tmp_path / "link", "x")
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "nowhere").exists()
