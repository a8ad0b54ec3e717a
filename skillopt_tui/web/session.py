"""What an app process started by the web server does first: end with the server."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

SERVER_PID_ENV = "SKILLOPT_WEB_SERVER_PID"  # set by the web server for the apps it starts
PR_SET_PDEATHSIG = 1


def follow_web_server() -> None:
    """For an app started by the web server (nothing otherwise): ask Linux to SIGTERM this
    process when the server dies, even by kill -9 (the server ends its sessions itself
    on Ctrl-C and SIGTERM; this covers the rest), and exit at once if the server is
    already gone."""
    server = os.environ.get(SERVER_PID_ENV)
    if not server:
        return
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: the server's own shutdown still ends us
    if str(os.getppid()) != server:
        sys.exit(0)  # the server died before we could ask to follow it
