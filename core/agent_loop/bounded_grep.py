"""A regex search that cannot hang: Python's `re` backtracks, and a pattern such as
`(a*)*b` on a long line would never return, so the search runs in a child process
(grep_child.py) that is killed after a time limit. Shared by our workspace tools and the
officeqa tools, whose models write the patterns."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from core.agent_loop.refusal import ToolRefused

GREP_CHILD = Path(__file__).resolve().parent / "grep_child.py"


def check_pattern(pattern: str, *, ignore_case: bool = False) -> None:
    try:
        re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolRefused(f"bad pattern {pattern!r}: {exc}") from None


def bounded_grep(
    pattern: str,
    files: list[list[str]],
    *,
    limit: int,
    width: int,
    timeout_s: float,
    ignore_case: bool = False,
) -> str:
    """`name:line: text` for each matching line of `files` ([name, path] pairs), at most
    `limit` lines cut to `width`, or ToolRefused."""
    check_pattern(pattern, ignore_case=ignore_case)
    job = {
        "pattern": pattern,
        "files": files,
        "limit": limit,
        "width": width,
        "ignore_case": ignore_case,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", str(GREP_CHILD)],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        found = json.loads(done.stdout)
    except subprocess.TimeoutExpired:
        raise ToolRefused(
            f"the pattern {pattern[:80]!r} ran past {timeout_s:g}s and was stopped; "
            "simplify it (nested quantifiers such as (a*)* backtrack without end)"
        ) from None
    except ValueError:
        raise ToolRefused(f"the pattern {pattern[:80]!r} could not be searched") from None
    hits = [f"{name}:{number}: {line}" for name, number, line in found["hits"]]
    if found["more"]:
        return "\n".join(hits) + "\n[more matches; narrow the pattern]"
    return "\n".join(hits) if hits else f"no line matches {pattern!r}"
