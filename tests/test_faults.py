"""Faults: killed processes, a full disk and corrupt files. Each ends in a clear one-line error or a
clean resume, and the previous index stays loadable."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from http_fixture import FixtureServer, Reply, http_server_fixture  # noqa: F401
from index.search import load_searcher
from core.settings import load_settings

GPUGUIDE = str(Path(sys.executable).with_name("gpuguide"))
PAGES = 8


def gpuguide(home: Path, *args: str, wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    if not wait:
        return subprocess.Popen([GPUGUIDE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run([GPUGUIDE, *args], capture_output=True, text=True, env=env, timeout=300)


def page(i: int) -> str:
    words = " ".join(f"tile{i} shared memory warp {i} kernel occupancy bandwidth" for _ in range(30))
    return f"<html><head><title>Page {i}</title></head><body><article><h1>Page {i}</h1><p>{words}</p></article></body></html>"


def setup_site(home: Path, server: FixtureServer, delay_s: float = 0.0) -> None:
    """A list of PAGES resources on the loopback server, served one at a time."""
    home.mkdir(parents=True, exist_ok=True)
    entries = "\n".join(f"- [Page {i}](https://site.example/p{i}) - Author {i}. Notes on tiling {i}" for i in range(PAGES))
    (home / "list.md").write_text(f"## Kernels\n\n### Tiling\n\n#### Tier 1\n\n{entries}\n")
    for i in range(PAGES):
        server.route(f"/p{i}", Reply.html(page(i), delay_s=delay_s) if delay_s else Reply.html(page(i)))
    (home / "gpuguide.toml").write_text(
        f'[catalog]\nsource = "{home / "list.md"}"\n'
        '[crawl]\nallowed_private_hosts = ["127.0.0.1"]\nhost_delay_s = 0\nconcurrency = 1\nper_host_concurrency = 1\n'
        "retries = 0\nread_timeout_s = 5\n"
        f'[crawl.url_rewrites]\n"https://site.example/" = "{server.url("/")}"\n'
    )


def page_requests(server: FixtureServer) -> int:
    return sum(server.count(f"/p{i}") for i in range(PAGES))


def test_a_killed_crawl_resumes_without_refetching_what_it_archived(http_server, isolated_home):
    setup_site(isolated_home, http_server, delay_s=0.4)
    proc = gpuguide(isolated_home, "ingest", "--no-index", wait=False)
    deadline = time.monotonic() + 30
    while page_requests(http_server) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let the fourth response reach the archive
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    before = page_requests(http_server)
    out = gpuguide(isolated_home, "ingest", "--no-index", "--json")
    assert out.returncode == 0, out.stderr
    refetched = page_requests(http_server) - before
    assert refetched <= PAGES - 3  # at least three archived pages were replayed, not fetched again
    assert {row["status"] for row in json.loads(out.stdout)["urls"]} == {"ok"}


@pytest.fixture
def indexed_home(http_server, isolated_home) -> Path:
    setup_site(isolated_home, http_server)
    out = gpuguide(isolated_home, "ingest")
    assert out.returncode == 0, out.stderr
    return isolated_home


def loadable_with_results(home: Path) -> int:
    os.environ["GPUGUIDE_HOME"] = str(home)
    searcher = load_searcher(load_settings())
    assert searcher.search("shared memory tiling", k=3)
    return len(searcher.chunks)


def test_a_crawl_killed_after_an_index_exists_leaves_that_index_loadable(indexed_home, http_server):
    chunks = loadable_with_results(indexed_home)
    for i in range(PAGES):
        http_server.route(f"/p{i}", Reply.html(page(i), delay_s=0.5))
    proc = gpuguide(indexed_home, "ingest", "--refresh", wait=False)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert loadable_with_results(indexed_home) == chunks


def test_a_killed_index_build_leaves_the_previous_index_loadable_and_the_next_build_works(indexed_home):
    chunks = loadable_with_results(indexed_home)
    fresh_cache = indexed_home / "fresh-embeddings.sqlite3"  # no cache hits: the rebuild has to encode
    proc = gpuguide(indexed_home, "--set", f"embed.cache_file={json.dumps(str(fresh_cache))}", "index", "--rebuild", wait=False)
    deadline = time.monotonic() + 60
    while not list(indexed_home.glob(".index-build-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert loadable_with_results(indexed_home) == chunks
    out = gpuguide(indexed_home, "index", "--rebuild")
    assert out.returncode == 0, out.stderr
    assert loadable_with_results(indexed_home) == chunks


def test_a_full_disk_during_the_index_write_is_a_clear_error_and_the_old_index_survives(indexed_home, monkeypatch):
    """The write error is injected at the storage boundary (faiss.write_index), as a full disk raises it."""
    import faiss

    from assistant.cli import main

    chunks = loadable_with_results(indexed_home)

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(faiss, "write_index", disk_full)
    monkeypatch.setenv("GPUGUIDE_HOME", str(indexed_home))
    assert main(["index", "--rebuild"]) != 0
    assert loadable_with_results(indexed_home) == chunks
    assert not list(indexed_home.glob(".index-build-*"))


def test_a_corrupt_store_is_a_one_line_error(indexed_home):
    (indexed_home / "store.sqlite3").write_bytes(b"this is not a database" * 100)
    for name in ("store.sqlite3-wal", "store.sqlite3-shm"):
        (indexed_home / name).unlink(missing_ok=True)
    out = gpuguide(indexed_home, "chunks", "--json")
    assert out.returncode == 2
    assert "store.sqlite3" in out.stderr and out.stderr.count("\n") == 1


def test_a_corrupt_faiss_file_is_a_one_line_error_naming_the_rebuild(indexed_home):
    faiss_files = [p for p in (indexed_home / "index").iterdir() if p.suffix in (".faiss", ".index")]
    assert faiss_files
    faiss_files[0].write_bytes(b"garbage" * 50)
    out = gpuguide(indexed_home, "search", "tiling")
    assert out.returncode == 2
    assert "gpuguide index --rebuild" in out.stderr and out.stderr.count("\n") == 1


def test_a_corrupt_warc_is_a_one_line_error(isolated_home):
    isolated_home.mkdir(parents=True)
    bad = isolated_home / "bad.warc.gz"
    bad.write_bytes(b"definitely not a web archive\n" * 20)
    out = gpuguide(isolated_home, "ingest", "--warc", str(bad))
    assert out.returncode == 2
    assert "bad.warc.gz" in out.stderr and out.stderr.count("\n") == 1


def test_catalog_sync_from_a_truncated_list_is_refused_unless_forced(isolated_home, fixtures_dir):
    full = fixtures_dir / "lists" / "current.md"
    assert gpuguide(isolated_home, "catalog", "sync", "--from", str(full), "--force").returncode == 0
    before = (isolated_home / "catalog.json").read_bytes()
    truncated = isolated_home / "truncated.md"
    truncated.write_text("\n".join(full.read_text().splitlines()[:19]))
    out = gpuguide(isolated_home, "catalog", "sync", "--from", str(truncated))
    assert out.returncode == 2 and "--force" in out.stderr
    assert (isolated_home / "catalog.json").read_bytes() == before
    assert gpuguide(isolated_home, "catalog", "sync", "--from", str(truncated), "--force").returncode == 0
