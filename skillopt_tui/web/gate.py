"""The check in front of every request and websocket of the web face (an aiohttp middleware).

The token comes in the printed URL once (`/?token=…`); the first good request trades it
for an HttpOnly, SameSite=Strict cookie and a redirect to the same address without it, so
the token leaves the address bar and the browser history. Every request after that, the
websocket included, carries the cookie. A request with neither gets 401 and nothing else.
"""

from __future__ import annotations

import hashlib
import hmac

from aiohttp import web

from skillopt_tui.web.access import is_loopback


class TokenGate:
    """The aiohttp middleware: host, origin and token checks before any handler runs."""

    def __init__(self, token: str, cookie_name: str, allow_remote: bool) -> None:
        self._token = token
        # the cookie holds a value derived from the token, not the token itself
        self._cookie_value = hmac.new(token.encode(), b"skillopt-web-cookie", hashlib.sha256)
        self.cookie_name = cookie_name
        self.allow_remote = allow_remote

    @property
    def cookie_value(self) -> str:
        return self._cookie_value.hexdigest()

    def _good(self, given: str | None, expected: str) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), expected.encode())

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        # A page on another site that resolves its name to 127.0.0.1 (DNS rebinding)
        # reaches us with its own Host; without --allow-remote only loopback names pass.
        if not self.allow_remote and not is_loopback(request.url.host or ""):
            return web.Response(status=403, text="403: this server answers to loopback only.\n")
        by_query = self._good(request.query.get("token"), self._token)
        by_cookie = self._good(request.cookies.get(self.cookie_name), self.cookie_value)
        if not (by_query or by_cookie):
            return web.Response(
                status=401,
                text="401: no valid token. Open the URL `skillopt tui --web` printed "
                "when it started.\n",
            )
        if request.headers.get("Upgrade", "").lower() == "websocket":
            origin = request.headers.get("Origin")
            if origin is not None and origin.split("://", 1)[-1] != request.host:
                return web.Response(status=403, text="403: websocket from another origin.\n")
            return await handler(request)
        if by_query:
            # trade the token for the cookie, and drop it from the address
            response = web.Response(status=303, headers={"Location": local_address(request)})
            response.set_cookie(
                self.cookie_name,
                self.cookie_value,
                httponly=True,
                samesite="Strict",
                path="/",
                secure=request.secure,
            )
            return response
        return await handler(request)


def local_address(request: web.Request) -> str:
    """The request's own path and query without the token, as a path on this server. A
    path that starts `//` (or `/\\`) would be read by the browser as another site's
    address (`//evil.example/`): its leading slashes fold into one."""
    rest = request.rel_url.without_query_params("token")
    path = "/" + rest.raw_path.lstrip("/\\")
    return f"{path}?{rest.raw_query_string}" if rest.raw_query_string else path
