"""The WARC archive: writing, indexing, replay, truncated and garbage files.

Archives are built in each test with warcio or the crawler's ArchiveWriter; no test reads a file
outside the repository.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from core.decode import decode_body
from core.records import Resource
from core.settings import Settings
from ingest.archive import ArchiveError, ArchiveIndex, ArchiveWriter, find_archives
from ingest.fetch import replay


def res(url: str, rid: str = "r1") -> Resource:
    return Resource(
        id=rid, title="T", url=url, authors="", note="", topic="T", section="S", tier=1,
        kind="blog", position=0, list_anchor="#s",
    )


def build_warc(path: Path, pages: list[tuple[str, int, dict[str, str], bytes]], gzip: bool = True) -> Path:
    """A WARC of (uri, status, headers, body) response records, written the way other tools do."""
    with open(path, "wb") as handle:
        writer = WARCWriter(handle, gzip=gzip)
        for uri, status, headers, body in pages:
            http = StatusAndHeaders(f"{status} X", list(headers.items()), protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(uri, "response", payload=io.BytesIO(body), http_headers=http))
    return path


HTML = {"Content-Type": "text/html; charset=utf-8"}


def test_writer_records_responses_and_failures(tmp_path: Path) -> None:
    with ArchiveWriter(tmp_path) as writer:
        writer.write_response(
            "https://a.example/", 200, "OK",
            [("Content-Type", "text/html"), ("Content-Encoding", "gzip"), ("ETag", '"e1"')], b"<p>hi</p>",
        )
        writer.write_failure("https://b.example/", {"url": "https://b.example/", "reason": "HTTP 404"})
    assert writer.path is not None and writer.path.name.startswith("crawl-") and writer.path.name.endswith(".warc.gz")
    with open(writer.path, "rb") as handle:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.http_headers, r.content_stream().read())
                   for r in ArchiveIterator(handle)]
    assert [r[0] for r in records] == ["warcinfo", "response", "metadata"]
    _, uri, http, body = records[1]
    assert (uri, body) == ("https://a.example/", b"<p>hi</p>")
    assert http.get_header("Content-Encoding") is None  # the stored body is decoded
    assert http.get_header("Content-Length") == str(len(b"<p>hi</p>"))
    assert json.loads(records[2][3])["reason"] == "HTTP 404"


def test_writer_creates_no_file_until_first_record(tmp_path: Path) -> None:
    with ArchiveWriter(tmp_path / "archive"):
        pass
    assert find_archives(tmp_path / "archive") == []


def test_replay_matches_exact_and_normalised_urls(tmp_path: Path) -> None:
    warc = build_warc(tmp_path / "a.warc.gz", [
        ("https://www.site.example/post/", 200, HTML, b"<p>one</p>"),
        ("http://other.example/x", 200, HTML, b"<p>two</p>"),
    ])
    results = replay(
        [res("https://www.site.example/post/", "exact"), res("http://site.example/post", "loose"),
         res("https://other.example/x/", "scheme")],
        [warc], Settings(),
    )
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert results[1].final_url == "https://www.site.example/post/"
    assert decode_body(results[2].body, results[2].content_type) == "<p>two</p>"


def test_replay_absent_url_is_skipped_offline(tmp_path: Path) -> None:
    warc = build_warc(tmp_path / "a.warc.gz", [("https://a.example/", 200, HTML, b"<p>a</p>")])
    results = replay([res("https://a.example/", "a"), res("https://b.example/", "b"), res("", "c")], [warc], Settings())
    assert [(r.status, r.reason) for r in results] == [
        ("ok", ""), ("skipped-offline", "not in the archive"), ("failed", "no URL"),
    ]


def test_replay_follows_archived_redirects(tmp_path: Path) -> None:
    warc = build_warc(tmp_path / "a.warc.gz", [
        ("https://a.example/old", 301, {"Location": "/new"}, b""),
        ("https://a.example/new", 200, HTML, b"<p>moved</p>"),
    ])
    result = replay([res("https://a.example/old")], [warc], Settings())[0]
    assert (result.status, result.final_url, result.body) == ("ok", "https://a.example/new", b"<p>moved</p>")


def test_replay_uses_latest_record_across_files(tmp_path: Path) -> None:
    old = build_warc(tmp_path / "crawl-1.warc.gz", [("https://a.example/", 200, HTML, b"<p>old</p>")])
    new = build_warc(tmp_path / "crawl-2.warc.gz", [("https://a.example/", 200, HTML, b"<p>new</p>")])
    assert replay([res("https://a.example/")], [old, new], Settings())[0].body == b"<p>new</p>"


def test_replay_includes_archived_followups_only(tmp_path: Path) -> None:
    warc = build_warc(tmp_path / "a.warc.gz", [
        ("https://arxiv.org/abs/2402.13499", 200, HTML, b"<p>abstract</p>"),
        ("https://arxiv.org/pdf/2402.13499", 200, {"Content-Type": "application/pdf"}, b"%PDF-1.4 x"),
        ("https://github.com/o/r", 200, HTML, b"<p>repo</p>"),
    ])
    resources = [res("https://arxiv.org/abs/2402.13499", "p"), res("https://github.com/o/r", "g")]
    results = replay(resources, [warc], Settings())
    assert [(r.url, r.parent_url) for r in results] == [
        ("https://arxiv.org/abs/2402.13499", None),
        ("https://arxiv.org/pdf/2402.13499", "https://arxiv.org/abs/2402.13499"),
        ("https://github.com/o/r", None),  # its README is not archived: left out, not an error
    ]


def test_truncated_warc_is_readable_up_to_last_complete_record(tmp_path: Path) -> None:
    pages = [(f"https://a.example/{i}", 200, HTML, b"<p>%d</p>" % i + b"z" * 2000) for i in range(3)]
    for gzip in (True, False):
        warc = build_warc(tmp_path / f"cut-{gzip}.warc{'.gz' if gzip else ''}", pages, gzip=gzip)
        warc.write_bytes(warc.read_bytes()[:-300])
        index = ArchiveIndex.scan([warc])
        assert [e.uri for e in index.entries] == ["https://a.example/0", "https://a.example/1"]
        results = replay([res(p[0], str(i)) for i, p in enumerate(pages)], [warc], Settings())
        assert [r.status for r in results] == ["ok", "ok", "skipped-offline"]


def test_garbage_file_raises_one_line_archive_error(tmp_path: Path) -> None:
    junk = tmp_path / "notes.warc.gz"
    junk.write_bytes(b"this is not a web archive\n" * 20)
    with pytest.raises(ArchiveError) as caught:
        replay([res("https://a.example/")], [junk], Settings())
    message = str(caught.value)
    assert str(junk) in message and "\n" not in message


def test_missing_file_raises_archive_error(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="nope.warc.gz"):
        ArchiveIndex.scan([tmp_path / "nope.warc.gz"])


def test_failure_records_are_indexed_but_not_replayed(tmp_path: Path) -> None:
    with ArchiveWriter(tmp_path) as writer:
        writer.write_failure("https://a.example/", {"url": "https://a.example/", "reason": "HTTP 500 (3 attempts)"})
    result = replay([res("https://a.example/")], find_archives(tmp_path), Settings())[0]
    assert result.status == "skipped-offline"
    assert "HTTP 500" in result.reason


def test_replay_of_a_crawl_sized_archive_written_by_the_crawler(tmp_path: Path) -> None:
    """52 pages over several hosts, a redirect hop in front of every fourth, failure notes in between:
    the shape a real crawl leaves, written by the crawler's own writer."""
    urls = [f"https://site{i % 5}.example/post/{i}" for i in range(52)]
    with ArchiveWriter(tmp_path / "archive") as writer:
        for i, url in enumerate(urls):
            body = f"<html><head><title>Post {i}</title></head><body><p>page {i} ü</p></body></html>".encode()
            if i % 4 == 0:
                writer.write_response(url + "/old", 301, "Moved", [("Location", url)], b"")
            writer.write_response(url, 200, "OK", [("Content-Type", "text/html; charset=utf-8")], body)
            if i % 10 == 0:
                writer.write_failure(f"https://gone.example/{i}", {"url": f"https://gone.example/{i}", "reason": "HTTP 404"})
    archives = find_archives(tmp_path / "archive")
    catalog = [res(u + "/old" if i % 4 == 0 else u, f"r{i}") for i, u in enumerate(urls)]

    results = replay([*catalog, res("https://not-archived.example/", "x")], archives, Settings())

    assert [r.status for r in results[:52]] == ["ok"] * 52
    assert [r.final_url for r in results[:52]] == urls  # redirect hops followed to the page
    assert results[-1].status == "skipped-offline"
    assert all(r.content_type.startswith("text/html") for r in results[:52])
    assert [decode_body(r.body, r.content_type) for r in results[:3]] == [
        f"<html><head><title>Post {i}</title></head><body><p>page {i} ü</p></body></html>" for i in range(3)
    ]
