"""What `run.ray.address` may say, checked when the config loads: Ray's own parsing of a bad
address fails late (after the run directory exists) and in many voices (a port out of
range, an invalid IPv6 URL, a plugin module named after an unknown scheme). Only the
three forms Ray joins are accepted: `auto`, `ray://host:port` (the Ray client) and
`host:port` (a head's GCS)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

FORMS = "give ray://host:10001, host:6379, auto, or null to start a local Ray"


@dataclass(frozen=True)
class RayAddress:
    kind: Literal["auto", "client", "gcs"]
    host: str = ""
    port: int = 0


def parse_ray_address(address: str) -> RayAddress:
    """The address's parts; ValueError with one line (the value shown with repr, so a
    newline in it stays on that line) when it is none of the three forms."""
    shown = repr(address)
    if not address.isprintable() or any(c.isspace() for c in address):
        raise ValueError(f"{shown} holds spaces or control characters; {FORMS}")
    if address == "auto":
        return RayAddress("auto")
    scheme, sep, _ = address.partition("://")
    if sep and scheme != "ray":
        raise ValueError(f"{shown}: Ray does not join {scheme}:// addresses; {FORMS}")
    try:
        parts = urlsplit(address if sep else f"//{address}")
        port = parts.port
    except ValueError as exc:  # a port out of range, a broken [IPv6] bracket
        raise ValueError(f"{shown} is not an address ({exc}); {FORMS}") from None
    if not parts.hostname or port is None or port == 0:
        raise ValueError(f"{shown} is not an address: it needs a host and a port; {FORMS}")
    if parts.username or parts.password or parts.path.strip("/") or parts.query or parts.fragment:
        raise ValueError(f"{shown} is not an address: only host and port, nothing more; {FORMS}")
    return RayAddress("client" if sep else "gcs", parts.hostname, port)
