"""The exit codes of every `skillopt` command, in one place.

The faces exit with these and the documentation's exit-code reference is generated from
EXIT_CODES, so the meaning of a code is written once. Scripts (CI, cron, the MCP server)
rely on them: 3 in particular means "re-run the same command to continue".
"""

from __future__ import annotations

SUCCESS = 0
FAILED = 1
BAD_INPUT = 2
STOPPED = 3
INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    SUCCESS: "success",
    FAILED: "the work itself failed (a model or agent error that retries could not cure, "
    "a failed rollout); the input was fine",
    BAD_INPUT: "bad input: a config, file, argument or usage error, said in one line; "
    "nothing was changed",
    STOPPED: "stopped cleanly and resumable: a budget cap, an interrupt at a step boundary, or "
    "status `waiting` for handoff answers; re-run the same command to continue",
    INTERRUPTED: "interrupted by Ctrl-C (SIGINT) outside a run's clean stop",
}
