"""Pinned resolution: the crawler connects to the address the SSRF guard approved, so a name that
resolves differently the second time (DNS rebinding) cannot reach an address that was never checked.

Only the resolver edge (socket.getaddrinfo) is replaced; the guard, the transport and the loopback
fixture server are the real ones.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from http_fixture import FixtureServer, Reply, crawl_settings, http_server_fixture  # noqa: F401

from core.records import FetchResult, Resource
from core.settings import CrawlSettings
from ingest.catalog import CatalogError, parse_source
from ingest.fetch import crawl_sync

PUBLIC = "93.184.216.34"  # a global address: the guard approves it


def res(url: str) -> Resource:
    return Resource(
        id="r1", title="A page", url=url, authors="", note="", topic="T", section="S", tier=1,
        kind="blog", position=0, list_anchor="#s",
    )


class FakeDNS:
    """getaddrinfo for one name: answers[i] on the i-th lookup (the last one repeats); other names pass."""

    def __init__(self, name: str, answers: list[str]) -> None:
        self.name, self.answers, self.lookups = name, answers, 0
        self.real: Callable[..., Any] = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode("ascii") if isinstance(host, bytes) else host  # anyio passes bytes
        if name != self.name:
            return self.real(host, port, *args, **kwargs)
        answer = self.answers[min(self.lookups, len(self.answers) - 1)]
        self.lookups += 1
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer, int(port or 0)))]


def crawl_name(server: FixtureServer, home: Path, name: str, **crawl: Any) -> FetchResult:
    url = f"http://{name}:{server.port}/page"
    return crawl_sync([res(url)], crawl_settings(home, retries=0, **crawl), progress=False)[0]


def test_the_connection_goes_to_the_address_the_guard_approved(
    http_server: FixtureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # First answer 127.0.0.1 (allowed by the test setting, where the server listens), then 127.0.0.2
    # (not allowed, nothing listens): a second lookup at connect time would fail the fetch.
    dns = FakeDNS("pinned.test", ["127.0.0.1", "127.0.0.2"])
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    http_server.route("/page", Reply.html("<p>fine</p>"))

    result = crawl_name(http_server, tmp_path, "pinned.test")

    assert result.status == "ok", result.reason
    assert dns.lookups == 1  # robots.txt and the page: one resolution, one approval
    assert http_server.requests[-1].headers["host"] == f"pinned.test:{http_server.port}"


def test_a_name_that_rebinds_to_loopback_after_the_check_is_not_connected_to(
    http_server: FixtureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The guard sees a public address; a second lookup would say 127.0.0.1, where the server listens.
    dns = FakeDNS("rebind.test", [PUBLIC, "127.0.0.1"])
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    http_server.route("/page", Reply.html("<p>internal</p>"))

    result = crawl_name(
        http_server, tmp_path, "rebind.test", allowed_private_hosts=[], respect_robots=False, connect_timeout_s=0.5
    )

    assert result.status == "failed"
    assert http_server.requests == []  # nothing reached the loopback server
    assert dns.lookups == 1


def test_a_name_resolving_to_loopback_is_refused(
    http_server: FixtureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", FakeDNS("inside.test", ["127.0.0.1"]))
    http_server.route("/page", Reply.html("<p>internal</p>"))

    result = crawl_name(http_server, tmp_path, "inside.test", allowed_private_hosts=[])

    assert result.status == "failed"
    assert "inside.test (127.0.0.1) is a loopback address" in result.reason
    assert http_server.requests == []


def test_a_name_resolving_to_loopback_is_fetched_when_the_setting_allows_it(
    http_server: FixtureServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", FakeDNS("inside.test", ["127.0.0.1"]))
    http_server.route("/page", Reply.html("<p>internal</p>"))

    result = crawl_name(http_server, tmp_path, "inside.test", allowed_private_hosts=["127.0.0.1"])

    assert result.status == "ok", result.reason


def test_a_list_download_connects_to_the_approved_address(
    http_server: FixtureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    dns = FakeDNS("list.test", ["127.0.0.1", "127.0.0.2"])
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    http_server.route("/list.md", Reply.text((Path(__file__).parent / "fixtures" / "lists" / "current.md").read_text()))

    parsed = parse_source(f"http://list.test:{http_server.port}/list.md", CrawlSettings(allowed_private_hosts=["127.0.0.1"]))

    assert len(parsed.resources) == 8
    assert dns.lookups == 1


def test_a_list_host_that_rebinds_to_loopback_is_not_connected_to(
    http_server: FixtureServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    dns = FakeDNS("list.test", [PUBLIC, "127.0.0.1"])
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    http_server.route("/list.md", Reply.text("## Kernels\n"))

    with pytest.raises(CatalogError, match="cannot download"):
        parse_source(f"http://list.test:{http_server.port}/list.md", CrawlSettings(connect_timeout_s=0.5))

    assert http_server.requests == []
