"""Nothing an agent CLI starts outlives its call, not even a tool that leaves the CLI's
process group and session with `setsid` and does not name the private home (which is
what end_stragglers looks for). The fake agents below are shell scripts run through the
real run_process: one double-forks a setsid daemon and exits at once, one does so and
then hangs until the timeout, one is killed by a signal (its status must still read as
that signal)."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from core.models.agents.process import AgentMissing, AgentTimedOut, run_process

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")

DAEMON = """#!/bin/sh
# Double fork: the daemon's parent (a subshell) exits, setsid takes it out of our group
# and session; stdio to /dev/null so the caller's pipes close without it.
( setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$PIDFILE" </dev/null >/dev/null 2>&1 & )
while [ ! -s "$PIDFILE" ]; do sleep 0.01; done
"""


def agent(tmp_path: Path, then: str) -> Path:
    script = tmp_path / "fake-agent"
    script.write_text(DAEMON + then + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def daemon_pid(pidfile: Path) -> int:
    return int(pidfile.read_text().strip())


def settle(pid: int) -> bool:
    """Whether `pid` is still alive once a killed process has had time to go away (a
    bounded poll for the kernel to finish the kill, not a timing assertion)."""
    for _ in range(200):
        if not alive(pid):
            return False
        time.sleep(0.01)
    return True


async def run(tmp_path, script, timeout_s=30.0):
    env = {"PATH": "/usr/bin:/bin", "PIDFILE": str(tmp_path / "daemon.pid")}
    return await run_process(
        [str(script)], cwd=tmp_path, env=env, timeout_s=timeout_s, what="fake agent"
    )


def kill_if_alive(pidfile: Path) -> None:
    if pidfile.exists() and alive(daemon_pid(pidfile)):
        os.kill(daemon_pid(pidfile), signal.SIGKILL)


async def test_a_setsid_daemon_does_not_outlive_an_agent_that_exits(tmp_path):
    result = await run(tmp_path, agent(tmp_path, "echo done; exit 3"))
    pid = daemon_pid(tmp_path / "daemon.pid")
    try:
        assert result.returncode == 3 and result.stdout == "done\n"
        assert not settle(pid), "the setsid daemon survived the agent"
    finally:
        kill_if_alive(tmp_path / "daemon.pid")


async def test_a_setsid_daemon_does_not_outlive_a_timed_out_agent(tmp_path):
    with pytest.raises(AgentTimedOut):
        await run(tmp_path, agent(tmp_path, "exec sleep 300"), timeout_s=1.0)
    try:
        assert not settle(daemon_pid(tmp_path / "daemon.pid"))
    finally:
        kill_if_alive(tmp_path / "daemon.pid")


async def test_an_agent_killed_by_a_signal_reads_as_that_signal(tmp_path):
    result = await run(tmp_path, agent(tmp_path, "kill -KILL $$"))
    try:
        assert result.returncode == -signal.SIGKILL
        assert not settle(daemon_pid(tmp_path / "daemon.pid"))
    finally:
        kill_if_alive(tmp_path / "daemon.pid")


async def test_stdin_reaches_the_agent_through_the_reaper(tmp_path):
    script = tmp_path / "cat-agent"
    script.write_text("#!/bin/sh\ncat\n")
    script.chmod(0o755)
    result = await run_process(
        [str(script)], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout_s=30,
        what="cat", stdin="the prompt",
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (0, "the prompt")


async def test_a_missing_binary_is_still_agent_missing(tmp_path):
    with pytest.raises(AgentMissing, match="cannot start"):
        await run_process(
            [str(tmp_path / "no-such-cli")], cwd=tmp_path, env={"PATH": "/usr/bin"},
            timeout_s=5, what="x",
        )  # fmt: skip


def test_killing_skillopt_itself_ends_the_agent_and_its_daemon(tmp_path):
    """kill -9 of the process that ran the agent (nothing of ours left to clean up): the
    reaper gets its parent-death signal and ends everything below it."""
    import subprocess
    import sys

    script = agent(tmp_path, 'echo started > "$PIDFILE.agent"; exec sleep 300')
    runner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from pathlib import Path\n"
            "from core.models.agents.process import run_process\n"
            "asyncio.run(run_process([sys.argv[1]], cwd=Path(sys.argv[2]), timeout_s=300,"
            " what='fake', env={'PATH': '/usr/bin:/bin', 'PIDFILE': sys.argv[3]}))\n",
            str(script),
            str(tmp_path),
            str(tmp_path / "daemon.pid"),
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4])},
    )
    try:
        for _ in range(1000):  # until the fake agent has started its daemon
            if (tmp_path / "daemon.pid.agent").exists():
                break
            time.sleep(0.01)
        pid = daemon_pid(tmp_path / "daemon.pid")
        runner.kill()
        runner.wait(timeout=30)
        assert not settle(pid), "the daemon outlived the killed skillopt process"
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_if_alive(tmp_path / "daemon.pid")
