"""A real threaded HTTP server on 127.0.0.1 for crawler and end-to-end tests.

Use it from any test module:

    from http_fixture import FixtureServer, Reply, http_server_fixture  # noqa: F401  (the `http_server` fixture)

    def test_something(http_server: FixtureServer) -> None:
        http_server.route("/page", Reply.html("<title>Hi</title><p>text</p>"))
        http_server.route("/flaky", [Reply(500), Reply.html("ok")])   # served in turn, last one repeats
        http_server.route("/file", Reply.file("page.html"))          # from tests/fixtures/web/
        http_server.route("/custom", lambda request: Reply.text(request.headers.get("user-agent", "")))
        url = http_server.url("/page")
        ...
        assert http_server.count("/flaky") == 2

Unrouted paths answer 404 (so /robots.txt is "allow all" unless routed). Every request is logged in
`http_server.requests` (method, path with query, headers). `crawl_settings(...)` builds `Settings` whose
crawl group allows this server (127.0.0.1 only) and keeps timeouts and delays tiny.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from core.settings import CrawlSettings, Settings

WEB_FIXTURES = Path(__file__).parent / "fixtures" / "web"


@dataclass
class Request:
    """What the server saw."""

    method: str
    path: str  # with query string
    headers: dict[str, str]  # lower-cased names


@dataclass
class Reply:
    """A canned response. `delay_s` sleeps before the status line; `reset_after` sends that many body
    bytes, then resets the connection (TCP RST); `drip_s` sleeps between body chunks of 1 KiB."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    reset_after: int | None = None
    drip_s: float = 0.0

    @classmethod
    def html(cls, text: str, status: int = 200, charset: str = "utf-8", delay_s: float = 0.0, **headers: str) -> Reply:
        return cls(
            status, text.encode(charset), {"Content-Type": f"text/html; charset={charset}", **_h(headers)}, delay_s=delay_s
        )

    @classmethod
    def text(cls, text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8") -> Reply:
        return cls(status, text.encode("utf-8"), {"Content-Type": content_type})

    @classmethod
    def raw(cls, body: bytes, content_type: str, status: int = 200, **headers: str) -> Reply:
        return cls(status, body, {"Content-Type": content_type, **_h(headers)})

    @classmethod
    def file(cls, name: str, content_type: str | None = None, status: int = 200) -> Reply:
        """A file from tests/fixtures/web/, typed by its extension unless told."""
        path = WEB_FIXTURES / name
        guessed = {
            ".html": "text/html; charset=utf-8", ".pdf": "application/pdf", ".md": "text/markdown; charset=utf-8",
            ".txt": "text/plain; charset=utf-8",
        }.get(path.suffix, "application/octet-stream")
        return cls(status, path.read_bytes(), {"Content-Type": content_type or guessed})

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Reply:
        return cls(status, b"", {"Location": location})


def _h(headers: dict[str, str]) -> dict[str, str]:
    """Keyword headers as HTTP names: etag → ETag, last_modified → Last-Modified, retry_after → Retry-After."""
    special = {"etag": "ETag"}
    return {special.get(k, k.replace("_", "-").title()): v for k, v in headers.items()}


Handler = Reply | Sequence[Reply] | Callable[[Request], Reply]


class FixtureServer:
    """The running server: register routes, build URLs, inspect requests."""

    def __init__(self) -> None:
        self._routes: dict[str, Handler] = {}
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fixture-http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def route(self, path: str, handler: Handler) -> str:
        """Serve `handler` at `path` (exact match, query ignored); returns the full URL."""
        with self._lock:
            self._routes[path] = handler
            self._served[path] = 0
        return self.url(path)

    def count(self, path: str) -> int:
        """How many requests reached `path` (query ignored)."""
        with self._lock:
            return sum(1 for r in self.requests if r.path.split("?", 1)[0] == path)

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    def start(self) -> FixtureServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FixtureServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _reply_for(self, request: Request) -> Reply:
        path = request.path.split("?", 1)[0]
        with self._lock:
            self.requests.append(request)
            handler = self._routes.get(path)
            turn = self._served.get(path, 0)
            self._served[path] = turn + 1
        if handler is None:
            return Reply.text("not found", status=404)
        if isinstance(handler, Reply):
            return handler
        if callable(handler):
            return handler(request)
        replies = list(handler)
        return replies[min(turn, len(replies) - 1)]


def _make_handler(server: FixtureServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            request = Request("GET", self.path, {k.lower(): v for k, v in self.headers.items()})
            reply = server._reply_for(request)
            try:
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                self.close_connection = True

        def do_HEAD(self) -> None:
            self.do_GET()

        def _send(self, reply: Reply) -> None:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            self.send_response(reply.status)
            headers = {"Content-Length": str(len(reply.body)), **reply.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command == "HEAD":
                return
            if reply.reset_after is not None:
                self.wfile.write(reply.body[: reply.reset_after])
                self.wfile.flush()
                # SO_LINGER 0 turns close() into a TCP reset: the client sees a broken body.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            if reply.drip_s:
                for start in range(0, len(reply.body), 1024):
                    self.wfile.write(reply.body[start : start + 1024])
                    self.wfile.flush()
                    time.sleep(reply.drip_s)
                return
            self.wfile.write(reply.body)

    return _Handler


@pytest.fixture(name="http_server")
def http_server_fixture() -> Iterator[FixtureServer]:
    """A fresh server per test, stopped afterwards."""
    with FixtureServer() as server:
        yield server


def crawl_settings(home: Path, **crawl: Any) -> Settings:
    """Settings for crawling the fixture server fast: 127.0.0.1 allowed, tiny timeouts, no delays.

    `crawl` overrides fields of the crawl group (e.g. url_rewrites={...}, retries=0).
    """
    values: dict[str, Any] = {
        "allowed_private_hosts": ["127.0.0.1"],
        "host_delay_s": 0.0,
        "connect_timeout_s": 1.0,
        "read_timeout_s": 0.3,
        "total_timeout_s": 5.0,
        "retries": 2,
        "backoff_s": 0.01,
        "max_retry_after_s": 1.0,
        "concurrency": 8,
        "per_host_concurrency": 4,
    }
    values.update(crawl)
    return Settings(home=home, crawl=CrawlSettings(**values))
