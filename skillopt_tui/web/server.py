"""The web face's server: textual-serve's routes and per-session app processes, with our
access checks in front (access.TokenGate), an access log that never shows query strings,
and a shutdown that ends every app process it started.

textual-serve (pinned in the `web` extra) gives the page, its static files and AppService,
which runs one `skillopt tui` process per websocket and pipes the terminal both ways. We
override what must differ: the page is our own (textual-serve's loads a web font from
Google), its URLs come from the request (so a remote browser gets its own address back,
and port 0 works), the websocket handler remembers each session so SIGTERM can end them,
and serving is our own loop (aiohttp's default access log prints the request line, token
and all).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from skillopt_tui.web.access import WebUsageError
from skillopt_tui.web.gate import TokenGate
from skillopt_tui.web.session import SERVER_PID_ENV

log = logging.getLogger("skillopt.web")

QUIT_WAIT = 5.0  # seconds an app process gets to quit when asked, before SIGTERM
KILL_WAIT = 3.0  # then seconds after SIGTERM, before SIGKILL
TEMPLATES = Path(__file__).parent / "templates"  # our page: nothing from outside addresses


FULL_PAGE = """<!doctype html>
<title>SkillOpt: all sessions in use</title>
<p>This SkillOpt web face already serves {n} browser session{s}, its limit.
Close a SkillOpt tab, then reload this page (the server's owner can raise the limit
with <code>--max-sessions</code>).</p>
"""


class PathOnlyAccessLog(AbstractAccessLogger):
    """One line per request, the path without its query string (where a token would be)."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info("%s %s %s", request.method, request.path, response.status)


class QuietBadRequests(logging.Filter):
    """aiohttp answers a request it cannot parse (a duplicate Host header, a malformed
    line) with 400, then logs the parser's traceback: the 400 is the whole story (the
    access log shows it), so that record is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, HttpProcessingError)


def app_command(tui_args: list[str]) -> str:
    """The shell command each session runs: this interpreter's `skillopt tui` (exec, so the
    process the server starts is the app itself, with no shell left between)."""
    return "exec " + shlex.join([sys.executable, "-m", "skillopt_tui", "tui", *tui_args])


class WebFace(Server):
    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        token: str,
        allow_remote: bool,
        max_sessions: int,
        announce: Callable[[str], None] = print,
    ) -> None:
        super().__init__(command, host=host, port=port, title="SkillOpt", templates_path=TEMPLATES)
        self.token = token
        self.allow_remote = allow_remote
        self.max_sessions = max_sessions
        self.announce = announce
        self.gate: TokenGate | None = None
        self.sessions: set[AppService] = set()
        self.sockets: set[web.WebSocketResponse] = set()

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.gate.middleware)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """textual-serve prints its banner here; ours is the one URL, printed in `run`."""

    def full(self) -> web.Response | None:
        """The page for a browser that would start one session too many, else None."""
        if len(self.sessions) < self.max_sessions:
            return None
        return web.Response(
            status=503,
            content_type="text/html",
            text=FULL_PAGE.format(n=self.max_sessions, s="s" if self.max_sessions != 1 else ""),
        )

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        return self.full() or await self.page(request)

    @aiohttp_jinja2.template("app_index.html")
    async def page(self, request: web.Request) -> dict[str, Any]:
        base = f"{request.scheme}://{request.host}"
        websocket = ("wss" if request.scheme == "https" else "ws") + f"://{request.host}/ws"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": websocket,
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser session: its own app process for as long as the socket is open."""
        refused = self.full()
        if refused is not None:
            return refused
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        service = AppService(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        self.sessions.add(service)  # counted before the first await: the cap holds
        self.sockets.add(websocket)
        try:
            await websocket.prepare(request)
        except BaseException:  # no handshake (aiohttp answers it): no session either
            self.sessions.discard(service)
            self.sockets.discard(websocket)
            raise
        try:
            await service.start(width, height)
            # until the browser leaves or the app ends (it quit, or died): textual-serve
            # closes the page only on a clean quit, so a crashed app would leave it frozen
            messages = asyncio.ensure_future(self._process_messages(websocket, service))
            app_ended = service._task  # textual-serve 1.1.3 keeps it here (pinned)
            waiting = {messages} | ({app_ended} if app_ended is not None else set())
            try:
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            finally:
                messages.cancel()
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("a browser session failed")
        finally:
            await end_session(service)
            self.sessions.discard(service)
            self.sockets.discard(websocket)
            await websocket.close()
        return websocket

    async def run(self) -> None:
        """Serve until SIGINT or SIGTERM, then end every session's app process."""
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        # what each app process inherits: who its server is (it ends with it); nothing
        # on disk, so a server killed with -9 leaves nothing behind
        os.environ[SERVER_PID_ENV] = str(os.getpid())
        try:
            sock = listen(self.host, self.port)
        except socket.gaierror as exc:
            raise WebUsageError(
                f"--host {self.host}: cannot listen there ({exc.strerror}); give an address "
                "of this machine, such as 127.0.0.1"
            ) from None
        except OSError as exc:
            raise WebUsageError(
                f"--port {self.port}: cannot listen on {self.host} ({exc.strerror}); "
                "pick another port (0 picks a free one)"
            ) from None
        port = sock.getsockname()[1]
        self.gate = TokenGate(self.token, f"skillopt-web-{port}", self.allow_remote)
        runner = web.AppRunner(
            await self._make_app(), access_log_class=PathOnlyAccessLog, access_log=log
        )
        await runner.setup()
        await web.SockSite(runner, sock).start()
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.announce(
            f"SkillOpt web face on http://{shown}:{port}/?token={self.token}\n"
            "(open that URL; Ctrl-C stops the server and every session)"
        )
        try:
            await stop.wait()
        finally:
            await self.end_sessions()
            await runner.cleanup()

    async def end_sessions(self) -> None:
        """Close every browser's socket; each session's handler then ends its app process
        (end_session). Whatever is still running after that gets ended here."""
        await asyncio.gather(*(ws.close() for ws in list(self.sockets)), return_exceptions=True)
        deadline = asyncio.get_running_loop().time() + QUIT_WAIT + KILL_WAIT + 1
        while self.sessions and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.gather(*(end_session(s) for s in list(self.sessions)))


async def end_session(service: AppService) -> None:
    """Ask the app to quit; if it does not within QUIT_WAIT (a write in flight, a wedged
    worker), SIGTERM, then SIGKILL. A write cut short is undone by the skills repository's
    journal at its next open, so ending a session never leaves it half-written."""
    with contextlib.suppress(TimeoutError, ConnectionError, RuntimeError):
        await asyncio.wait_for(service.stop(), QUIT_WAIT)
    process = service._process  # textual-serve 1.1.3 keeps it here (pinned)
    if process is None or process.returncode is not None:
        return
    for send, wait in ((process.terminate, KILL_WAIT), (process.kill, None)):
        try:
            send()
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(process.wait(), wait)
            return
        except TimeoutError:
            continue


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family)


def serve(
    command: str,
    *,
    host: str,
    port: int,
    token: str,
    allow_remote: bool,
    max_sessions: int,
) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging.getLogger("aiohttp.server").addFilter(QuietBadRequests())
    face = WebFace(
        command,
        host=host,
        port=port,
        token=token,
        allow_remote=allow_remote,
        max_sessions=max_sessions,
        announce=lambda text: print(text, flush=True),
    )
    asyncio.run(face.run())
