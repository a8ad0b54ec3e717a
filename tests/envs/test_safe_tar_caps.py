"""A release archive is capped before anything is extracted: the bytes its members unpack
to and their number (envs/safe_tar.py). Before, a tarball was extracted whatever it held
(a gzip bomb filled the disk)."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from core.environment.contract import EnvError
from envs.safe_tar import MAX_TOTAL_BYTES, extract_checked
from tests.skillopt_tui.cli.test_data_materialize_hostile import one_error_line
from tests.skillopt_tui.cli.test_envs_cmds import skillopt


def archive_of(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_an_archive_past_the_byte_cap_is_refused_whole(tmp_path):
    archive = archive_of(tmp_path / "r.tar.gz", {"a.txt": b"x" * 600, "b.txt": b"y" * 600})
    dest = tmp_path / "out"
    with pytest.raises(EnvError) as refused:
        extract_checked(archive, dest, max_bytes=1000)
    assert "unpacks to more than 1,000 bytes" in str(refused.value)
    assert "\n" not in str(refused.value) and not dest.exists()
    extract_checked(archive, dest, max_bytes=1200)  # at the cap: extracted
    assert (dest / "b.txt").read_bytes() == b"y" * 600


def test_an_archive_past_the_member_cap_is_refused_whole(tmp_path):
    archive = archive_of(tmp_path / "r.tar.gz", {f"f{i}": b"" for i in range(11)})
    dest = tmp_path / "out"
    with pytest.raises(EnvError, match="more than 10 members"):
        extract_checked(archive, dest, max_members=10)
    assert not dest.exists()


def test_data_materialize_refuses_a_bomb_in_one_line(tmp_path):
    """A member declaring more than the cap (8 GiB): refused from its header, exit 2, before
    a byte of it is read or written."""
    info = tarfile.TarInfo("spreadsheetbench_verified_400/dataset.json")
    info.size = MAX_TOTAL_BYTES + 1
    archive = tmp_path / "spreadsheetbench_verified_400.tar.gz"
    archive.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT) + bytes(1 << 16)))
    result = skillopt(tmp_path, "data", "materialize", "spreadsheetbench", "--source", str(archive))
    one_error_line(result, "unpacks to more than 8 GiB")
    assert not (tmp_path / "data").exists()
