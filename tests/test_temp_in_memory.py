"""The suite's temporary directories live in memory where the machine has a tmpfs
(tests/conftest.py): every fsync of a run, cache or journal under tmp_path is then free."""

from __future__ import annotations

import pytest

from tests.conftest import MEMORY_TEMP_ROOT, temp_root_in_memory

has_memory_root = pytest.mark.skipif(
    not MEMORY_TEMP_ROOT.is_dir(), reason=f"no {MEMORY_TEMP_ROOT} on this machine"
)


@has_memory_root
def test_tmp_path_is_in_memory(tmp_path):
    assert tmp_path.is_relative_to(MEMORY_TEMP_ROOT.resolve())


@has_memory_root
def test_a_chosen_temp_root_is_kept():
    environ = {"PYTEST_DEBUG_TEMPROOT": "/var/tmp"}
    temp_root_in_memory(environ)
    assert environ == {"PYTEST_DEBUG_TEMPROOT": "/var/tmp"}
    fresh: dict[str, str] = {}
    temp_root_in_memory(fresh)
    assert fresh == {"PYTEST_DEBUG_TEMPROOT": str(MEMORY_TEMP_ROOT)}
