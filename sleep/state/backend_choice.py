"""Which backend `skillopt sleep init` suggests for nights, and why.

An API key in the environment → its backend; a coding-agent CLI on PATH that is logged in
→ that CLI (the person's own subscription, which is why init asks before recording it);
otherwise `handoff`, which spends nothing and writes prompt files for the person to
answer. A CLI that is installed but not logged in is not suggested: every night would
fail on it.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping

# binary → backend, and the CLI's own login check (its exit status and output)
AGENT_CLIS = (("claude", "claude_code"), ("codex", "codex"))
STATUS_COMMAND = {"claude": ("auth", "status"), "codex": ("login", "status")}


def agent_logged_in(binary: str, path: str) -> bool | None:
    """Asks the CLI at `path` whether it has a login; None when it cannot tell (an older
    CLI without the command, a hang): then the suggestion says so."""
    try:
        done = subprocess.run(
            [path, *STATUS_COMMAND[binary]],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if binary == "claude":  # JSON with "loggedIn", exit 0 either way
        try:
            return bool(json.loads(done.stdout)["loggedIn"])
        except (ValueError, KeyError, TypeError):
            return None
    if done.returncode == 0:
        return True
    return False if "not logged in" in (done.stdout + done.stderr).lower() else None


def suggest_backend(
    environ: Mapping[str, str],
    which: Callable[[str], str | None],
    logged_in: Callable[[str, str], bool | None] = agent_logged_in,
) -> tuple[str, str]:
    if environ.get("OPENAI_API_KEY"):
        return "openai", "OPENAI_API_KEY is set"
    if environ.get("ANTHROPIC_API_KEY"):
        return "anthropic", "ANTHROPIC_API_KEY is set"
    not_logged_in: list[str] = []
    for binary, backend in AGENT_CLIS:
        path = which(binary)
        if not path:
            continue
        status = logged_in(binary, path)
        if status is False:
            not_logged_in.append(binary)
            continue
        checked = "" if status else " (could not check its login)"
        return backend, f"found `{binary}`{checked}: nights would use your own {binary} login"
    if not_logged_in:
        names = " and ".join(f"`{b}`" for b in not_logged_in)
        return (
            "handoff",
            f"{names} found but not logged in (log in, then run init again to use it): "
            "prompts are written to files for you to answer",
        )
    return (
        "handoff",
        "no API key or agent CLI found: prompts are written to files for you to answer",
    )
