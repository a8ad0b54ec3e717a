"""One embedded llama.cpp server for a whole pytest session, shared by every xdist worker.

Why: every `skillopt train` a test ran used to start a server of its own, so the tests of
the embedded model all ran on one worker (two servers would fight over the two cores) and
that queue was the suite's longest chain. Now the first `embedded` test starts one server,
in a process of its own, and every embedded test on any worker attaches to it through
SKILLOPT_EMBEDDED_URL, which core/models/local_server.py honours only when the server
serves what the run would have started itself (weights, chat template, slots, context):
the tests see the same model configuration as before, only started once.

The session folder (the basetemp of the pytest process that owns the session, which every
worker's basetemp sits in) holds:
- `embedded.lock`: held while a worker looks for the server or starts it, so one starts;
- `embedded.url`: the server's address and its process id, written once it answers,
  removed by the server process as it exits;
- `embedded.log`: that process's output, ending with its CPU time.

Lifetime: the server process watches the session's owner (the xdist controller, or pytest
itself without workers) and exits when it is gone, so a killed session leaves nothing
running; the owner stops it at session end (`stop_server`). It lives in no worker, so a
crashed worker takes nothing with it, and a server found dead is started again.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from core.config import LocalModelConfig
from core.file_lock import FileLock
from core.models.local_server import ATTACH_ENV, LocalModelServer

ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE, URL_FILE, LOG_FILE = "embedded.lock", "embedded.url", "embedded.log"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 45.0
WATCH_S = 0.5
# The configuration every run of the suite's embedded configs asks for (slots, context)
# and so attaches to. One thread to write replies and one to read prompts: beside two busy
# test workers the cores are oversubscribed, and llama.cpp's threads spin-wait for each
# other at every step (core/config.py: 128 tokens in 113.5 s with 2 threads, 5.1 s with 1;
# here a quickstart run cost its server 35 s of CPU with 2 prompt threads at load 13, 4 s
# with 1 at load 11). Threads change how fast it answers, not what: 12 capitals prompts
# gave the same greedy replies with 1/1 and 2/2 threads.
SESSION_CONFIG = LocalModelConfig(threads=1, batch_threads=1)


def session_folder(basetemp: Path) -> Path:
    """The folder the session's processes share: a worker's basetemp sits in the
    controller's (xdist names it popen-gwN); without workers it is the basetemp itself."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp


def session_owner() -> int:
    """The process whose end ends the session: a worker's parent is the xdist controller."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def server_url(folder: Path, owner: int) -> str:
    """The address of the session's server (`.../v1`), started here if none answers."""
    lock = FileLock(folder / LOCK_FILE)
    if not lock.acquire(timeout=START_TIMEOUT_S):
        raise RuntimeError(f"{folder / LOCK_FILE} stayed locked for {START_TIMEOUT_S:g} s")
    try:
        running = _answering(folder)
        return running if running is not None else _start(folder, owner)
    finally:
        lock.release()


def stop_server(folder: Path) -> None:
    """Stop the session's server, if one was started; waits for it to be gone."""
    found = _read(folder)
    if found is None:
        return
    _, pid = found
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while (folder / URL_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if (folder / URL_FILE).exists():  # hung in the native destructor: nothing left to save
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        (folder / URL_FILE).unlink(missing_ok=True)


def cpu_line(folder: Path) -> str | None:
    """The server process's closing line (its user and system CPU seconds), once stopped."""
    log = folder / LOG_FILE
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return next((ln for ln in reversed(lines) if ln.startswith("embedded session server")), None)


def _read(folder: Path) -> tuple[str, int] | None:
    try:
        url, pid = (folder / URL_FILE).read_text().split()
        return url, int(pid)
    except (OSError, ValueError):
        return None


def _answering(folder: Path) -> str | None:
    found = _read(folder)
    if found is None:
        return None
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open(found[0].removesuffix("/v1") + "/health", timeout=5) as response:
            return found[0] if response.status == 200 else None
    except (OSError, ValueError):
        return None


def _start(folder: Path, owner: int) -> str:
    (folder / URL_FILE).unlink(missing_ok=True)  # a dead server's
    env = {k: v for k, v in os.environ.items() if k != ATTACH_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    argv = [sys.executable, "-m", "tests.support.embedded_session", str(folder), str(owner)]
    with open(folder / LOG_FILE, "ab") as log:
        # Its own session: a Ctrl-C meant for pytest reaches it through the owner's end.
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        url = _answering(folder)
        if url is not None:
            return url
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    else:
        proc.kill()
    tail = (folder / LOG_FILE).read_text(errors="replace")[-2000:]
    raise RuntimeError(f"the session's embedded server did not start:\n{tail}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serve(folder: Path, owner: int) -> None:
    """The server process: serve until the owner stops us (SIGTERM) or is gone."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    server = LocalModelServer(SESSION_CONFIG)
    url = server.start()
    written = folder / f"{URL_FILE}.{os.getpid()}"
    written.write_text(f"{url} {os.getpid()}\n")
    written.replace(folder / URL_FILE)  # whole or absent: readers never see half of it
    try:
        while not stopping.wait(WATCH_S) and _alive(owner):
            pass
    finally:
        server.stop()
        used = resource.getrusage(resource.RUSAGE_SELF)
        print(
            f"embedded session server {os.getpid()}: {used.ru_utime:.1f} s user, "
            f"{used.ru_stime:.1f} s system CPU",
            flush=True,
        )
        (folder / URL_FILE).unlink(missing_ok=True)  # last: the owner waits for this


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("owner", type=int)
    args = parser.parse_args()
    serve(args.folder, args.owner)
    os._exit(0)  # a server thread left behind by a hung stop must not hold the exit
