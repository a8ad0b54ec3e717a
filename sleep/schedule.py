"""Installing the nightly run as one cron line, and removing exactly that line.

The line carries a marker comment naming the state directory, so `unschedule` removes our
line and nothing else, and scheduling twice replaces rather than duplicates. The crontab
is read and written with `crontab -l` / `crontab -`, or as a plain file (`--crontab-file`,
for tests and for systems whose cron reads a file).
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from pathlib import Path

from core.atomic import write_text
from core.errors import UserError

MARKER = "# skillopt-sleep:"


def marker(state_dir: Path) -> str:
    digest = hashlib.sha256(str(Path(state_dir).absolute()).encode()).hexdigest()[:10]
    return f"{MARKER}{digest}"


def cron_line(*, at: str, skillopt: str, state_dir: Path, project: Path | None, log: Path) -> str:
    hour, minute = parse_time(at)
    args = [skillopt, "sleep", "run", "--state-dir", str(Path(state_dir).absolute())]
    if project is not None:
        args += ["--project", str(Path(project).absolute())]
    command = " ".join(shlex.quote(a) for a in args)
    return f"{minute} {hour} * * * {command} >> {shlex.quote(str(log))} 2>&1 {marker(state_dir)}"


def parse_time(at: str) -> tuple[int, int]:
    try:
        hour_text, minute_text = at.split(":")
        hour, minute = int(hour_text), int(minute_text)
    except ValueError:
        raise UserError(f"--at {at!r}: give the time as HH:MM, e.g. 03:30") from None
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise UserError(f"--at {at!r}: hour 0-23 and minute 0-59")
    return hour, minute


def read_crontab(crontab_file: Path | None) -> str:
    if crontab_file is not None:
        return crontab_file.read_text(encoding="utf-8") if crontab_file.exists() else ""
    try:
        out = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise UserError(
            "crontab is not installed; install cron, or add the line shown by "
            "`skillopt sleep schedule --print` to your scheduler yourself"
        ) from None
    if out.returncode != 0 and "no crontab" not in out.stderr.lower():
        raise UserError(f"crontab -l failed: {' '.join(out.stderr.split())[:200]}")
    return out.stdout if out.returncode == 0 else ""


def write_crontab(text: str, crontab_file: Path | None) -> None:
    if crontab_file is not None:
        write_text(crontab_file, text)
        return
    out = subprocess.run(["crontab", "-"], input=text, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise UserError(f"crontab - failed: {' '.join(out.stderr.split())[:200]}")


def with_line(crontab: str, line: str, state_dir: Path) -> str:
    kept = [entry for entry in crontab.splitlines() if marker(state_dir) not in entry]
    return "\n".join([*kept, line]) + "\n"


def without_line(crontab: str, state_dir: Path) -> tuple[str, int]:
    lines = crontab.splitlines()
    kept = [entry for entry in lines if marker(state_dir) not in entry]
    removed = len(lines) - len(kept)
    return ("\n".join(kept) + "\n" if kept else ""), removed
