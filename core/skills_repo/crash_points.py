"""Fault injection for the crash-safety tests: `SKILLOPT_CRASH_AT=<point>` makes the
process die abruptly (exit 86, no cleanup) when it reaches that point, as kill -9 would.
`SKILLOPT_CRASH_TRACE=<file>` appends every point reached (as `name#N`) to the file, so
a test can kill an operation at each of its points in turn. `SKILLOPT_PAUSE_AT=<point>=<dir>`
holds the operation there (it writes `<dir>/paused`, then waits for `<dir>/resume`), so a
test can cut off whatever drives it (a browser session, a terminal) mid-write."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

CRASH_ENV = "SKILLOPT_CRASH_AT"
TRACE_ENV = "SKILLOPT_CRASH_TRACE"
PAUSE_ENV = "SKILLOPT_PAUSE_AT"
_seen: Counter[str] = Counter()


def crash_point(name: str) -> None:
    """Die here if asked to. A point reached several times can be named with `#N` for its
    N-th time (e.g. `write:before-rename:SKILL.md#2`, the second such write)."""
    wanted = os.environ.get(CRASH_ENV)
    trace = os.environ.get(TRACE_ENV)
    pause = os.environ.get(PAUSE_ENV)
    if not wanted and not trace and not pause:
        return
    _seen[name] += 1
    if trace:
        with open(trace, "a", encoding="utf-8") as handle:
            handle.write(f"{name}#{_seen[name]}\n")
    if wanted == name or wanted == f"{name}#{_seen[name]}":
        os._exit(86)
    if pause:
        point, _, folder = pause.partition("=")
        if point in (name, f"{name}#{_seen[name]}"):
            _hold(Path(folder))


def _hold(folder: Path) -> None:
    (folder / "paused").write_text(str(os.getpid()), encoding="utf-8")
    while not (folder / "resume").exists():
        time.sleep(0.05)
