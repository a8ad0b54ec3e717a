"""The `shell` tool of a tools replay: a command run inside the bubblewrap jail
(envs/jail.py) over the replay's workspace, never on the host.

The jail shows the command the system's binaries and libraries read-only, the workspace
read-write at /job (its cwd), a private /tmp, and nothing else: no home, no /etc, no
network (loopback only), new PID namespace (everything it starts dies with it). As root,
a small bootstrap drops to the jail's own uid (the workspace is handed to that uid before
each command, files the other tools wrote included) and sets a process and file-size
limit before it execs `/bin/sh -c`. A command that runs past its time limit is killed with
everything it started. Without a working jail there is no shell: `jailed_shell` returns
None and the reason, which the task's prompt states.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envs.jail import WORK, bwrap_command, jail_problem, jail_uid, start_jailed

MAX_OUTPUT_CHARS = 20_000
MAX_PROCESSES = 128
MAX_FILE_BYTES = 100_000_000
_SYSTEM_BINARIES = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
# Runs first inside the jail: drop to the jail's uid (root only), set limits, exec the shell.
_BOOT = (
    "import os, resource, sys\n"
    "uid = int(sys.argv[1])\n"
    "if uid >= 0:\n"
    "    os.setgroups([]); os.setgid(uid); os.setuid(uid)\n"
    f"resource.setrlimit(resource.RLIMIT_NPROC, ({MAX_PROCESSES}, {MAX_PROCESSES}))\n"
    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({MAX_FILE_BYTES}, {MAX_FILE_BYTES}))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execv('/bin/sh', ['/bin/sh', '-c', sys.argv[2]])\n"
)


def _hand_over(root: Path, uid: int) -> None:
    """Give the workspace to the jail's uid, so the dropped shell can change it; its root
    stays enterable by bwrap itself (root without CAP_DAC_OVERRIDE) under any umask."""
    os.chmod(root, 0o755)
    for folder, dirs, files in os.walk(root):
        os.chown(folder, uid, uid, follow_symlinks=False)
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _tail(output) -> str:
    """The last MAX_OUTPUT_CHARS of an output file, marked when its start was cut."""
    size = output.seek(0, os.SEEK_END)
    keep = MAX_OUTPUT_CHARS * 4
    output.seek(max(0, size - keep))
    text = output.read().decode("utf-8", errors="replace")
    cut = size > keep or len(text) > MAX_OUTPUT_CHARS
    return "[output cut]\n" + text[-MAX_OUTPUT_CHARS:] if cut else text


def _cut(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n[output cut]"


@dataclass(frozen=True)
class ShellRun:
    """One jailed command: its exit status (None: stopped at its time limit) and its
    output, stdout and stderr together, decoded and cut to MAX_OUTPUT_CHARS."""

    status: int | None
    output: str
    timeout_s: float

    @property
    def note(self) -> str:
        if self.status is None:
            return f"[stopped after {self.timeout_s:.1f}s]"
        return f"[exit status {self.status}]"


class JailedShell:
    """`shell(command, timeout_s) -> output` over one workspace, each command in a fresh
    jail."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uid = jail_uid()

    def __call__(self, command: str, timeout_s: float) -> str:
        done = self.run(command, timeout_s)
        text = done.output
        return f"{text.rstrip()}\n{done.note}" if text.strip() else done.note

    def run(self, command: str, timeout_s: float, *, tail: bool = False) -> ShellRun:
        """Run `command` in a fresh jail. With `tail`, the output kept is its end (where a
        test runner prints its summary), else its start."""
        if self.uid is not None:  # again each time: the file tools write as we do
            _hand_over(self.root, self.uid)
        readonly = {p: Path(p) for p in _SYSTEM_BINARIES if os.path.isdir(p)}
        env = {"PATH": ":".join(readonly), "HOME": WORK, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        argv = [sys.executable, "-I", "-S", "-c", _BOOT, str(-1 if self.uid is None else self.uid)]
        jailed = bwrap_command([*argv, command], self.root, readonly, env, tmp_bytes=MAX_FILE_BYTES)
        with tempfile.TemporaryFile() as output:
            running = start_jailed(
                jailed,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            status: int | None
            try:
                status = running.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                running.kill()
                status = None
            finally:
                running.close()
            if tail:
                text = _tail(output)
            else:
                output.seek(0)
                text = _cut(output.read(MAX_OUTPUT_CHARS * 4 + 1))
        return ShellRun(status, text, timeout_s)


def jailed_shell(root: Path) -> tuple[Callable[[str, float], str] | None, str]:
    """(a shell over `root`, "") when the jail works here, else (None, why not)."""
    problem = jail_problem()
    if problem:
        return None, problem
    return JailedShell(root), ""
