"""An OS-level jail for model-written programs: bubblewrap (`bwrap`) around this interpreter.

Inside the jail a program sees only: the system libraries the interpreter links against
(`/usr/lib*`, read-only), this interpreter's prefixes (the venv and the Python it was made
from, read-only), the files the caller mounts read-only, one fresh work folder
(read-write), a private /proc and a minimal /dev. No home, no /etc, no /usr/bin (so no
shell or other binary to exec), nothing of the data directory, and new PID, network
(loopback only), IPC and UTS namespaces; `--die-with-parent` and the PID namespace mean
that killing the jail kills every process in it, a `setsid` grandchild included.

Process counting: the kernel never applies RLIMIT_NPROC to host uid 0, and under root a
user namespace maps the jail's uid to 0. So as root the jail keeps no user namespace and
only CAP_SETUID/CAP_SETGID, and the bootstrap switches to a uid of its own (random per
run, so concurrent jails do not share one process budget) before it sets the process
limit and runs the program. As any other user the jail takes a user namespace and the
limit counts only the jail's processes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.environment.contract import EnvError

BUBBLEWRAP = "bubblewrap"
AUDIT_HOOK_ONLY = "audit-hook-only"
MODES = (BUBBLEWRAP, AUDIT_HOOK_ONLY)
WORK = "/job"  # the work folder's path inside the jail
LIBRARY_DIRS = ("/lib", "/lib64", "/lib32", "/libx32", "/usr/lib", "/usr/lib64", "/usr/lib32")
_SYSTEM_PREFIXES = ("/", "/usr", "/usr/local", "/opt")
_ROOT_UIDS = (1 << 30, 1 << 28)  # first uid and how many to pick from, when we are root


class JailUnavailable(EnvError):
    """bubblewrap is missing or cannot build its namespaces on this machine."""


def runs_as_root() -> bool:
    return os.geteuid() == 0


def jail_uid() -> int | None:
    """The uid the jailed program drops to (as root), or None (the jail's user namespace
    already makes it an ordinary user)."""
    return _ROOT_UIDS[0] + secrets.randbelow(_ROOT_UIDS[1]) if runs_as_root() else None


def _python_mounts() -> list[str]:
    """Read-only binds that make `sys.executable` start as it does outside: its prefixes
    (a venv and the Python it was made from). A system Python's prefix is /usr or
    /usr/local, which holds every binary of the machine: then only the interpreter file and
    the folders on `sys.path` (its libraries are in /usr/lib, bound already)."""
    targets: dict[str, str] = {}
    for prefix in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix):
        real = os.path.realpath(prefix)
        if real in _SYSTEM_PREFIXES:
            for path in (sys.executable, *(p for p in sys.path if os.path.isdir(p))):
                targets.setdefault(path, os.path.realpath(path))
        else:
            targets.setdefault(real, real)
            targets.setdefault(prefix, real)
    return [arg for target, source in targets.items() for arg in ("--ro-bind", source, target)]


def _library_mounts() -> list[str]:
    args: list[str] = []
    for folder in LIBRARY_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    return args


def _parents(mounts: list[str]) -> list[str]:
    """`--dir` for every folder above a mount point, world-readable: bwrap would make them
    0700 and owned by root, which the jail's own uid could not pass through."""
    targets = [mounts[i + 2] for i, arg in enumerate(mounts) if arg in ("--ro-bind", "--symlink")]
    folders = sorted({str(p) for t in targets for p in Path(t).parents if str(p) != "/"})
    return [arg for folder in folders for arg in ("--perms", "0755", "--dir", folder)]


def bwrap_command(
    argv: Sequence[str],
    work: Path,
    readonly: Mapping[str, Path],
    env: Mapping[str, str],
    *,
    tmp_bytes: int | None = None,
) -> list[str]:
    """The bwrap command line running `argv` in the jail, cwd = the work folder.
    `readonly` maps a path inside the jail to the host file or folder bound there. With
    `tmp_bytes`, a private /tmp of that size, mounted before the binds: mounted after, it
    would hide an interpreter that lives under /tmp (a clone checked out there)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise JailUnavailable("bubblewrap (bwrap) is not installed")
    if runs_as_root():
        namespaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        namespaces += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
        namespaces += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        namespaces = ["--unshare-all", "--cap-drop", "ALL"]
    mounts = [*_library_mounts(), *_python_mounts()]
    for inside, source in readonly.items():
        mounts += ["--ro-bind", str(source), inside]
    command = [bwrap, *namespaces, "--die-with-parent", "--new-session"]
    if tmp_bytes is not None:
        command += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    command += _parents(mounts)
    command += [*mounts, "--proc", "/proc", "--dev", "/dev", "--bind", str(work), WORK]
    command += ["--chdir", WORK, "--remount-ro", "/", "--clearenv"]
    for key, value in env.items():
        command += ["--setenv", key, value]
    return [*command, *argv]


@dataclass
class Running:
    """A started program: bwrap (or, without the jail, the program itself) and a pidfd of
    the jail's init, the first process of its PID namespace."""

    process: subprocess.Popen
    init_fd: int | None = None

    def kill(self) -> int:
        """Kill everything the program started and return bwrap's exit status. Killing the
        init makes the kernel kill and reap every process of the namespace (a `setsid`
        grandchild too) before init exits, and bwrap exits only after its init: so when
        this returns, nothing of the program runs. Without the jail: its process group."""
        try:
            if self.init_fd is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(self.init_fd, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait()

    def close(self) -> None:
        if self.init_fd is not None:
            os.close(self.init_fd)
            self.init_fd = None


def start_jailed(command: list[str], **popen: Any) -> Running:
    """Popen a `bwrap_command`, learning its init's pid from `--info-fd` (bwrap writes it
    and closes the pipe before the program starts)."""
    read_end, write_end = os.pipe()
    try:
        argv = [command[0], "--info-fd", str(write_end), *command[1:]]
        process = subprocess.Popen(argv, pass_fds=(write_end,), **popen)
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as info:
        raw = info.read()
    running = Running(process)
    # No pid when bwrap failed before starting its init: it exits with its own complaint.
    with contextlib.suppress(ValueError, KeyError, TypeError, OSError):
        running.init_fd = os.pidfd_open(int(json.loads(raw)["child-pid"]))
    return running


@functools.cache
def _probe(bwrap: str) -> str:
    """'' when bwrap can start this interpreter in the jail here, else bwrap's complaint."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skillopt-jail-probe-") as work:
        command = bwrap_command([sys.executable, "-I", "-c", "pass"], Path(work), {}, {})
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    if done.returncode == 0:
        return ""
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def jail_problem() -> str:
    """'' when the jail works here, else why not, as one clause."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    complaint = _probe(bwrap)
    return f"bubblewrap cannot build its jail here ({complaint})" if complaint else ""


def require_jail(env_name: str, mode: str) -> None:
    """Refuse, in one line, to run generated programs without the jail unless the user
    chose the weaker mode by name; say once that the weaker mode is in use."""
    if mode == AUDIT_HOOK_ONLY:
        logging.getLogger(__name__).warning(
            "%s: env.options.sandbox is %s: generated programs run under the Python audit "
            "hook alone, which a hostile program can get past",
            env_name,
            AUDIT_HOOK_ONLY,
        )
        return
    problem = jail_problem()
    if problem:
        raise JailUnavailable(
            f"{env_name}: {problem}, so generated programs cannot be jailed; install it "
            f"(apt install bubblewrap) or set env.options.sandbox: {AUDIT_HOOK_ONLY} to run "
            "them under the Python audit hook alone (weaker)"
        )
