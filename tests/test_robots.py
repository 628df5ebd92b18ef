"""robots.txt per RFC 9309, against the loopback fixture server: 4xx allows all, a server error or an
unreachable server disallows the whole origin for the run (reported), redirects are followed."""

from __future__ import annotations

import socket
from pathlib import Path

from http_fixture import FixtureServer, Reply, crawl_settings, http_server_fixture  # noqa: F401

from core.records import FetchResult, Resource
from ingest.fetch import crawl_sync


def res(url: str, rid: str = "r1") -> Resource:
    return Resource(
        id=rid, title="A page", url=url, authors="", note="", topic="T", section="S", tier=1,
        kind="blog", position=0, list_anchor="#s",
    )


def crawl_pages(server: FixtureServer, home: Path, *paths: str, **crawl: object) -> list[FetchResult]:
    resources = [res(server.url(p), f"r{i}") for i, p in enumerate(paths)]
    return crawl_sync(resources, crawl_settings(home, **crawl), progress=False)


def test_robots_404_allows_fetching(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply.text("gone", status=404))
    http_server.route("/page", Reply.html("<p>fine</p>"))
    [result] = crawl_pages(http_server, tmp_path, "/page")
    assert result.status == "ok"
    assert http_server.count("/page") == 1


def test_robots_403_allows_fetching(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply.text("forbidden", status=403))
    http_server.route("/page", Reply.html("<p>fine</p>"))
    assert crawl_pages(http_server, tmp_path, "/page")[0].status == "ok"


def test_robots_500_disallows_the_whole_origin_and_says_why(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply(500))
    http_server.route("/a", Reply.html("<p>a</p>"))
    http_server.route("/b", Reply.html("<p>b</p>"))

    results = crawl_pages(http_server, tmp_path, "/a", "/b")

    assert [r.status for r in results] == ["robots-disallowed", "robots-disallowed"]
    assert http_server.count("/a") == 0 and http_server.count("/b") == 0
    reason = results[0].reason
    assert "robots.txt could not be read" in reason and "HTTP 500" in reason and "later" in reason
    assert "\n" not in reason


def test_robots_server_error_is_retried_before_giving_up(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", [Reply(503), Reply.text("User-agent: *\nDisallow:\n")])
    http_server.route("/page", Reply.html("<p>fine</p>"))
    assert crawl_pages(http_server, tmp_path, "/page", retries=2)[0].status == "ok"
    assert http_server.count("/robots.txt") == 2


def test_a_failed_robots_fetch_is_asked_once_per_origin_per_run(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply(500))
    crawl_pages(http_server, tmp_path, "/a", "/b", "/c", retries=0)
    assert http_server.count("/robots.txt") == 1


def test_unreachable_robots_means_not_fetched(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port with nothing listening: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/page"
    [result] = crawl_sync([res(url)], crawl_settings(tmp_path, retries=0), progress=False)
    assert result.status == "robots-disallowed"
    assert "robots.txt could not be read" in result.reason and "connection" in result.reason


def test_robots_redirect_is_followed_to_its_rules(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply.redirect("/hop1"))
    http_server.route("/hop1", Reply.redirect("/real-robots.txt", status=301))
    http_server.route("/real-robots.txt", Reply.text("User-agent: *\nDisallow: /private/\n"))
    http_server.route("/private/x", Reply.html("<p>secret</p>"))
    http_server.route("/public", Reply.html("<p>fine</p>"))

    results = crawl_pages(http_server, tmp_path, "/private/x", "/public")

    assert [r.status for r in results] == ["robots-disallowed", "ok"]
    assert http_server.count("/private/x") == 0


def test_more_than_five_robots_redirects_count_as_no_robots_txt(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply.redirect("/r1"))
    for i in range(1, 8):
        http_server.route(f"/r{i}", Reply.redirect(f"/r{i + 1}"))
    http_server.route("/page", Reply.html("<p>fine</p>"))

    assert crawl_pages(http_server, tmp_path, "/page")[0].status == "ok"
    assert http_server.count("/r6") == 0  # five hops followed, not more
