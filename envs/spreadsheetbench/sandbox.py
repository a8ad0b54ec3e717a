"""Running a generated Python program on a workbook, jailed, with limits.

Layers: the bubblewrap jail of envs/jail.py, in which the program sees a fresh work folder
holding a copy of the input workbook and the program, the interpreter read-only and
nothing else (never the data directory, where the answer workbooks sit next to the inputs);
an environment with nothing of ours in it (no API keys, a minimal PATH); resource limits
set before it starts (address space, CPU seconds, size of any file it writes, open files,
and in the jail the number of processes); a wall-clock timeout after which the whole
process group and the jail, with every process in it, are killed; stdout/stderr captured
to files and cut to `max_output_chars`; and the audit hook of sandbox_boot.py (no writes or
reads outside the folder, no processes, no network, no signals) as a second layer.

`sandbox="audit-hook-only"` runs without the jail, under the last layers alone: weaker,
for machines without bubblewrap, only when the user names it.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from envs.jail import (
    AUDIT_HOOK_ONLY,
    BUBBLEWRAP,
    WORK,
    Running,
    bwrap_command,
    jail_uid,
    start_jailed,
)

BOOT = Path(__file__).resolve().parent / "sandbox_boot.py"
PROGRAM = "solution.py"
INPUT_NAME = "input.xlsx"
OUTPUT_NAME = "output.xlsx"


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 60.0
    memory_mb: int = 1024
    max_output_chars: int = 4000
    max_file_mb: int = 50
    max_processes: int = 16  # in the jail: processes and threads of the program together


@dataclass(frozen=True)
class RunResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    output: Path | None  # the produced workbook, copied out of the sandbox

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.output is not None

    def problem(self) -> str:
        """What went wrong, as the model should read it."""
        if self.timed_out:
            return "the program was stopped: it ran past the time limit"
        if self.returncode != 0:
            tail = program_traceback(self.stderr) or self.stdout.strip()
            return f"the program failed:\n{tail or f'exit status {self.returncode}'}"
        if self.output is None:
            return f"the program finished but wrote no {OUTPUT_NAME}"
        return ""


def program_traceback(stderr: str) -> str:
    """stderr without the frames of the sandbox's own bootstrap (runpy, sandbox_boot.py):
    the model should read its program's lines, not ours."""
    lines, skip = [], False
    for line in stderr.strip().splitlines():
        if line.startswith('  File "'):
            skip = BOOT.name in line or "/runpy.py" in line
        elif not line.startswith("    "):
            skip = False
        if not skip:
            lines.append(line)
    return "\n".join(lines)


def _child_limits(limits: Limits):
    def apply() -> None:
        memory = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        cpu = int(limits.timeout_s) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        size = limits.max_file_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _clean_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",  # numpy's thread pool would eat the process limit
        "OMP_NUM_THREADS": "1",
    }


def _command(work: Path, limits: Limits, sandbox: str) -> tuple[list[str], dict[str, str] | None]:
    """(argv, env for Popen) of the program's run: in the jail, or under the hook alone."""
    if sandbox == AUDIT_HOOK_ONLY:
        return [sys.executable, "-I", str(BOOT), PROGRAM], _clean_env(str(work))
    if sandbox != BUBBLEWRAP:
        raise ValueError(f"unknown sandbox {sandbox!r}")
    boot = f"/sandbox/{BOOT.name}"
    argv = [sys.executable, "-I", boot, PROGRAM, str(limits.max_processes)]
    uid = jail_uid()
    if uid is not None:
        argv.append(str(uid))
        os.chown(work, uid, uid)
    return bwrap_command(argv, work, {boot: BOOT}, _clean_env(WORK)), {}


def _read_cut(path: Path, limit: int) -> str:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[output cut]"


def run_program(
    code: str, input_workbook: Path, out_dir: Path, limits: Limits, sandbox: str = BUBBLEWRAP
) -> RunResult:
    """Run `code` with `input.xlsx` in a fresh directory; the produced `output.xlsx` is copied
    to `out_dir` (outside the sandbox) and the sandbox is removed."""
    with tempfile.TemporaryDirectory(prefix="skillopt-sheet-") as tmp:
        work, logs = Path(tmp) / "work", Path(tmp) / "logs"
        work.mkdir()
        logs.mkdir()
        shutil.copyfile(input_workbook, work / INPUT_NAME)
        (work / PROGRAM).write_text(code, encoding="utf-8")
        argv, env = _command(work, limits, sandbox)
        timed_out = False
        with (logs / "stdout").open("wb") as out, (logs / "stderr").open("wb") as err:
            popen = {
                "cwd": work,
                "env": env,
                "stdin": subprocess.DEVNULL,
                "stdout": out,
                "stderr": err,
                "preexec_fn": _child_limits(limits),  # limits must be set pre-exec
                "start_new_session": True,
            }
            if sandbox == BUBBLEWRAP:
                running = start_jailed(argv, **popen)
            else:
                running = Running(subprocess.Popen(argv, **popen))
            try:
                returncode: int | None = running.process.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                returncode = running.kill()
            finally:
                running.close()
        produced = work / OUTPUT_NAME
        output = None
        if produced.is_file() and not produced.is_symlink():
            out_dir.mkdir(parents=True, exist_ok=True)
            output = out_dir / OUTPUT_NAME
            shutil.copyfile(produced, output)
        return RunResult(
            returncode=returncode,
            stdout=_read_cut(logs / "stdout", limits.max_output_chars),
            stderr=_read_cut(logs / "stderr", limits.max_output_chars),
            timed_out=timed_out,
            output=output,
        )
