"""Running a generated Python program on a workbook, in a subprocess with limits.

Layers: a fresh temporary working directory holding only the input workbook and the
program; an environment with nothing of ours in it (no API keys, no HOME, a minimal PATH);
resource limits set in the child before it starts (address space, CPU seconds, size of any
file it writes, open files); a wall-clock timeout after which the whole process group is
killed; stdout/stderr captured to files and cut to `max_output_chars`; and the audit hook of
sandbox_boot.py (no writes outside the directory, no processes, no network).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

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


def _clean_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


def _read_cut(path: Path, limit: int) -> str:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + "\n[output cut]"


def run_program(code: str, input_workbook: Path, out_dir: Path, limits: Limits) -> RunResult:
    """Run `code` with `input.xlsx` in a fresh directory; the produced `output.xlsx` is copied
    to `out_dir` (outside the sandbox) and the sandbox is removed."""
    with tempfile.TemporaryDirectory(prefix="skillopt-sheet-") as tmp:
        work, logs = Path(tmp) / "work", Path(tmp) / "logs"
        work.mkdir()
        logs.mkdir()
        shutil.copyfile(input_workbook, work / INPUT_NAME)
        (work / PROGRAM).write_text(code, encoding="utf-8")
        timed_out = False
        with (logs / "stdout").open("wb") as out, (logs / "stderr").open("wb") as err:
            child = subprocess.Popen(
                [sys.executable, "-I", str(BOOT), PROGRAM],
                cwd=work,
                env=_clean_env(work),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                preexec_fn=_child_limits(limits),  # noqa: PLW1509 - limits must be set pre-exec
                start_new_session=True,
            )
            try:
                returncode: int | None = child.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(child.pid, signal.SIGKILL)
                returncode = child.wait()
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
