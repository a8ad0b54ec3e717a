"""Long tools run `skillopt` as a child process with an argument list (never a shell
string): the night and training call `asyncio.run` and print progress, neither of which may
happen inside a stdio MCP server, whose stdout is the protocol. Each stderr line becomes a
progress notification; stdout is the command's `--json` result."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core import exit_codes

ProgressFn = Callable[[str], Awaitable[None]]
EXIT_STOPPED = (
    exit_codes.STOPPED
)  # the CLI's "stopped, resumable" (waiting for handoff answers, budget cap)
ERROR_PREFIX = "skillopt: error: "


class ToolFailure(Exception):
    """The command failed; the message is its one-line error."""


@dataclass
class CommandResult:
    exit_code: int
    data: Any
    stderr_tail: list[str]


def skillopt_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillopt_tui", *args]


async def run_skillopt(
    args: list[str], progress: ProgressFn, *, cwd: str | None = None
) -> CommandResult:
    """Run `skillopt ARGS` (which must include --json); exit 0 and 3 are results, others fail."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = await asyncio.create_subprocess_exec(
        *skillopt_argv(*args),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    tail: list[str] = []

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if not line:
                continue
            tail.append(line)
            del tail[:-20]
            await progress(line)

    try:
        stdout, _ = await asyncio.gather(process.stdout.read(), read_stderr())  # type: ignore[union-attr]
        code = await process.wait()
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if code not in (0, EXIT_STOPPED):
        raise ToolFailure(_one_line(tail, code))
    text = stdout.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = {"output": text}
    return CommandResult(code, data, tail)


def _one_line(tail: list[str], code: int) -> str:
    errors = [line for line in tail if line.startswith(ERROR_PREFIX)]
    if errors:
        return errors[-1][len(ERROR_PREFIX) :]
    if tail:
        return f"{tail[-1]} (exit {code})"
    return f"skillopt exited with {code} and no message"
