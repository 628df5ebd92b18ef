"""Login for the endpoints Gradio leaves open: with `ui.auth_*` set, Gradio guards its pages and its HTTP API
(`/gradio_api/...`) but mounts the MCP server (`/gradio_api/mcp/`, tools/list and tools/call included) and
FastAPI's schema pages without a check. This ASGI middleware closes them: a request there needs Gradio's
login cookie (what a browser or gradio_client gets from /login) or HTTP Basic credentials (what an MCP client
can send as a header); anything else gets 401.

Plain ASGI, no Gradio import, so it is installed when the app is created (`launch(app_kwargs=...)`) and
there is no moment when the server runs without it.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

GUARDED_PREFIXES = ("/gradio_api/mcp", "/openapi.json", "/docs", "/redoc")


class RequireLogin:
    """Refuse unauthenticated requests to `GUARDED_PREFIXES` (the rest is Gradio's own business)."""

    def __init__(self, app: ASGIApp, user: str, password: str, prefixes: tuple[str, ...] = GUARDED_PREFIXES) -> None:
        self.app = app
        self.user = user
        self.password = password
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] in ("http", "websocket") and self._guarded(scope) and not self._allowed(scope):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            body = json.dumps({"detail": {"error": "Not authenticated"}}).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Basic realm="gpuguide"'),
            ]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _guarded(self, scope: Scope) -> bool:
        root = scope.get("root_path", "") or ""
        path = scope.get("path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        return path.startswith(self.prefixes)

    def _allowed(self, scope: Scope) -> bool:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        return self._basic_ok(headers.get("authorization", "")) or self._cookie_ok(scope, headers.get("cookie", ""))

    def _basic_ok(self, value: str) -> bool:
        scheme, _, encoded = value.partition(" ")
        if scheme.lower() != "basic" or not encoded:
            return False
        try:
            user, sep, password = base64.b64decode(encoded.strip(), validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return bool(sep) and hmac.compare_digest(user.encode(), self.user.encode()) and hmac.compare_digest(
            password.encode(), self.password.encode())

    @staticmethod
    def _cookie_ok(scope: Scope, header: str) -> bool:
        """Gradio's own login cookie, checked against the tokens the running Gradio app issued."""
        app = scope.get("app")
        tokens, cookie_id = getattr(app, "tokens", None), getattr(app, "cookie_id", None)
        if not header or tokens is None or cookie_id is None:
            return False
        try:
            cookies = SimpleCookie(header)
        except CookieError:
            return False
        for name in (f"access-token-{cookie_id}", f"access-token-unsecure-{cookie_id}"):
            morsel = cookies.get(name)
            if morsel is not None and tokens.get(morsel.value) is not None:
                return True
        return False
