"""The writer's lock across real processes (textual-serve runs one app process per browser
session, and a terminal `skillopt tui` is another): the first app writes, the others are
read-only while it lives, and the lock frees itself when the writer dies, even by SIGKILL.
The lock is the skills repository's, so apps of different servers (different state
directories, different environments) meet at it."""

from __future__ import annotations

import signal
import subprocess
import sys

from skillopt_tui.writer_lock import LOCK_NAME, claim_tui_writer, claim_writer
from tests.support.tui_app import make_skills_repo
from tests.support.web_face import REPO, skillopt_env

HOLD = (
    "import sys, time; from pathlib import Path\n"
    "from skillopt_tui.writer_lock import claim_writer\n"
    "print(claim_writer(Path(sys.argv[1])), flush=True); time.sleep(600)\n"
)
HOLD_REPO = (
    "import sys, time; from pathlib import Path\n"
    "from skillopt_tui.writer_lock import claim_tui_writer\n"
    "print(claim_tui_writer(Path(sys.argv[1]), Path(sys.argv[2])), flush=True)\n"
    "time.sleep(600)\n"
)


def _holder(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        text=True,
        env=skillopt_env(),
        cwd=REPO,
    )


def test_one_writer_at_a_time_and_the_lock_frees_itself(tmp_path):
    lock = tmp_path / "writer.lock"
    writer = _holder(HOLD, str(lock))
    try:
        assert writer.stdout.readline().strip() == "None"  # it writes
        said = claim_writer(lock)  # this process: a second session
        assert said is not None and said.startswith("Read-only")
        assert f"process {writer.pid}" in said
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert claim_writer(lock) is None  # the next session to open writes


def test_the_lock_is_the_repository_s_whoever_opens_it(tmp_path):
    """Two apps with their own state directories (two servers, or a server and a terminal)
    on one skills repository: one writer, its lock in the repository's git directory."""
    skills = tmp_path / "skills"
    make_skills_repo(skills)
    writer = _holder(HOLD_REPO, str(skills), str(tmp_path / "state-a"))
    try:
        assert writer.stdout.readline().strip() == "None"
        assert (skills / ".git" / LOCK_NAME).exists()
        said = claim_tui_writer(skills, tmp_path / "state-b")
        assert said is not None and f"process {writer.pid}" in said
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    # without a repository, Sleep's state directory holds it, if there is one
    (tmp_path / "state-c").mkdir()
    assert claim_tui_writer(None, tmp_path / "state-c") is None
    assert (tmp_path / "state-c" / LOCK_NAME).exists()
    assert claim_tui_writer(None, tmp_path / "none") is None  # and nothing is created
    assert not (tmp_path / "none").exists()
