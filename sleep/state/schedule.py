"""Installing the nightly run as one cron line, and removing exactly that line.

The line carries a marker comment naming the state directory, so `unschedule` removes our
line and nothing else, and scheduling twice replaces rather than duplicates. The crontab
is read and written with `crontab -l` / `crontab -`, or as a plain file (`--crontab-file`,
for tests and for systems whose cron reads a file). Where the line went is recorded in the
state directory (`schedule.json`), so `status` and `unschedule` look in the same place.

Cron runs the line with a bare environment: the transcript roots in use when scheduling
($CLAUDE_CONFIG_DIR, $CODEX_HOME or the flags) are written into the line, or a cron night
would read empty defaults. In a cron command `%` means newline, so it is escaped, and a
path holding a newline (which would split the line in two) is refused.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from pathlib import Path

from core.atomic import write_json, write_text
from core.errors import UserError, unreadable

MARKER = "# skillopt-sleep:"
RECORD_FILE = "schedule.json"
_OUR_COMMAND = " sleep run --state-dir "


def marker(state_dir: Path) -> str:
    digest = hashlib.sha256(str(Path(state_dir).absolute()).encode()).hexdigest()[:10]
    return f"{MARKER}{digest}"


def cron_line(
    *,
    at: str,
    skillopt: str,
    state_dir: Path,
    log: Path,
    claude_home: str | None = None,
    codex_home: str | None = None,
    more_homes: dict[str, str] | None = None,
) -> str:
    """`more_homes`: the other agents' homes by flag (`--pi-home`: value), as resolved now."""
    hour, minute = parse_time(at)
    args = [skillopt, "sleep", "run", "--state-dir", str(Path(state_dir).absolute())]
    if claude_home:
        args += ["--claude-home", claude_home]
    if codex_home:
        args += ["--codex-home", codex_home]
    for flag, value in (more_homes or {}).items():
        if value:
            args += [flag, value]
    for arg in [*args, str(log)]:
        if "\n" in arg or "\r" in arg:
            raise UserError(
                f"{arg!r}: a path with a line break cannot go into a cron line; "
                "use a --state-dir (and homes) without one"
            )
        if not arg.isprintable() or _not_utf8(arg):
            raise UserError(
                f"{arg!r}: a path that is not printable UTF-8 text cannot go into a cron line; "
                "use a --state-dir (and homes) without such characters"
            )
    command = " ".join(shlex.quote(a) for a in args)
    command = f"{command} >> {shlex.quote(str(log))} 2>&1".replace("%", "\\%")
    return f"{minute} {hour} * * * {command} {marker(state_dir)}"


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


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
        return _read_file(crontab_file)
    try:
        out = subprocess.run(["crontab", "-l"], capture_output=True, check=False)
    except FileNotFoundError:
        raise UserError(
            "crontab is not installed; install cron, or add the line shown by "
            "`skillopt sleep schedule --print` to your scheduler yourself"
        ) from None
    stderr = out.stderr.decode("utf-8", "replace")
    if out.returncode != 0 and "no crontab" not in stderr.lower():
        raise UserError(f"crontab -l failed: {' '.join(stderr.split())[:200]}")
    try:
        return out.stdout.decode("utf-8") if out.returncode == 0 else ""
    except UnicodeDecodeError:
        raise UserError(
            "crontab -l: the crontab is not UTF-8 text; fix it with `crontab -e` first"
        ) from None


def _read_file(path: Path) -> str:
    if not path.exists():
        return ""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--crontab-file {unreadable(path, exc)}") from None


def write_crontab(text: str, crontab_file: Path | None) -> None:
    if crontab_file is not None:
        try:
            write_text(crontab_file, text)
        except OSError as exc:
            raise UserError(
                f"--crontab-file {crontab_file}: cannot write ({exc.strerror})"
            ) from None
        return
    out = subprocess.run(
        ["crontab", "-"], input=text.encode("utf-8"), capture_output=True, check=False
    )
    if out.returncode != 0:
        stderr = out.stderr.decode("utf-8", "replace")
        raise UserError(f"crontab - failed: {' '.join(stderr.split())[:200]}")


def with_line(crontab: str, line: str, state_dir: Path) -> str:
    kept, _removed = _without(_lines(crontab), state_dir)
    return "\n".join([*kept, line]) + "\n"


def without_line(crontab: str, state_dir: Path) -> tuple[str, int]:
    kept, removed = _without(_lines(crontab), state_dir)
    return ("\n".join(kept) + "\n" if kept else ""), removed


def _lines(crontab: str) -> list[str]:
    # Cron splits at "\n" only; str.splitlines would also split (and so rewrite) a user's
    # line at form feeds, "\x1c" or U+2028.
    lines = crontab.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _without(lines: list[str], state_dir: Path) -> tuple[list[str], int]:
    """The lines without ours. A line of ours that an older version let the state
    directory's line breaks split (in `--state-dir` and in the log path) is removed whole:
    the marked tail and the pieces back to the head that starts it, never half."""
    mark = marker(state_dir)
    reach = 3 * str(Path(state_dir).absolute()).count("\n")
    kept: list[str] = []
    removed = 0
    for entry in lines:
        if mark not in entry:
            kept.append(entry)
            continue
        removed += 1
        if _OUR_COMMAND in entry:
            continue
        for head in range(len(kept) - 1, max(len(kept) - reach, 0) - 1, -1):
            if MARKER in kept[head]:
                break
            if _OUR_COMMAND in kept[head]:
                del kept[head:]
                break
    return kept, removed


# -- where the line was installed ----------------------------------------------------------
def record_installed(state_dir: Path, crontab_file: Path | None) -> None:
    where = str(crontab_file.absolute()) if crontab_file is not None else None
    write_json(Path(state_dir) / RECORD_FILE, {"crontab_file": where})


def forget_installed(state_dir: Path) -> None:
    (Path(state_dir) / RECORD_FILE).unlink(missing_ok=True)


def installed_crontab_file(state_dir: Path) -> Path | None:
    """The crontab file `schedule --crontab-file` installed into, or None for the user's
    crontab (also when nothing was recorded)."""
    try:
        data = json.loads((Path(state_dir) / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    where = data.get("crontab_file") if isinstance(data, dict) else None
    return Path(where) if isinstance(where, str) and where else None


def scheduled_line(state_dir: Path, crontab_text: str | None = None) -> str | None:
    """Our line where it was installed, or None (no cron here is not an error of status)."""
    try:
        if crontab_text is None:
            crontab_text = read_crontab(installed_crontab_file(state_dir))
    except (UserError, OSError):
        return None
    mark = marker(state_dir)
    return next((entry for entry in _lines(crontab_text) if mark in entry), None)
