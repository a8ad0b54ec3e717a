"""The private home an agent CLI runs in: everything it writes, temp files included, stays
inside it, and the temp dir is not the system's (Codex refuses to put its sandbox helper
under the system temp dir, and with a system bubblewrap every shell command then fails)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from core.models.agents.process import base_environment, private_home


def test_the_child_gets_a_temp_dir_of_its_own_inside_its_home():
    with private_home("codex") as home:
        env = base_environment(home, environ={"PATH": "/usr/bin", "AWS_SECRET": "x"})
        tmp = Path(env["TMPDIR"])
        assert tmp.is_dir() and tmp.parent == home
        assert tmp != Path(tempfile.gettempdir())
        assert env["HOME"] == str(home) and "AWS_SECRET" not in env
    assert not home.exists()  # removed with everything in it


def test_processes_started_in_a_session_of_their_own_do_not_outlive_the_call():
    """Killing the CLI's process group misses a helper it started with a new session
    (Codex's bwrap sandbox helper): leaving the private home ends it."""
    import subprocess
    import sys

    with private_home("codex") as home:
        helper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)", str(home / ".codex" / "tmp")],
            start_new_session=True,
        )
        bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        assert helper.wait(timeout=10) == -9
        assert bystander.poll() is None  # a process not naming the home is left alone
    finally:
        for process in (helper, bystander):
            if process.poll() is None:
                process.kill()
