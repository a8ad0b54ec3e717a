"""The verification commands a person's session ran (`make test`, `pytest …`, `npm test`,
a linter: sleep/mine/evidence.py mines them as `command` checks), run again in the replay
workspace after the agent finished: the person's own test of the work, on the agent's work.

Each command runs in the bubblewrap jail over the workspace (sleep/night/replay_shell.py: the
workspace read-write, the system's binaries read-only, no home, no network), with the
person's own Python toolchain lent read-only (sleep/night/check_toolchain.py: the project's venv
or the interpreter their PATH picks, as the host resolves it), within its time limit
(`sleep.check_timeout_s`, 120 s by default), its output's tail kept (clipped, secrets
redacted). Without a working jail no command runs: each result is `not-run` and says why.
A check is never run unconfined: it is a command mined from a transcript, run over files
a model just wrote.

How the results count (sleep/night/replay_env.py): the judge sees them beside the rubric, the
reference, the final message and the diff; a check that failed or timed out decides the
item (score 0, whatever the judge said: the person's own verification fails on this
work); passing checks are evidence for the judge, and decide the item (a pass) only when
the task has no rubric and no reference to judge by. A `not-run` check counts for nothing.

A command whose program the jail still does not have (the shell's exit 127 and "<name>:
not found": found nowhere on this machine, or no Python toolchain, such as node from nvm)
is `not-run`, not `fail`, with the lookup's reason: it says nothing about the work, and as
a failure it would score every replay 0, the current skill's and each candidate's alike,
so no night could ever gate on it. A missing program named by a path (`./run-tests.sh`)
still fails: the reply may have removed it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from sleep.night import replay_shell
from sleep.night.check_toolchain import toolchain
from sleep.redact import Redactor

DEFAULT_CHECK_TIMEOUT_S = 120.0
MAX_TAIL_CHARS = 2000  # of each check's output, for the judge and the night's records
CheckStatus = Literal["pass", "fail", "timeout", "not-run"]
FAILING: tuple[CheckStatus, ...] = ("fail", "timeout")
_REDACTOR = Redactor()


@dataclass(frozen=True)
class CheckResult:
    """One command check after a replay: `pass` (exit 0), `fail`, `timeout` or `not-run`
    (with the reason), the exit code, and the end of its output."""

    command: str
    status: CheckStatus
    exit_code: int | None = None
    output: str = ""
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        return cls(**data)

    def line(self) -> str:
        """One line: the command and what became of it."""
        if self.status == "pass":
            return f"`{self.command}`: passed (exit 0)"
        if self.status == "fail":
            return f"`{self.command}`: FAILED (exit {self.exit_code})"
        if self.status == "timeout":
            return f"`{self.command}`: FAILED (stopped at its time limit)"
        return f"`{self.command}`: not run ({self.reason})"


def clip_tail(text: str, limit: int = MAX_TAIL_CHARS) -> str:
    """The end of a command's output, secrets redacted, marked when its start was cut."""
    text = _REDACTOR.redact(text).text.rstrip()
    if len(text) <= limit:
        return text
    return "[… output cut]\n" + text[-limit:]


# dash ("/bin/sh: 1: python: not found") and bash ("bash: line 1: python: command not
# found"): a program looked up on PATH, so its name has no slash.
_PROGRAM_NOT_FOUND = re.compile(r": ([^\s/:]+): (?:command )?not found\s*$", re.MULTILINE)
# make running a recipe line itself ("make: python: No such file or directory") or
# through the shell, which exits 127 ("make: *** [Makefile:2: test] Error 127"): make
# then exits 2.
_MAKE_NOT_FOUND = re.compile(
    r"^g?make(?:\[\d+\])?: ([^\s/:]+): (?:No such file or directory|Command not found)\s*$",
    re.MULTILINE,
)
_MAKE_ERROR_127 = re.compile(r"^g?make(?:\[\d+\])?: \*\*\* \[.*\] Error 127\s*$", re.MULTILINE)


def missing_program(exit_code: int | None, output: str) -> str:
    """The program a check could not start because the jail lacks it ("" when it ran):
    one the shell did not find (exit 127), or one a `make` recipe did not find."""
    if exit_code is None or exit_code == 0:
        return ""
    found = _MAKE_NOT_FOUND.search(output)
    if found:
        return found.group(1)
    if exit_code != 127 and not _MAKE_ERROR_127.search(output):
        return ""
    found = _PROGRAM_NOT_FOUND.search(output)
    return found.group(1) if found else ""


def not_run(commands: list[str], reason: str) -> list[CheckResult]:
    return [CheckResult(c, "not-run", reason=reason) for c in commands]


# Modes whose replay runs the checks in its workspace. A handoff-workspace runner is
# handed them too (as `AgentTask.check`, like a coding agent); until it calls them its
# results say `not-run`, so dry-run does not promise them.
MODES_WITH_WORKSPACE = ("agent", "tools", "handoff-workspace")


def planned_checks(
    checks: list[dict[str, Any]], mode: str, project: Path | None = None
) -> list[dict[str, Any]]:
    """`dry-run`'s checks (`{"kind", "value"}`), each `command` one with whether it will
    run tonight (`will_run`) and why not (`not_run_reason`): no workspace, no jail, or a
    program it starts that cannot be found for the jail in `project`."""
    out = []
    for check in checks:
        if check.get("kind") != "command":
            out.append(check)
            continue
        if mode not in MODES_WITH_WORKSPACE:
            reason = f"replayed as {mode}: no workspace to run it in"
        else:
            problem = replay_shell.jail_problem()
            reason = f"{problem}: checks never run outside the jail" if problem else ""
            reason = reason or "; ".join(
                toolchain(str(check.get("value", "")), project).missing.values()
            )
        out.append({**check, "will_run": not reason, "not_run_reason": reason})
    return out


def run_command_checks(
    root: Path,
    commands: list[str],
    timeout_s: float = DEFAULT_CHECK_TIMEOUT_S,
    project: Path | None = None,
) -> list[CheckResult]:
    """Run each command in a fresh jail over the workspace `root`, in order (each sees what
    the ones before it left, as in the session), with the programs it starts as the host
    finds them for `project` (the person's checkout, not the workspace)."""
    if not commands:
        return []
    shell, problem = replay_shell.jailed_shell(Path(root))
    if shell is None:
        return not_run(commands, f"{problem}: checks never run outside the jail")
    results = []
    for command in commands:
        lent = toolchain(command, project, makefile_in=Path(root))
        done = shell.run(command, timeout_s, tail=True, lent=lent)
        program = missing_program(done.status, done.output)
        if program:
            reason = lent.missing.get(program) or (
                f"`{program}` is not found in the jail, which has the system's programs and "
                "the person's Python toolchain only"
            )
            results.append(
                CheckResult(command, "not-run", done.status, clip_tail(done.output), reason)
            )
            continue
        if done.status is None:
            status: CheckStatus = "timeout"
        else:
            status = "pass" if done.status == 0 else "fail"
        reason = f"stopped after {timeout_s:g}s" if status == "timeout" else ""
        results.append(
            CheckResult(command, status, done.status, clip_tail(done.output), reason=reason)
        )
    return results


def checks_for(
    commands: list[str], timeout_s: float, project: Path | None = None
) -> Callable[[Path], Any]:
    """The `AgentTask.check` (or tools replay check) that runs `commands` in a workspace
    copied from `project`, with the person's toolchain for it."""
    return lambda workspace: run_command_checks(workspace, commands, timeout_s, project)


def results_of(checked: Any, commands: list[str]) -> list[CheckResult]:
    """The results a replay brought back; a runner that ran none (a mode that does not
    call the check) leaves them `not-run`, said so."""
    if not commands:
        return []
    if isinstance(checked, list) and all(isinstance(r, CheckResult) for r in checked):
        return checked
    return not_run(commands, "this replay mode returned no workspace to run checks in")


def judge_section(results: list[CheckResult]) -> str:
    """The checks as the judge reads them ('' when the task has none: the prompt is then
    as before, so earlier nights' cached verdicts still apply)."""
    if not results:
        return ""
    lines = [
        "## Verification commands",
        "Commands the user ran in their own session to verify this work, run again on the "
        "reply's workspace after it finished. A failed one makes this item a hard fail "
        "(score 0) whatever you decide; say what went wrong.",
    ]
    for result in results:
        lines.append(f"- {result.line()}")
        if result.output:
            lines.append("  Output (end):\n  " + result.output.replace("\n", "\n  "))
    return "\n".join(lines) + "\n\n"


def trajectory_message(results: list[CheckResult]) -> dict[str, Any]:
    """The checks as a step of the trajectory (after the diff), for the optimizer and the
    run's records: a readable text and the results themselves."""
    text = "\n".join(
        r.line() + (f"\n{r.output}" if r.output and r.status != "pass" else "") for r in results
    )
    return {"role": "checks", "content": text, "checks": [r.to_dict() for r in results]}


@dataclass(frozen=True)
class Decision:
    """What the command checks make of an item's score: None leaves the judge's."""

    soft: float | None
    note: str


def decide(results: list[CheckResult], judged_by_evidence: bool) -> Decision:
    """A failed or timed-out check: 0. All that ran passed, none were left unrun, and the
    task has no rubric or reference: 1. Otherwise the judge's score stands. The note says
    "command checks", apart from the mined checks on the reply, diff and commands
    (counted beside it), so that "mined checks 1/1 passed" next to a failed command does
    not read as a contradiction."""
    failing = [r for r in results if r.status in FAILING]
    ran = [r for r in results if r.status == "pass"]
    counted = f"command checks {len(ran)}/{len(results)} passed"
    if failing:
        return Decision(0.0, f"{counted}; hard fail: " + "; ".join(r.line() for r in failing))
    if ran and len(ran) == len(results) and not judged_by_evidence:
        return Decision(1.0, f"{counted} (no rubric or reference)")
    if results:
        return Decision(None, f"{counted}: " + "; ".join(r.line() for r in results))
    return Decision(None, "")


def log_entries(path: Path | None) -> list[dict[str, Any]]:
    """The JSON objects of a night's checks log, a line that is not one skipped (a run
    killed mid-write leaves a partial last line); no log, or an unreadable one: none."""
    if path is None:
        return []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def tally(path: Path) -> dict[str, int]:
    """How many command-check runs a night's log holds per status (for status and the TUI)."""
    counts: dict[str, int] = {}
    for entry in log_entries(path):
        for result in entry.get("checks", []):
            status = result.get("status") if isinstance(result, dict) else None
            if isinstance(status, str):
                counts[status] = counts.get(status, 0) + 1
    return counts
