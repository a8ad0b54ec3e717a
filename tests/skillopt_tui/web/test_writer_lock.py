"""The writer's lock across real processes (textual-serve runs one app process per browser
session): the first session writes, the others are read-only while it lives, and the lock
frees itself when the writer dies, even by SIGKILL."""

from __future__ import annotations

import signal
import subprocess
import sys

from skillopt_tui.web.writer_lock import claim_writer
from tests.support.web_face import REPO, skillopt_env

HOLD = (
    "import sys, time; from pathlib import Path\n"
    "from skillopt_tui.web.writer_lock import claim_writer\n"
    "print(claim_writer(Path(sys.argv[1])), flush=True); time.sleep(600)\n"
)


def test_one_writer_at_a_time_and_the_lock_frees_itself(tmp_path):
    lock = tmp_path / "writer.lock"
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)],
        stdout=subprocess.PIPE,
        text=True,
        env=skillopt_env(),
        cwd=REPO,
    )
    try:
        assert writer.stdout.readline().strip() == "None"  # it writes
        said = claim_writer(lock)  # this process: a second session
        assert said is not None and said.startswith("Read-only")
        assert f"session {writer.pid}" in said
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert claim_writer(lock) is None  # the next session to open writes
