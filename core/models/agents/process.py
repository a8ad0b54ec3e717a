"""Running a coding-agent CLI (`claude`, `codex`) as one child process, safely.

What every agent call shares, whichever CLI:
- the binary is found on PATH, then in the project's `.tools/agents/` (where `make agents`
  installs the pinned versions); a missing binary is one line naming the install command;
- each call gets a private, temporary HOME (and CLAUDE_CONFIG_DIR / CODEX_HOME inside it)
  and a minimal environment: the user's own config, history and keys are never read or
  written, and the CLI's transcripts vanish with the call;
- the process runs in its own process group, under a subreaper (reaper.py), so a
  timeout (or a cancelled call) kills the agent *and* every tool it started, and when the
  agent ends nothing it started is left running, not even a tool that called setsid;
- the ids of the sessions we start are appended to `agent-sessions.jsonl` in the state
  directory (`$SKILLOPT_STATE_DIR`, else `$XDG_STATE_HOME/skillopt`, else
  `~/.local/state/skillopt`), so Sleep never learns from our own automation sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.models.types import BadRequestError, TransientError

PROJECT_ROOT = Path(__file__).resolve().parents[3]
AGENTS_BIN = PROJECT_ROOT / ".tools" / "agents" / "node_modules" / ".bin"
REAPER = Path(__file__).with_name("reaper.py")
INSTALL = {
    "claude": "@anthropic-ai/claude-code@2.1.328",
    "codex": "@openai/codex@0.169.0",
    "pi": "@mariozechner/pi-coding-agent@0.73.1",
    "opencode": "opencode-ai@1.18.33",
    "copilot": "@github/copilot@1.0.102",
}
SESSIONS_FILE = "agent-sessions.jsonl"
# Variables a CLI needs to run at all; everything else of the user's environment stays out.
_PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SSL_CERT_FILE")
_KILL_GRACE_S = 2.0


class AgentMissing(BadRequestError):
    """The CLI is not installed: never retried."""


class AgentTimedOut(TransientError):
    """The agent did not finish in time; its process group was killed."""


def find_binary(program: str, configured: str | None, *, setting: str) -> Path:
    """The configured binary (a path, or a name looked up on PATH), else `program` on PATH,
    else the project-local install."""
    if configured:
        path = Path(configured).expanduser()
        found = str(path) if path.is_file() else shutil.which(configured)
        if found and os.access(found, os.X_OK):
            # Absolute: a path relative to this process's cwd means nothing to the agent's
            # own cwd (its workspace) or to a Ray worker.
            return Path(os.path.abspath(found))
        raise AgentMissing(
            f"{setting} names {configured!r}, which is not an executable file or a command "
            f"on PATH; fix the path, or remove it to use {program} from PATH or .tools/agents/"
        )
    found = shutil.which(program)
    if found:
        return Path(found)
    local = AGENTS_BIN / program
    if local.is_file() and os.access(local, os.X_OK):
        return local
    raise AgentMissing(
        f"{program} is not installed (not on PATH, not in .tools/agents/); install it with "
        f"`make agents` or `npm install --prefix .tools/agents {INSTALL[program]}`"
    )


def base_environment(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: a few harmless variables of ours, HOME set to `home`."""
    source = os.environ if environ is None else environ
    env = {key: source[key] for key in _PASSED_THROUGH if key in source}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_STATE_HOME"] = str(home / ".local" / "state")
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    # Codex refuses to make its sandbox helper (codex-linux-sandbox) under the temp dir,
    # and our HOME is under /tmp: with a system bubblewrap every shell command then fails
    # with "bwrap: execvp codex-linux-sandbox". A temp dir of its own inside HOME lifts it.
    env["TMPDIR"] = str(home / "tmp")
    return env


@contextlib.contextmanager
def private_home(prefix: str):
    """A temporary HOME for one call, removed afterwards with every process still running
    from it (see end_stragglers)."""
    home = Path(tempfile.mkdtemp(prefix=f"skillopt-{prefix}-home-"))
    (home / "tmp").mkdir()  # the child's TMPDIR (base_environment)
    try:
        yield home
    finally:
        end_stragglers(home)
        shutil.rmtree(home, ignore_errors=True)


def end_stragglers(home: Path) -> list[int]:
    """Kill the processes whose command line names `home`; returns their pids.

    Why: killing the CLI's process group does not reach what it started in a session of
    its own. Codex runs its sandbox helper as `bwrap --new-session … <home>/.codex/tmp/…`,
    and one was seen outliving its run (parent gone, waiting forever). Every such process
    names the private home, which is unique to the call, so nothing else can match.
    Linux only (/proc); elsewhere nothing is done."""
    needle = str(home).encode()
    ended: list[int] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            pid = int(entry.name)
            if pid != os.getpid() and needle in (entry / "cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
                ended.append(pid)
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return ended


@dataclass(frozen=True)
class ProcessResult:
    returncode: int
    stdout: str
    stderr: str
    duration_s: float


async def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    what: str,
    stdin: str | None = None,
) -> ProcessResult:
    """Run `argv` to completion, `stdin` written to it (else stdin is closed: a CLI that
    waits for input must never hang us). On timeout, or if the awaiting task is cancelled,
    the whole process group is killed before this returns or raises."""
    started = time.monotonic()
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        raise AgentMissing(f"cannot start {argv[0]} (not found); reinstall it with `make agents`")
    try:
        process = await asyncio.create_subprocess_exec(
            *reaped(argv),
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: killed as one
        )
    except OSError as exc:
        raise AgentMissing(
            f"cannot start {argv[0]} ({exc.strerror}); reinstall it with `make agents`"
        ) from None
    try:
        async with asyncio.timeout(timeout_s):
            data = stdin.encode("utf-8") if stdin is not None else None
            out, err = await process.communicate(data)
    except TimeoutError:
        await kill_group(process)
        raise AgentTimedOut(
            f"{what} did not finish within {timeout_s:g}s; its process group was killed "
            "(raise timeout_s if the task needs longer)"
        ) from None
    except BaseException:
        await kill_group(process)
        raise
    return ProcessResult(
        returncode=process.returncode if process.returncode is not None else -1,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        duration_s=time.monotonic() - started,
    )


def reaped(argv: list[str]) -> list[str]:
    """`argv` run under reaper.py (Linux): when the CLI ends, or its group is sent
    SIGTERM, every process below it is killed, setsid-ed daemons included."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-I", str(REAPER), *argv]


async def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group, SIGKILL whatever is left after a short grace."""
    pgid = process.pid  # start_new_session: the group id is the leader's pid
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        try:
            async with asyncio.timeout(_KILL_GRACE_S):
                await process.wait()
        except TimeoutError:
            continue
        if sig == signal.SIGTERM:
            # The leader is gone; tools it started may linger in the group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        return


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("SKILLOPT_STATE_DIR"):
        return Path(env["SKILLOPT_STATE_DIR"]).expanduser()
    xdg = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "skillopt"


def record_session(agent: str, session_id: str, cwd: Path, *, purpose: str) -> None:
    """Append one session we started to the state directory's sessions file. Best effort:
    losing this record must not fail the call that already ran."""
    if not session_id:
        return
    folder = state_dir()
    row = {
        "agent": agent,
        "session_id": session_id,
        "cwd": str(cwd),
        "purpose": purpose,  # "chat" | "agent"
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    line = (json.dumps(row) + "\n").encode()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # One write() of one short line with O_APPEND: concurrent calls never interleave.
        fd = os.open(folder / SESSIONS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:
        pass


def recorded_sessions(environ: Mapping[str, str] | None = None) -> set[str]:
    """Ids of every session this tool started (for Sleep's harvest to skip)."""
    path = state_dir(environ) / SESSIONS_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    ids = set()
    for line in lines:
        with contextlib.suppress(ValueError, AttributeError):
            ids.add(str(json.loads(line).get("session_id") or ""))
    ids.discard("")
    return ids
