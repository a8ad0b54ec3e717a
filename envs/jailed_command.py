"""One command run inside the bubblewrap jail (envs/jail.py) over a work folder: for check
commands that run code a model or agent wrote (repo_tasks' `python -m unittest`), and the
shell of a Sleep tools replay and its mined checks (sleep/night/replay_shell.py).

The jail shows the command the system's binaries and libraries and this interpreter
read-only (and any host folders the caller lends it, read-only at the same paths, their bin
folders first on PATH: a mined check's Python toolchain, sleep/night/check_toolchain.py), the
work folder read-write at /job (its cwd), a private /tmp, and nothing else:
no home, no /etc, no data folder (so no task.json, no reference answers), no network
(loopback only), a new PID namespace (everything it starts dies with it). As root, a small
bootstrap drops to a uid of the jail's own (the work folder is handed to it first) and sets
process, file-size and core limits before it execs the command. Past its time limit the
command is killed with everything it started.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envs.jail import WORK, bwrap_command, jail_uid, start_jailed

MAX_OUTPUT_BYTES = 200_000
MAX_PROCESSES = 64
MAX_FILE_BYTES = 100_000_000
SYSTEM_BINARIES = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")
# Runs first inside the jail: drop to the jail's uid (root only), set the process limit
# it is given and the file-size and core limits, exec argv.
_BOOT = (
    "import os, resource, sys\n"
    "uid, nproc = int(sys.argv[1]), int(sys.argv[2])\n"
    "if uid >= 0:\n"
    "    os.setgroups([]); os.setgid(uid); os.setuid(uid)\n"
    "resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))\n"
    f"resource.setrlimit(resource.RLIMIT_FSIZE, ({MAX_FILE_BYTES}, {MAX_FILE_BYTES}))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


@dataclass(frozen=True)
class Finished:
    status: int | None  # None: killed at the time limit
    output: str  # stdout and stderr together, cut to MAX_OUTPUT_BYTES


def hand_over(root: Path, uid: int) -> None:
    """Give the work folder to the jail's uid, so the dropped command can change it; its
    root stays enterable by bwrap itself (root without CAP_DAC_OVERRIDE)."""
    os.chmod(root, 0o755)
    for folder, dirs, files in os.walk(root):
        os.chown(folder, uid, uid, follow_symlinks=False)
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _head(output) -> str:
    output.seek(0)
    return output.read(MAX_OUTPUT_BYTES).decode("utf-8", errors="replace")


def run_jailed(
    argv: Sequence[str],
    work: Path,
    timeout_s: float,
    env: Mapping[str, str],
    *,
    max_processes: int = MAX_PROCESSES,
    read: Callable[[Any], str] = _head,
    uid: int | None | Literal["auto"] = "auto",
    lent: Sequence[str] = (),
    path: Sequence[str] = (),
) -> Finished:
    """Run `argv` (its first word found on the jail's PATH, or an absolute path such as
    this interpreter) in a fresh jail over `work`. `read(output file)` keeps what the
    caller wants of the output (default: its first MAX_OUTPUT_BYTES); `uid` is the jail's
    uid when the caller already asked for one (envs.jail.jail_uid). `lent`: host folders
    bound read-only at the same paths; `path`: folders on PATH before the system's."""
    uid = jail_uid() if uid == "auto" else uid
    if uid is not None:
        hand_over(work, uid)
    system = [p for p in SYSTEM_BINARIES if os.path.isdir(p)]
    readonly = {p: Path(p) for p in (*system, *lent)}
    search = ":".join(dict.fromkeys([*path, *system]))
    jail_env = {**env, "PATH": search, "HOME": WORK, "TMPDIR": "/tmp"}
    boot = [sys.executable, "-I", "-S", "-c", _BOOT, str(-1 if uid is None else uid)]
    boot.append(str(max_processes))
    command = bwrap_command([*boot, *argv], work, readonly, jail_env, tmp_bytes=MAX_FILE_BYTES)
    with tempfile.TemporaryFile() as output:
        running = start_jailed(
            command,
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
        text = read(output)
    return Finished(status, text)
