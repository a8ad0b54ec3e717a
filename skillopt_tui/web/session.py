"""What an app process started by the web server does first: end with the server, and
find out whether it is the session that writes (writer_lock)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

from skillopt_tui.web.writer_lock import LOCK_ENV, web_session_read_only

SERVER_PID_ENV = "SKILLOPT_WEB_SERVER_PID"
PR_SET_PDEATHSIG = 1


def start_web_session() -> str | None:
    """None when not started by the web server, or when this session writes; else the
    read-only sentence. Asks Linux to SIGTERM this process when the server dies, even by
    kill -9 (the server ends its sessions itself on Ctrl-C and SIGTERM; this covers the
    rest), and exits at once if the server is already gone."""
    if not os.environ.get(LOCK_ENV):
        return None
    server = os.environ.get(SERVER_PID_ENV)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the server's own shutdown still ends us
    if server and str(os.getppid()) != server:
        sys.exit(0)  # the server died before we could ask to follow it
    return web_session_read_only()
