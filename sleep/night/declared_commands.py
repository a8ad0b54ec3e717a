"""The commands a handoff answerer says it ran, run again by the night in the jail.

Why: a `handoff-workspace` replay is done by the person's own agent, whose tool calls the
night never sees, so a `ran` check (`make test`) had nothing to read and said nothing.
The handoff prompt asks the answerer to end its reply with the commands it ran
(`DECLARE_HEADING`, one a line, or `none`). A declaration is a claim, not evidence: the
night runs each declared command again in the jail over the answered workspace (as a
`command` check runs, sleep/night/replay_checks.py) and records each with its exit code.
Only a declared command that passes there counts as ran for a `ran` check, so a claimed
`make test` that fails is not ran-and-passed. A reply with no declaration says nothing
(None), as before; `none` is a declaration of no commands.

Only the verification commands among them (tests, builds, linters:
sleep/mine/evidence.is_verification) are pass/fail evidence to the judge: a `grep` that
finds nothing exits 1, and showing it as FAILED told the judge a correct reply broke
something (issue 37). The others are shown as run, with their exit code, not judged.

The results travel in the outcome's events as one `declared_commands` event (what the
answerer's run showed), beside the coding agents' own events, which the night reads its
commands from as before (sleep/night/replay_evidence.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sleep.mine.evidence import is_verification
from sleep.night.replay_checks import CheckResult, run_command_checks

DECLARE_HEADING = "Commands run:"
EVENT = "declared_commands"
MAX_DECLARED = 20
MAX_DECLARED_CHARS = 500
DECLARE_INSTRUCTIONS = (
    f"End your final message with a line `{DECLARE_HEADING}` and under it each shell command",
    "you ran in the workspace, one a line, as you ran it (or `none`). The night runs each",
    "listed command again there and records its exit code: a command you list counts as",
    "run only when it passes again.",
)

_HEADING = re.compile(r"^[#* \t]*commands run[* \t]*:[* \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_BULLET = re.compile(r"^(?:[-*]\s+|\$\s+|\d+[.)]\s+)")


def declared_in(reply: str) -> list[str] | None:
    """The commands the reply's last declaration lists ([] for `none`), None without one."""
    found = list(_HEADING.finditer(reply))
    if not found:
        return None
    last = found[-1]
    lines = [last.group(1), *reply[last.end() :].splitlines()[1:]]
    commands: list[str] = []
    started = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("```"):
            continue
        if not line:
            if started:
                break
            continue
        started = True
        line = _BULLET.sub("", line).strip().strip("`").strip()
        if line.lower().rstrip(".") == "none":
            return []
        if line and len(commands) < MAX_DECLARED:
            commands.append(line[:MAX_DECLARED_CHARS])
    return commands


def rerun(
    reply: str, workspace: Path, timeout_s: float, project: Path | None
) -> list[CheckResult] | None:
    """The declared commands, each run again in a fresh jail over `workspace` (None: no
    declaration)."""
    declared = declared_in(reply)
    if declared is None:
        return None
    return run_command_checks(workspace, declared, timeout_s, project)


def declared_event(results: list[CheckResult]) -> dict[str, Any]:
    return {"type": EVENT, "results": [r.to_dict() for r in results]}


def declared_results(events: list[dict[str, Any]]) -> list[CheckResult] | None:
    """The re-run declared commands an outcome's events carry (None: none declared)."""
    for event in events:
        if event.get("type") == EVENT and isinstance(event.get("results"), list):
            return [CheckResult.from_dict(r) for r in event["results"] if isinstance(r, dict)]
    return None


def passed_commands(results: list[CheckResult] | None) -> list[str] | None:
    """What a `ran` check reads of a handoff replay: the declared commands that passed
    when run again (None: the answerer declared nothing, so nothing is known)."""
    return None if results is None else [r.command for r in results if r.status == "pass"]


def declared_section(results: list[CheckResult] | None) -> str:
    """The re-runs as the judge reads them ('' when nothing was declared)."""
    if results is None:
        return ""
    lines = [
        "## Commands the reply says it ran",
        "Run again by the night in the reply's workspace (its claim alone is not evidence):",
    ]
    lines += [f"- {declared_line(r)}" for r in results] or ["- (it declared none)"]
    return "\n".join(lines) + "\n\n"


def declared_line(result: CheckResult) -> str:
    """A re-run as the judge and the analysts read it: pass/fail for a verification
    command, "ran" with its exit code for anything else (a search's exit 1 is no failure)."""
    if is_verification(result.command) or result.status not in ("pass", "fail"):
        return result.line()
    return (
        f"`{result.command}`: ran (exit {result.exit_code}; not a verification command, "
        "so its exit code is no evidence either way)"
    )


def declared_message(results: list[CheckResult]) -> dict[str, Any]:
    """The re-runs as a step of the trajectory (the replay's evidence, with exit codes)."""
    text = "\n".join(declared_line(r) for r in results) or "(declared none)"
    return {"role": EVENT, "content": text, "checks": [r.to_dict() for r in results]}
