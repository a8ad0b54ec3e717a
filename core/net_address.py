"""The syntax every network setting shares (a model's base_url, run.ray.address, the web
face's --host), checked where the value comes in, so a bad one is one line before
anything is created rather than a parser's or a socket's traceback later.

Python's urlsplit quietly drops tabs and newlines and keeps spaces and invisible marks,
so a value is first required to be one printable token; a port must be 1-65535 (urlsplit
raises for some bad ports, takes 0 as given, and has its own word for a broken IPv6
bracket)."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

# A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123), and
# underscores, which container and service names use and their resolvers answer.
_HOST_NAME = re.compile(r"(?!-)[\w-]{1,63}(?<!-)(\.(?!-)[\w-]{1,63}(?<!-))*\.?", re.ASCII)
_NUMERIC = re.compile(r"[0-9.]+")  # all digits and dots: an IPv4 address or nothing


def check_one_token(value: str) -> None:
    """ValueError unless `value` is one printable token: no spaces, tabs, newlines, NULs,
    or invisible format marks (a right-to-left override shows one address, holds another)."""
    if not value or not value.isprintable() or any(c.isspace() for c in value):
        raise ValueError("holds spaces, control characters or invisible marks")


def split_url(value: str) -> tuple[SplitResult, int | None]:
    """urlsplit's parts and the port (None when not given); ValueError saying what is
    wrong with the host or port, in words fit for a one-line message."""
    check_one_token(value)
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:  # "Port out of range 0-65535", "Invalid IPv6 URL"
        raise ValueError(
            str(exc).replace("Port out of range 0-65535", "port out of range")
        ) from None
    if port == 0:
        raise ValueError("port 0 is no port to connect to")
    if parts.hostname is not None and not is_host(parts.hostname):
        raise ValueError(f"{parts.hostname!r} is not a host name or IP address")
    return parts, port


def is_host(host: str) -> bool:
    """An IP address (IPv6 with or without its brackets) or a host name."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare)
        return True
    except ValueError:
        pass
    if bare != host or _NUMERIC.fullmatch(host):
        return False
    return bool(_HOST_NAME.fullmatch(host))


def shown(value: str) -> str:
    """`value` as a message shows it: quoted (a newline stays visible, on one line), with
    what may be a secret (user:password@, a ?query, a #fragment) starred out, since
    messages reach terminals and logs."""
    value = re.sub(r"(//)[^/@]*@", r"\1***@", value)
    value = re.sub(r"([?#]).*", r"\1***", value, flags=re.DOTALL)
    return repr(value)
