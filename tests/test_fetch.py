"""The crawler against a real HTTP server on 127.0.0.1: one behaviour per test."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from http_fixture import (  # noqa: F401
    FixtureServer,
    Reply,
    Request,
    crawl_settings,
    http_server_fixture,
)
from warcio.archiveiterator import ArchiveIterator

from core.decode import decode_body, detect_charset
from core.records import FetchResult, Resource
from core.settings import CrawlSettings
from ingest.fetch import (
    classify_body,
    crawl_sync,
    parse_retry_after,
    rewrite_url,
    unrewrite_url,
)
from ingest.netguard import check_addresses, check_url


def res(url: str, rid: str = "r1", title: str = "A page") -> Resource:
    return Resource(
        id=rid, title=title, url=url, authors="", note="", topic="T", section="S", tier=1,
        kind="blog", position=0, list_anchor="#s",
    )


def fetch_one(server: FixtureServer, home: Path, path: str, **crawl: object) -> FetchResult:
    results = crawl_sync([res(server.url(path))], crawl_settings(home, **crawl), progress=False)
    assert len(results) == 1
    return results[0]


def warc_records(home: Path) -> list[tuple[str, str]]:
    out = []
    for path in sorted((home / "archive").glob("*.warc.gz")):
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                out.append((record.rec_type, record.rec_headers.get_header("WARC-Target-URI") or ""))
    return out


# --- plain fetching ------------------------------------------------------------------------------


def test_ok_page_sends_user_agent_and_is_archived(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/page", Reply.html("<title>Hi</title><p>Coalescing</p>"))
    result = fetch_one(http_server, tmp_path, "/page")
    assert result.status == "ok" and result.http_status == 200
    assert result.content_type == "text/html; charset=utf-8"
    assert b"Coalescing" in result.body
    page_request = next(r for r in http_server.requests if r.path == "/page")
    assert page_request.headers["user-agent"].startswith("gpuguide/")
    assert ("response", http_server.url("/page")) in warc_records(tmp_path)


def test_404_fails_with_status(http_server: FixtureServer, tmp_path: Path) -> None:
    result = fetch_one(http_server, tmp_path, "/missing")
    assert result.status == "failed"
    assert result.http_status == 404
    assert "404" in result.reason
    assert http_server.count("/missing") == 1  # a 404 is not retried
    assert ("metadata", http_server.url("/missing")) in warc_records(tmp_path)  # the failure is archived


def test_500_then_200_is_retried(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/flaky", [Reply(500), Reply.html("<p>second time lucky</p>")])
    result = fetch_one(http_server, tmp_path, "/flaky")
    assert result.status == "ok"
    assert http_server.count("/flaky") == 2


def test_persistent_503_fails_after_all_retries(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/down", Reply(503))
    result = fetch_one(http_server, tmp_path, "/down", retries=2)
    assert result.status == "failed" and result.http_status == 503
    assert "after 3 attempts" in result.reason
    assert http_server.count("/down") == 3


def test_429_waits_for_retry_after(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/limited", [Reply(429, headers={"Retry-After": "1"}), Reply.html("<p>ok now</p>")])
    started = time.monotonic()
    result = fetch_one(http_server, tmp_path, "/limited", max_retry_after_s=5.0)
    assert result.status == "ok"
    assert time.monotonic() - started >= 0.95


def test_429_retry_after_is_capped_by_setting(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/limited", [Reply(429, headers={"Retry-After": "3600"}), Reply.html("<p>ok now</p>")])
    started = time.monotonic()
    result = fetch_one(http_server, tmp_path, "/limited", max_retry_after_s=0.2)
    assert result.status == "ok"
    assert time.monotonic() - started < 2.0


def test_redirect_chain_is_followed(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/a", Reply.redirect("/b", 301))
    http_server.route("/b", Reply.redirect(http_server.url("/c"), 307))
    http_server.route("/c", Reply.html("<p>landed</p>"))
    result = fetch_one(http_server, tmp_path, "/a")
    assert result.status == "ok"
    assert result.url == http_server.url("/a")
    assert result.final_url == http_server.url("/c")


def test_redirect_loop_fails(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/x", Reply.redirect("/y"))
    http_server.route("/y", Reply.redirect("/x"))
    result = fetch_one(http_server, tmp_path, "/x")
    assert result.status == "failed"
    assert "redirect loop" in result.reason


def test_too_many_redirects_fail(http_server: FixtureServer, tmp_path: Path) -> None:
    for i in range(5):
        http_server.route(f"/hop{i}", Reply.redirect(f"/hop{i + 1}"))
    http_server.route("/hop5", Reply.html("<p>end</p>"))
    result = fetch_one(http_server, tmp_path, "/hop0", max_redirects=3)
    assert result.status == "failed"
    assert "too many redirects" in result.reason


def test_response_slower_than_read_timeout_fails(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/slow", Reply(200, b"<p>late</p>", {"Content-Type": "text/html"}, delay_s=1.0))
    started = time.monotonic()
    result = fetch_one(http_server, tmp_path, "/slow", retries=0, read_timeout_s=0.3)
    assert result.status == "failed"
    assert "timeout" in result.reason
    assert time.monotonic() - started < 1.0


def test_body_over_size_limit_fails(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/big", Reply.html("<p>" + "x" * 5000 + "</p>"))
    result = fetch_one(http_server, tmp_path, "/big", max_body_bytes=1000)
    assert result.status == "failed"
    assert "larger than 1000 bytes" in result.reason
    assert result.body == b""


def test_binary_body_labelled_html_fails(http_server: FixtureServer, tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    http_server.route("/fake.html", Reply.raw(png, "text/html"))
    result = fetch_one(http_server, tmp_path, "/fake.html")
    assert result.status == "failed"
    assert "binary body labelled text/html" in result.reason


def test_unsupported_content_type_is_refused(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/img", Reply.raw(b"\x89PNG\r\n", "image/png"))
    result = fetch_one(http_server, tmp_path, "/img")
    assert result.status == "failed"
    assert result.reason == "unsupported content type image/png"


def test_latin1_page_is_decoded_with_its_charset(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/latin1", Reply.file("latin1.html", "text/html; charset=ISO-8859-1"))
    result = fetch_one(http_server, tmp_path, "/latin1")
    assert result.status == "ok"
    assert result.content_type == "text/html; charset=cp1252"  # latin-1 labels decode as their superset
    assert "la mémoire partagée coûte cher" in decode_body(result.body, result.content_type)


def test_meta_charset_is_used_when_header_has_none(http_server: FixtureServer, tmp_path: Path) -> None:
    body = '<meta charset="windows-1252"><p>naïve “quotes”</p>'.encode("cp1252")
    http_server.route("/meta", Reply.raw(body, "text/html"))
    result = fetch_one(http_server, tmp_path, "/meta")
    assert result.content_type == "text/html; charset=cp1252"
    assert "naïve “quotes”" in decode_body(result.body, result.content_type)


def test_malformed_html_is_still_ok(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/broken", Reply.file("malformed.html"))
    result = fetch_one(http_server, tmp_path, "/broken")
    assert result.status == "ok"
    assert b"Warp divergence" in result.body


def test_pdf_and_corrupt_pdf_are_both_ok(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/paper.pdf", Reply.file("paper.pdf"))
    http_server.route("/corrupt.pdf", Reply.file("corrupt.pdf"))
    results = crawl_sync(
        [res(http_server.url("/paper.pdf"), "p1"), res(http_server.url("/corrupt.pdf"), "p2")],
        crawl_settings(tmp_path), progress=False,
    )
    assert [r.status for r in results] == ["ok", "ok"]
    assert [r.content_type for r in results] == ["application/pdf", "application/pdf"]
    assert results[0].body.startswith(b"%PDF-")


def test_connection_reset_mid_body_fails(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/reset", Reply(200, b"<p>" + b"y" * 20000, {"Content-Type": "text/html"}, reset_after=100))
    result = fetch_one(http_server, tmp_path, "/reset", retries=1)
    assert result.status == "failed"
    assert result.reason.startswith("connection broken")
    assert http_server.count("/reset") == 2  # retried once


def test_malformed_url_fails_cleanly(tmp_path: Path) -> None:
    resources = [res("http://[::1/broken", "a"), res("http://exa mple.org/", "b")]
    results = crawl_sync(resources, crawl_settings(tmp_path), progress=False)
    assert [r.status for r in results] == ["failed", "failed"]
    assert not any(r.reason.startswith("internal error") for r in results)


def test_archived_redirect_chain_is_resumed_without_requests(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/old", Reply.redirect("/new", 301))
    http_server.route("/new", Reply.html("<p>moved</p>"))
    settings = crawl_settings(tmp_path)
    crawl_sync([res(http_server.url("/old"))], settings, progress=False)
    again = crawl_sync([res(http_server.url("/old"))], settings, progress=False)[0]
    assert (again.status, again.final_url, again.body) == ("ok", http_server.url("/new"), b"<p>moved</p>")
    assert (http_server.count("/old"), http_server.count("/new")) == (1, 1)


def test_empty_url_fails_with_no_url(tmp_path: Path) -> None:
    results = crawl_sync([res("")], crawl_settings(tmp_path), progress=False)
    assert [(r.status, r.reason) for r in results] == [("failed", "no URL")]


# --- robots.txt ----------------------------------------------------------------------------------


def test_robots_disallow_is_respected(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/robots.txt", Reply.text("User-agent: *\nDisallow: /private/\n"))
    http_server.route("/private/page", Reply.html("<p>secret</p>"))
    http_server.route("/public", Reply.html("<p>fine</p>"))
    results = crawl_sync(
        [res(http_server.url("/private/page"), "a"), res(http_server.url("/public"), "b")],
        crawl_settings(tmp_path), progress=False,
    )
    assert [r.status for r in results] == ["robots-disallowed", "ok"]
    assert http_server.count("/private/page") == 0
    assert http_server.count("/robots.txt") == 1  # cached per host


# robots.txt answering 4xx/5xx/unreachable (RFC 9309): tests/test_robots.py


# --- conditional re-fetch and resume ------------------------------------------------------------


def test_etag_makes_refresh_crawl_not_modified(http_server: FixtureServer, tmp_path: Path) -> None:
    def page(request: Request) -> Reply:
        if request.headers.get("if-none-match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        return Reply.html("<p>version one</p>", etag='"v1"')

    http_server.route("/etag", page)
    settings = crawl_settings(tmp_path)
    first = crawl_sync([res(http_server.url("/etag"))], settings, progress=False)[0]
    second = crawl_sync([res(http_server.url("/etag"))], settings, refresh=True, progress=False)[0]
    assert first.status == "ok" and first.etag == '"v1"'
    assert second.status == "not-modified" and second.http_status == 304
    assert second.body == first.body  # the archived copy
    assert http_server.count("/etag") == 2


def test_last_modified_makes_refresh_crawl_not_modified(http_server: FixtureServer, tmp_path: Path) -> None:
    stamp = "Wed, 01 Jan 2025 00:00:00 GMT"

    def page(request: Request) -> Reply:
        if request.headers.get("if-modified-since") == stamp:
            return Reply(304)
        return Reply.html("<p>dated</p>", last_modified=stamp)

    http_server.route("/dated", page)
    settings = crawl_settings(tmp_path)
    crawl_sync([res(http_server.url("/dated"))], settings, progress=False)
    second = crawl_sync([res(http_server.url("/dated"))], settings, refresh=True, progress=False)[0]
    assert second.status == "not-modified"


def test_resume_after_crash_fetches_only_the_rest(http_server: FixtureServer, tmp_path: Path) -> None:
    for i in range(4):
        http_server.route(f"/p{i}", Reply.html(f"<p>page {i}</p>"))
    settings = crawl_settings(tmp_path)
    resources = [res(http_server.url(f"/p{i}"), f"r{i}") for i in range(4)]
    crawl_sync(resources[:2], settings, progress=False)  # the "crashed" run got this far
    results = crawl_sync(resources, settings, progress=False)
    assert [r.status for r in results] == ["ok"] * 4
    assert [http_server.count(f"/p{i}") for i in range(4)] == [1, 1, 1, 1]
    assert results[0].body == b"<p>page 0</p>"  # replayed from the archive


def test_resume_after_truncated_archive_refetches_the_cut_record(http_server: FixtureServer, tmp_path: Path) -> None:
    for i in range(3):
        http_server.route(f"/p{i}", Reply.html(f"<p>page {i}</p>" + "z" * 3000))
    settings = crawl_settings(tmp_path, concurrency=1)
    resources = [res(http_server.url(f"/p{i}"), f"r{i}") for i in range(3)]
    crawl_sync(resources, settings, progress=False)
    warc = next((tmp_path / "archive").glob("*.warc.gz"))
    warc.write_bytes(warc.read_bytes()[:-40])  # the crash cut the last record
    results = crawl_sync(resources, settings, progress=False)
    assert [r.status for r in results] == ["ok"] * 3
    assert sum(http_server.count(f"/p{i}") for i in range(3)) == 4  # only the cut one again


def test_failed_urls_are_retried_on_resume(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/later", [Reply(404), Reply.html("<p>now it exists</p>")])
    settings = crawl_settings(tmp_path)
    assert crawl_sync([res(http_server.url("/later"))], settings, progress=False)[0].status == "failed"
    assert crawl_sync([res(http_server.url("/later"))], settings, progress=False)[0].status == "ok"


# --- SSRF guard ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("file:///etc/passwd", "scheme 'file'"),
        ("ftp://example.org/x", "scheme 'ftp'"),
        ("gopher://example.org/", "scheme 'gopher'"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://[::1]:8080/", "loopback"),
        ("http://127.0.0.2/", "loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http:///nohost", "no host"),
    ],
)
def test_ssrf_guard_refuses(url: str, needle: str) -> None:
    reason = asyncio.run(check_url(url, CrawlSettings(allowed_private_hosts=["127.0.0.1"])))
    assert reason is not None and reason.startswith("blocked:") and needle in reason
    assert "\n" not in reason


def test_ssrf_guard_allows_listed_and_public_addresses() -> None:
    crawl = CrawlSettings(allowed_private_hosts=["127.0.0.1", "192.168.0.0/16"])
    assert check_addresses("127.0.0.1", ["127.0.0.1"], crawl) is None
    assert check_addresses("nas", ["192.168.1.7"], crawl) is None
    assert check_addresses("example.org", ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"], crawl) is None
    assert "10.1.2.3" in (check_addresses("mixed", ["93.184.215.14", "10.1.2.3"], crawl) or "")
    assert check_addresses("x", ["::ffff:10.0.0.1"], CrawlSettings()) is not None
    assert check_addresses("x", ["10.0.0.1"], CrawlSettings(allow_private_hosts=True)) is None


def test_crawl_refuses_file_url_and_metadata_address(tmp_path: Path) -> None:
    results = crawl_sync(
        [res("file:///etc/passwd", "f"), res("http://169.254.169.254/latest/meta-data/", "m"),
         res("http://10.0.0.1/", "p")],
        crawl_settings(tmp_path), progress=False,
    )
    assert [r.status for r in results] == ["failed"] * 3
    assert all(r.reason.startswith("blocked:") for r in results)


def test_redirect_to_private_address_is_refused(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/jump", Reply.redirect(f"http://127.0.0.2:{http_server.port}/internal"))
    result = fetch_one(http_server, tmp_path, "/jump")
    assert result.status == "failed"
    assert result.reason.startswith("blocked: 127.0.0.2 is a loopback address")
    assert result.final_url == f"http://127.0.0.2:{http_server.port}/internal"


def test_redirect_to_file_scheme_is_refused(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/jump", Reply.redirect("file:///etc/passwd"))
    result = fetch_one(http_server, tmp_path, "/jump")
    assert result.status == "failed" and "scheme 'file'" in result.reason


# --- isolation, politeness, rewrites ------------------------------------------------------------


def test_each_failure_affects_no_other_url(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/good", Reply.html("<p>good</p>"))
    http_server.route("/reset", Reply(200, b"x" * 5000, {"Content-Type": "text/html"}, reset_after=10))
    http_server.route("/slow", Reply(200, b"<p>slow</p>", {"Content-Type": "text/html"}, delay_s=1.0))
    http_server.route("/binary", Reply.raw(b"\x00\x01\x02" * 100, "text/html"))
    http_server.route("/loop", Reply.redirect("/loop"))
    urls = ["/reset", "/slow", "/good", "/binary", "/loop", "/missing"]
    resources = [res(http_server.url(u), f"r{i}") for i, u in enumerate(urls)]
    resources.append(res("file:///etc/passwd", "rf"))
    results = crawl_sync(resources, crawl_settings(tmp_path, retries=0), progress=False)
    assert [r.resource_id for r in results] == [r.id for r in resources]
    assert [r.status for r in results] == ["failed", "failed", "ok", "failed", "failed", "failed", "failed"]
    assert results[2].body == b"<p>good</p>"


def test_host_delay_is_honoured(http_server: FixtureServer, tmp_path: Path) -> None:
    times: list[float] = []

    def stamped(request: Request) -> Reply:
        times.append(time.monotonic())
        return Reply.html("<p>t</p>")

    for i in range(3):
        http_server.route(f"/d{i}", stamped)
    resources = [res(http_server.url(f"/d{i}"), f"r{i}") for i in range(3)]
    crawl_sync(resources, crawl_settings(tmp_path, host_delay_s=0.2, per_host_concurrency=2), progress=False)
    times.sort()
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(times) == 3 and min(gaps) >= 0.18


def test_per_host_concurrency_is_limited(http_server: FixtureServer, tmp_path: Path) -> None:
    lock = threading.Lock()
    active, peak = [0], [0]

    def slowish(request: Request) -> Reply:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return Reply.html("<p>c</p>")

    for i in range(8):
        http_server.route(f"/c{i}", slowish)
    resources = [res(http_server.url(f"/c{i}"), f"r{i}") for i in range(8)]
    results = crawl_sync(resources, crawl_settings(tmp_path, per_host_concurrency=2), progress=False)
    assert all(r.status == "ok" for r in results)
    assert peak[0] <= 2


def test_url_rewrite_keeps_catalog_url(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/blog/post", Reply.html("<p>rewritten</p>"))
    settings = crawl_settings(tmp_path, url_rewrites={"https://blog.example.com/": http_server.url("/blog/")})
    result = crawl_sync([res("https://blog.example.com/post")], settings, progress=False)[0]
    assert result.status == "ok"
    assert result.url == "https://blog.example.com/post"
    assert result.final_url == http_server.url("/blog/post")


def test_offline_setting_replays_without_network(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/page", Reply.html("<p>archived</p>"))
    crawl_sync([res(http_server.url("/page"))], crawl_settings(tmp_path), progress=False)
    offline = crawl_settings(tmp_path, offline=True)
    resources = [res(http_server.url("/page"), "a"), res(http_server.url("/new"), "b")]
    results = crawl_sync(resources, offline, progress=False)
    assert [r.status for r in results] == ["ok", "skipped-offline"]
    assert http_server.count("/page") == 1 and http_server.count("/new") == 0


# --- follow-ups in a crawl -----------------------------------------------------------------------


def test_arxiv_and_github_followups_are_fetched(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/arxiv/abs/2402.13499", Reply.html("<p>abstract</p>"))
    http_server.route("/arxiv/pdf/2402.13499", Reply.file("paper.pdf"))
    http_server.route("/gh/gpu-mode/lectures", Reply.html("<p>repo page</p>"))
    http_server.route(
        "/raw/gpu-mode/lectures/HEAD/README.md", Reply.text("# Lectures", content_type="text/plain; charset=utf-8")
    )
    settings = crawl_settings(
        tmp_path,
        url_rewrites={
            "https://arxiv.org/": http_server.url("/arxiv/"),
            "https://github.com/": http_server.url("/gh/"),
            "https://raw.githubusercontent.com/": http_server.url("/raw/"),
        },
    )
    results = crawl_sync(
        [res("https://arxiv.org/abs/2402.13499", "paper"), res("https://github.com/gpu-mode/lectures", "repo")],
        settings, progress=False,
    )
    summary = [(r.url, r.status, r.resource_id, r.parent_url) for r in results]
    assert summary == [
        ("https://arxiv.org/abs/2402.13499", "ok", "paper", None),
        ("https://arxiv.org/pdf/2402.13499", "ok", "paper", "https://arxiv.org/abs/2402.13499"),
        ("https://github.com/gpu-mode/lectures", "ok", "repo", None),
        (
            "https://raw.githubusercontent.com/gpu-mode/lectures/HEAD/README.md", "ok", "repo",
            "https://github.com/gpu-mode/lectures",
        ),
    ]
    assert results[1].content_type == "application/pdf"
    assert results[3].content_type == "text/markdown; charset=utf-8"


def test_series_parts_are_followed_only_with_depth_1(http_server: FixtureServer, tmp_path: Path) -> None:
    http_server.route("/posts/matmul-part-1/", Reply.file("series-part-1.html"))
    http_server.route("/posts/matmul-part-2/", Reply.html("<title>Part 2</title>"))
    http_server.route("/posts/matmul-part-3/", Reply.html("<title>Part 3</title>"))
    start = res(http_server.url("/posts/matmul-part-1/"))
    shallow = crawl_sync([start], crawl_settings(tmp_path / "a"), progress=False)
    deep = crawl_sync([start], crawl_settings(tmp_path / "b", follow_depth=1), progress=False)
    assert len(shallow) == 1
    assert [(r.url, r.status, r.parent_url) for r in deep[1:]] == [
        (http_server.url("/posts/matmul-part-2/"), "ok", start.url),
        (http_server.url("/posts/matmul-part-3/"), "ok", start.url),
    ]


# --- small pure helpers ----------------------------------------------------------------------------


def test_rewrite_and_unrewrite_are_inverse() -> None:
    rules = {"https://a.example/": "http://127.0.0.1:9/a/", "https://a.example/deep/": "http://127.0.0.1:9/d/"}
    assert rewrite_url("https://a.example/deep/x", rules) == "http://127.0.0.1:9/d/x"  # longest prefix wins
    assert unrewrite_url("http://127.0.0.1:9/a/y", rules) == "https://a.example/y"
    assert rewrite_url("https://b.example/", rules) == "https://b.example/"


def test_retry_after_accepts_seconds_and_dates() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_classify_body_cases() -> None:
    assert classify_body("", b"%PDF-1.7 ...") == ("application/pdf", None)
    assert classify_body("text/html", b"%PDF-1.4\n\x00\x01") == ("application/pdf", None)
    assert classify_body("", b"<!doctype html><p>x</p>")[0] == "text/html; charset=utf-8"
    assert classify_body("application/octet-stream", b"\x00\x01\x02\x03")[1] is not None
    assert classify_body("text/plain", b"# Title", "https://x/README.md")[0] == "text/markdown; charset=utf-8"
    assert detect_charset("é".encode("latin-1"), "text/plain") == "cp1252"
    assert detect_charset(b"\xef\xbb\xbfok", "text/html; charset=latin-1") == "utf-8"  # the BOM wins
