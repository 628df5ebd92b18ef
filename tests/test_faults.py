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
from collections.abc import Callable
from pathlib import Path

import pytest
from http_fixture import FixtureServer, Reply, http_server_fixture  # noqa: F401

from core.settings import load_settings
from index.search import load_searcher

GPUGUIDE = str(Path(sys.executable).with_name("gpuguide"))
PAGES = 8


def gpuguide(home: Path, *args: str, wait: bool = True) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    if not wait:
        return subprocess.Popen([GPUGUIDE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run([GPUGUIDE, *args], capture_output=True, text=True, env=env, timeout=300, check=False)


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


def wait_for(what: str, ready: Callable[[], bool], proc: subprocess.Popen[str], timeout_s: float = 120) -> None:
    """Block until `ready()` holds while the child is still running; fail (never pass) otherwise.

    Kill tests must kill mid-work: a child that finished, crashed or never got going makes the
    "old state survives" assertions hold trivially.
    """
    deadline = time.monotonic() + timeout_s
    while not ready():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"the child exited ({proc.returncode}) before {what}: {err[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no sign of {what} within {timeout_s:g} s")
        time.sleep(0.01)


def kill_now(proc: subprocess.Popen[str]) -> None:
    assert proc.poll() is None, "the child finished before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL


def index_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted((home / "index").rglob("*")) if p.is_file()}


def test_a_killed_crawl_resumes_without_refetching_what_it_archived(http_server, isolated_home):
    setup_site(isolated_home, http_server, delay_s=0.4)
    proc = gpuguide(isolated_home, "ingest", "--no-index", wait=False)
    # One page at a time (concurrency 1): the fifth request starts only after the fourth response was
    # archived (each record is flushed as written), so at that moment four pages are safely on disk.
    wait_for("the fifth page request", lambda: page_requests(http_server) >= 5, proc)
    kill_now(proc)
    before = page_requests(http_server)
    assert before < PAGES  # killed mid-crawl
    out = gpuguide(isolated_home, "ingest", "--no-index", "--json")
    assert out.returncode == 0, out.stderr
    refetched = page_requests(http_server) - before
    assert refetched <= PAGES - 4  # the four archived pages were replayed, not fetched again
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
    before = index_files(indexed_home)
    first_crawl = page_requests(http_server)
    for i in range(PAGES):
        http_server.route(f"/p{i}", Reply.html(page(i), delay_s=0.5))
    proc = gpuguide(indexed_home, "ingest", "--refresh", wait=False)
    wait_for("the re-crawl's second page request", lambda: page_requests(http_server) >= first_crawl + 2, proc)
    kill_now(proc)
    assert page_requests(http_server) - first_crawl < PAGES  # killed mid-crawl
    assert index_files(indexed_home) == before
    assert loadable_with_results(indexed_home) == chunks


def test_a_killed_index_build_leaves_the_previous_index_loadable_and_the_next_build_works(indexed_home):
    chunks = loadable_with_results(indexed_home)
    before = index_files(indexed_home)
    fresh_cache = indexed_home / "fresh-embeddings.sqlite3"  # no cache hits: the rebuild has to encode
    proc = gpuguide(indexed_home, "--set", f"embed.cache_file={json.dumps(str(fresh_cache))}", "index", "--rebuild", wait=False)
    # The build dir exists from the start of the build until the final swap renames it into place.
    wait_for("the new build dir", lambda: bool(list(indexed_home.glob(".index-build-*"))), proc)
    kill_now(proc)
    assert list(indexed_home.glob(".index-build-*"))  # the kill interrupted the build before its swap
    assert index_files(indexed_home) == before
    assert loadable_with_results(indexed_home) == chunks
    out = gpuguide(indexed_home, "index", "--rebuild")
    assert out.returncode == 0, out.stderr
    assert loadable_with_results(indexed_home) == chunks
    assert not list(indexed_home.glob(".index-build-*"))  # the killed build's leftovers are cleared


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
