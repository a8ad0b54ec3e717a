"""Who may reach the web face, decided before the server starts: where it listens, and the
token. Jupyter's model: loopback unless asked otherwise, and a token always (gate.py
checks it on every request). No aiohttp here, so bad options fail in one line even
without the `web` extra."""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path

from core.errors import UserError

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
MIN_TOKEN = 16  # characters; `secrets.token_urlsafe(32)` gives 43


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
    if not allow_remote and not is_loopback(host):
        raise WebUsageError(
            f"--host {host}: not a loopback address; the web face serves only this machine "
            "unless you add --allow-remote (then anyone who has the token can adopt)"
        )


def load_token(token_file: Path | None) -> str:
    """The token from --token-file (first line), else a fresh one for this start."""
    if token_file is None:
        return secrets.token_urlsafe(32)
    try:
        lines = token_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise WebUsageError(f"--token-file {token_file}: cannot read it ({exc})") from None
    token = lines[0].strip() if lines else ""
    if len(token) < MIN_TOKEN or not token.isprintable() or " " in token:
        raise WebUsageError(
            f"--token-file {token_file}: its first line must be a token of at least "
            f"{MIN_TOKEN} characters without spaces (e.g. `python -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' > FILE`)"
        )
    return token
