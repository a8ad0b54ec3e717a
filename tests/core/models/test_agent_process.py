"""The private home an agent CLI runs in: everything it writes, temp files included, stays
inside it, and the temp dir is not the system's (Codex refuses to put its sandbox helper
under the system temp dir, and with a system bubblewrap every shell command then fails)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from core.models.agent_process import base_environment, private_home


def test_the_child_gets_a_temp_dir_of_its_own_inside_its_home():
    with private_home("codex") as home:
        env = base_environment(home, environ={"PATH": "/usr/bin", "AWS_SECRET": "x"})
        tmp = Path(env["TMPDIR"])
        assert tmp.is_dir() and tmp.parent == home
        assert tmp != Path(tempfile.gettempdir())
        assert env["HOME"] == str(home) and "AWS_SECRET" not in env
    assert not home.exists()  # removed with everything in it
