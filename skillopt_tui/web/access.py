"""Who may reach the web face, decided before the server starts: where it listens, and the
token. Jupyter's model: loopback unless asked otherwise, and a token always (gate.py
checks it on every request). No aiohttp here, so bad options fail in one line even
without the `web` extra."""

from __future__ import annotations

import ipaddress
import os
import secrets
import stat
from pathlib import Path

from core.errors import UserError
from core.net_address import check_one_token, is_host

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
MIN_TOKEN = 16  # characters; `secrets.token_urlsafe(32)` gives 43
MAX_TOKEN_FILE = 4096  # bytes: a token and a comment, not a document


class WebUsageError(UserError):
    """A `skillopt tui --web` option that cannot be used as given."""


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """Anything but loopback exposes the skills repository to the network: only on request."""
    try:
        check_one_token(host)
        well_formed = is_host(host)
    except ValueError:
        well_formed = False
    if not well_formed:
        raise WebUsageError(
            f"--host {host!r}: not a host name or IP address; give one such as 127.0.0.1, "
            "::1 or localhost (no port: that is --port)"
        )
    if not allow_remote and not is_loopback(host):
        raise WebUsageError(
            f"--host {host}: not a loopback address; the web face serves only this machine "
            "unless you add --allow-remote (then anyone who has the token can adopt)"
        )


def load_token(token_file: Path | None) -> str:
    """The token from --token-file (first line), else a fresh one for this start. Only a
    small regular file is read: a FIFO or /dev/zero would block or never end, and a
    huge file is no token file."""
    if token_file is None:
        return secrets.token_urlsafe(32)
    data = _read_small_file(token_file)
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise WebUsageError(f"--token-file {token_file}: not UTF-8 text") from None
    token = lines[0].strip() if lines else ""
    if len(token) < MIN_TOKEN or not token.isprintable() or " " in token:
        raise WebUsageError(
            f"--token-file {token_file}: its first line must be a token of at least "
            f"{MIN_TOKEN} characters without spaces (e.g. `python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' > FILE`)"
        )
    return token


def _read_small_file(path: Path) -> bytes:
    """At most MAX_TOKEN_FILE bytes of a regular file; WebUsageError for anything else.
    Opened without blocking (a FIFO with no writer would wait for one) and checked on the
    open file, so a path swapped after a check is still refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise WebUsageError(
            f"--token-file {path}: cannot read it ({exc.strerror or exc})"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WebUsageError(
                f"--token-file {path}: not a regular file; write the token into a file"
            )
        if info.st_size > MAX_TOKEN_FILE:
            raise WebUsageError(
                f"--token-file {path}: {info.st_size} bytes, more than a token file holds "
                f"(at most {MAX_TOKEN_FILE}); give the file with just the token"
            )
        return os.read(fd, MAX_TOKEN_FILE + 1)[:MAX_TOKEN_FILE]
    except OSError as exc:
        raise WebUsageError(
            f"--token-file {path}: cannot read it ({exc.strerror or exc})"
        ) from None
    finally:
        os.close(fd)
