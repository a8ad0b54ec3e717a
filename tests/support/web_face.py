"""Helpers for the web-face tests: `skillopt tui --web` as a real server process on a free
port (port 0, so xdist workers never collide), the process tree under it (from /proc), and
the browser's terminal read as text through xterm's own buffer API."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.tui_app import PATIENCE

REPO = Path(__file__).resolve().parents[2]
URL_LINE = re.compile(r"(http://\S+:(\d+))/\?token=(\S+)")
# the system's browser (Debian: apt-get install chromium); SKILLOPT_CHROMIUM names another
CHROMIUM = os.environ.get("SKILLOPT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

# Before the page's script runs: keep each xterm Terminal the page makes (textual.js stores
# it as `this.terminal`) in window.__terms, so a test reads the screen the user sees.
TERMINAL_HOOK = """
window.__terms = [];
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  set(value) {
    Object.defineProperty(this, 'terminal', {value, writable: true, configurable: true});
    if (value && value.buffer) window.__terms.push(value);
  },
});
"""
SCREEN_JS = """() => {
  const t = window.__terms[0];
  if (!t) return '';
  const b = t.buffer.active, rows = [];
  for (let i = 0; i < t.rows; i++) {
    const line = b.getLine(b.viewportY + i);
    rows.push(line ? line.translateToString(true) : '');
  }
  return rows.join('\\n');
}"""


def skillopt_env(**extra: str) -> dict[str, str]:
    """This checkout's code (the shared venv's `skillopt` may be another worktree's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLOPT_WEB")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def skillopt(*args: str, env: dict[str, str] | None = None, timeout: float = 60):
    return subprocess.run(
        [sys.executable, "-m", "skillopt_tui", *args],
        capture_output=True,
        text=True,
        env=env or skillopt_env(),
        timeout=timeout,
        cwd=REPO,
    )


@dataclass
class WebServer:
    process: subprocess.Popen
    base: str  # http://127.0.0.1:PORT
    token: str
    log: Path  # the server's stdout and stderr, everything it printed

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def start_server(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> WebServer:
    """`skillopt tui --web --port 0 ARGS`, once it has printed its URL (stdout and stderr
    both go to one log, so a test sees everything it ever printed)."""
    log = tmp_path / f"web-server-{time.monotonic_ns()}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillopt_tui", "tui", "--web", "--port", "0", *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env or skillopt_env(),
            cwd=tmp_path,
        )
    found = None

    def printed_url() -> bool:
        nonlocal found
        found = URL_LINE.search(log.read_text(errors="replace"))
        return found is not None or process.poll() is not None

    wait_for(printed_url, "the server prints its URL")
    if found is None:
        process.kill()
        process.wait()
        raise AssertionError(f"no URL from the server: {log.read_text()!r}")
    return WebServer(process, found.group(1), found.group(3), log)


def children(pid: int, every: bool = True) -> list[int]:
    """The live descendants of `pid` (zombies excluded), read from /proc; with every=False
    its children only (for the server: one app process per session, without the git
    processes those start)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        if every:
            frontier += kids
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition, what: str, limit: float = 10.0) -> None:
    """Polls `condition` for at most limit * PATIENCE seconds (a bound, not a measure)."""
    deadline = time.monotonic() + limit * PATIENCE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


class Screen:
    """One browser page on the web face: keys in, the terminal's text out."""

    def __init__(self, page) -> None:
        self.page = page
        self.outside: list[str] = []  # addresses the page asked for beyond the server

    def open(self, url: str) -> Screen:
        self.page.add_init_script(TERMINAL_HOOK)
        # nothing here may reach the network; what the page asks for is kept to be checked
        self.page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), self._refuse_outside)
        self.page.goto(url)
        return self

    def _refuse_outside(self, route) -> None:
        self.outside.append(route.request.url)
        route.abort()

    def text(self) -> str:
        return self.page.evaluate(SCREEN_JS)

    def wait_for(self, text: str, limit: float = 20.0) -> str:
        self.page.wait_for_function(
            f"(text) => ({SCREEN_JS})().includes(text)", arg=text, timeout=limit * PATIENCE * 1000
        )
        return self.text()

    def keys(self, *keys: str) -> None:
        # keys go to xterm's input element; focused without a click, which the app would
        # take as a mouse click on whatever is under the pointer
        self.page.focus(".xterm-helper-textarea")
        for key in keys:
            self.page.keyboard.press(key)
