"""What `run.ray.address` may say, checked when the config loads: Ray's own parsing of a bad
address fails late (after the run directory exists) and in many voices (a port out of
range, an invalid IPv6 URL, a plugin module named after an unknown scheme). Only the
three forms Ray joins are accepted: `auto`, `ray://host:port` (the Ray client) and
`host:port` (a head's GCS)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.net_address import check_one_token, shown, split_url

FORMS = "give ray://host:10001, host:6379, auto, or null to start a local Ray"


@dataclass(frozen=True)
class RayAddress:
    kind: Literal["auto", "client", "gcs"]
    host: str = ""
    port: int = 0


def parse_ray_address(address: str) -> RayAddress:
    """The address's parts; ValueError with one line when it is none of the three forms."""
    quoted = shown(address)
    try:
        check_one_token(address)
    except ValueError as exc:
        raise ValueError(f"{quoted} {exc}; {FORMS}") from None
    if address == "auto":
        return RayAddress("auto")
    scheme, sep, _ = address.partition("://")
    if sep and scheme != "ray":
        raise ValueError(f"{quoted}: Ray does not join {scheme}:// addresses; {FORMS}")
    try:
        parts, port = split_url(address if sep else f"//{address}")
    except ValueError as exc:
        raise ValueError(f"{quoted} is not an address ({exc}); {FORMS}") from None
    if not parts.hostname or port is None:
        raise ValueError(f"{quoted} is not an address: it needs a host and a port; {FORMS}")
    if parts.username or parts.password or parts.path.strip("/") or parts.query or parts.fragment:
        raise ValueError(f"{quoted} is not an address: only host and port, nothing more; {FORMS}")
    return RayAddress("client" if sep else "gcs", parts.hostname, port)
