"""Atomic writes replace whole files and keep permissions."""

import os
import stat

from core.atomic import write_json, write_text


def test_new_file_gets_umask_permissions_and_exact_text(tmp_path):
    path = tmp_path / "sub" / "a.md"
    write_text(path, "a\r\nb")
    assert path.read_bytes() == b"a\r\nb"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_existing_permissions_are_kept_and_no_temp_file_is_left(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{}")
    path.chmod(0o640)
    write_json(path, {"step": 3})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_text() == '{\n  "step": 3\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
