"""The `shell` tool of a tools replay: a command run inside the bubblewrap jail
(envs/jail.py) over the replay's workspace, never on the host.

The jail shows the command the system's binaries and libraries read-only, the workspace
read-write at /job (its cwd), a private /tmp, and nothing else: no home, no /etc, no
network (loopback only), new PID namespace (everything it starts dies with it). As root,
a small bootstrap drops to the jail's own uid (the workspace is handed to that uid before
each command, files the other tools wrote included) and sets a process and file-size
limit before it execs `/bin/sh -c` (envs/jailed_command.py runs it). A command that runs past its time limit is killed with
everything it started. Without a working jail there is no shell: `jailed_shell` returns
None and the reason, which the task's prompt states.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envs.jail import jail_problem, jail_uid
from envs.jailed_command import run_jailed
from sleep.night.check_toolchain import Toolchain

MAX_OUTPUT_CHARS = 20_000
MAX_PROCESSES = 128


def _tail(output) -> str:
    """The last MAX_OUTPUT_CHARS of an output file, marked when its start was cut."""
    size = output.seek(0, os.SEEK_END)
    keep = MAX_OUTPUT_CHARS * 4
    output.seek(max(0, size - keep))
    text = output.read().decode("utf-8", errors="replace")
    cut = size > keep or len(text) > MAX_OUTPUT_CHARS
    return "[output cut]\n" + text[-MAX_OUTPUT_CHARS:] if cut else text


def _start(output) -> str:
    """The first MAX_OUTPUT_CHARS of an output file, marked when its end was cut."""
    output.seek(0)
    text = output.read(MAX_OUTPUT_CHARS * 4 + 1).decode("utf-8", errors="replace")
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

    def run(
        self, command: str, timeout_s: float, *, tail: bool = False, lent: Toolchain | None = None
    ) -> ShellRun:
        """Run `command` in a fresh jail. With `tail`, the output kept is its end (where a
        test runner prints its summary), else its start. `lent`: the person's toolchain
        the command needs (a mined check's), read-only."""
        lent = lent or Toolchain()
        done = run_jailed(
            ["/bin/sh", "-c", command],
            self.root,
            timeout_s,
            {"LANG": "C.UTF-8"},
            max_processes=MAX_PROCESSES,
            read=_tail if tail else _start,
            uid=self.uid,  # handed the workspace again each time: the file tools write as we do
            lent=lent.binds,
            path=lent.path,
        )
        return ShellRun(done.status, done.output, timeout_s)


def jailed_shell(root: Path) -> tuple[Callable[[str, float], str] | None, str]:
    """(a shell over `root`, "") when the jail works here, else (None, why not)."""
    problem = jail_problem()
    if problem:
        return None, problem
    return JailedShell(root), ""
