"""A list update flows through without a crawl: `catalog sync` records what changed, `gpuguide index` rebuilds
the cards and context headers of changed resources, drops removed ones and queues added ones for crawling.

Pages come from a real server on 127.0.0.1 (url rewrites in the settings); the index uses the packaged
embedder and real FAISS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_fixture import FixtureServer, Reply, crawl_settings, http_server_fixture  # noqa: F401

from core.settings import Settings
from ingest.catalog import current_catalog
from ingest.listsync import last_sync, sync_list
from ingest.pipeline import run_ingest
from ingest.refresh import pending_crawl, refresh_from_catalog
from ingest.store import ChunkStore

LISTS = Path(__file__).parent / "fixtures" / "lists"
GPUGUIDE = str(Path(sys.executable).with_name("gpuguide"))
TEXTBOOK = "https://publisher.example.com/books/gpu-textbook/"
REMOVED = "https://huggingface.co/example/KernelModel"
ADDED = "https://blog.example.org/posts/warp-shuffle/"
TEXTBOOK_PAGE = (
    "<html><head><title>The Textbook</title></head><body><main><h1>The Textbook</h1>"
    "<p>This book teaches parallel programming on graphics processors from the first kernel onwards. "
    "Chapters cover memory coalescing, shared memory tiling, reductions, scans and histograms, with "
    "exercises that ask the reader to measure each kernel against the hardware's memory bandwidth.</p>"
    "<h2>Contents</h2><p>Part one introduces threads, blocks and grids; part two studies performance "
    "patterns such as tiling and privatization; part three applies them to sparse matrices and graphs.</p>"
    "</main></body></html>"
)
REWRITES = {"https://blog.example.org/": "/blog/", "https://publisher.example.com/": "/pub/"}


def newer_list(tmp_path: Path) -> Path:
    """The fixture list, one version later: a note reworded, an entry added, an entry removed."""
    text = (LISTS / "current.md").read_text()
    text = text.replace("Hwu, Kirk. The canonical textbook", "Hwu, Kirk. The canonical textbook, 5th edition")
    text = "\n".join(line for line in text.splitlines() if REMOVED not in line) + "\n"
    text = text.replace(
        "- [Attention Paper]",
        f"- [Warp Shuffle Notes]({ADDED}) - Ada Lovelace. Register-level exchange between lanes\n- [Attention Paper]",
    )
    path = tmp_path / "newer.md"
    path.write_text(text)
    return path


def serve_pages(server: FixtureServer) -> None:
    server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
    server.route("/pub/books/gpu-textbook/", Reply.html(TEXTBOOK_PAGE))
    server.route("/blog/posts/warp-shuffle/", Reply.file("../pages/article.html"))


def settings_for(home: Path, server: FixtureServer) -> Settings:
    rewrites = {k: server.url(v) for k, v in REWRITES.items()}
    return crawl_settings(home, url_rewrites=rewrites, retries=0, follow_arxiv_pdf=False,
                          follow_github_readme=False)


@pytest.fixture
def ingested(isolated_home: Path, http_server: FixtureServer) -> Settings:
    """A data dir on the fixture list with its pages crawled and stored (no index)."""
    serve_pages(http_server)
    settings = settings_for(isolated_home, http_server)
    sync_list(settings, str(LISTS / "current.md"), force=True)
    run_ingest(current_catalog(settings), settings, progress=False)
    return settings


def card_text(settings: Settings, url: str) -> str:
    chunks = ChunkStore(settings.store_file).chunks()
    return next(c.text for c in chunks if c.url == url and c.source_kind == "card")


# --- catalog sync ------------------------------------------------------------------------------


def test_sync_records_the_lists_version_and_what_changed(ingested, tmp_path):
    before = last_sync(ingested)
    record = sync_list(ingested, str(newer_list(tmp_path)))
    assert record.previous_version == before.version != record.version
    assert [c.fields for c in record.changed if c.title == "The Textbook"] == [["note"]]
    assert [a["title"] for a in record.added] == ["Warp Shuffle Notes"]
    assert [r["title"] for r in record.removed] == ["KernelModel"]
    assert last_sync(ingested) == record


def test_sync_of_the_same_list_reports_no_change(ingested):
    record = sync_list(ingested, str(LISTS / "current.md"))
    assert record.unchanged and record.version == record.previous_version


# --- refresh: store follows the catalog --------------------------------------------------------


def test_refresh_rebuilds_the_card_of_a_resource_whose_note_changed(ingested, tmp_path):
    sync_list(ingested, str(newer_list(tmp_path)))
    refresh = refresh_from_catalog(ingested, current_catalog(ingested))
    textbook = next(r.id for r in current_catalog(ingested) if r.url == TEXTBOOK)
    assert textbook in refresh.changed
    assert "5th edition" in card_text(ingested, TEXTBOOK)


def test_refresh_recuts_stored_pages_with_the_new_note_in_their_context(ingested, tmp_path):
    assert any(c.url == TEXTBOOK and c.source_kind != "card" for c in ChunkStore(ingested.store_file).chunks())
    sync_list(ingested, str(newer_list(tmp_path)))
    refresh_from_catalog(ingested, current_catalog(ingested))
    pages = [c for c in ChunkStore(ingested.store_file).chunks() if c.url == TEXTBOOK and c.source_kind != "card"]
    assert pages and all("5th edition" in c.context for c in pages)


def test_refresh_removes_every_trace_of_a_resource_the_list_dropped(ingested, tmp_path):
    sync_list(ingested, str(newer_list(tmp_path)))
    refresh = refresh_from_catalog(ingested, current_catalog(ingested))
    store = ChunkStore(ingested.store_file)
    assert len(refresh.removed) == 1
    assert not [c for c in store.chunks() if c.url == REMOVED]
    assert refresh.removed[0] not in store.reported_resources()


def test_refresh_of_an_unchanged_catalog_writes_nothing(ingested):
    refresh_from_catalog(ingested, current_catalog(ingested))
    assert refresh_from_catalog(ingested, current_catalog(ingested)).empty


def test_refresh_does_not_fetch_anything(ingested, tmp_path, http_server):
    before = len(http_server.requests)
    sync_list(ingested, str(newer_list(tmp_path)))
    refresh_from_catalog(ingested, current_catalog(ingested))
    assert len(http_server.requests) == before


# --- the crawl queue -----------------------------------------------------------------------------


def test_a_resource_the_sync_added_waits_for_a_crawl(ingested, tmp_path):
    assert pending_crawl(ingested, current_catalog(ingested)) == []
    sync_list(ingested, str(newer_list(tmp_path)))
    assert [r.url for r in pending_crawl(ingested, current_catalog(ingested))] == [ADDED]


def test_crawling_the_pending_resources_fetches_only_them_and_keeps_the_others(ingested, tmp_path, http_server):
    sync_list(ingested, str(newer_list(tmp_path)))
    resources = current_catalog(ingested)
    before = {p: http_server.count(p) for p in ("/pub/books/gpu-textbook/", "/blog/posts/warp-shuffle/")}
    result = run_ingest(resources, ingested, progress=False, only={r.id for r in pending_crawl(ingested, resources)})
    assert http_server.count("/blog/posts/warp-shuffle/") == before["/blog/posts/warp-shuffle/"] + 1
    assert http_server.count("/pub/books/gpu-textbook/") == before["/pub/books/gpu-textbook/"]
    assert [row.url for row in result.rows] == [ADDED]
    store = ChunkStore(ingested.store_file)
    assert any(c.url == TEXTBOOK and c.source_kind != "card" for c in store.chunks())
    assert {row.url for row in store.last_report().rows} >= {TEXTBOOK, ADDED}
    assert pending_crawl(ingested, resources) == []


def test_a_crawl_reports_its_progress_per_resource(ingested):
    seen = []
    resources = current_catalog(ingested)
    run_ingest(resources, ingested, progress=False, on_progress=lambda p: seen.append((p.done, p.total, p.failed)))
    assert [done for done, _, _ in seen] == list(range(1, len(resources) + 1))
    assert seen[-1][1] == len(resources) and 0 < seen[-1][2] < len(resources)


# --- the index follows, incrementally ---------------------------------------------------------------


def test_index_after_a_sync_embeds_only_what_changed(ingested, tmp_path):
    from assistant.services import refresh_and_index
    from index.docstore import DOCSTORE_FILE, DocStore

    first = refresh_and_index(ingested)[1]
    sync_list(ingested, str(newer_list(tmp_path)))
    refresh, report = refresh_and_index(ingested)
    assert not report.full_rebuild
    changed_chunks = sum(1 for c in ChunkStore(ingested.store_file).chunks() if c.resource_id in refresh.changed + refresh.added)
    assert 0 < report.added <= changed_chunks < first.chunks
    indexed = DocStore.read(ingested.index_dir / DOCSTORE_FILE).chunks
    assert not [c for c in indexed if c.url == REMOVED]
    assert any("5th edition" in c.text for c in indexed if c.url == TEXTBOOK and c.source_kind == "card")


# --- the CLI, end to end -------------------------------------------------------------------------


def gpuguide(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    return subprocess.run([GPUGUIDE, *args], check=False, capture_output=True, text=True, env=env, timeout=300)


def write_config(home: Path, server: FixtureServer) -> None:
    home.mkdir(parents=True, exist_ok=True)
    lines = ["[crawl]", 'allowed_private_hosts = ["127.0.0.1"]', "host_delay_s = 0", "read_timeout_s = 2",
             "retries = 0", "follow_arxiv_pdf = false", "follow_github_readme = false", "[crawl.url_rewrites]",
             *[f'"{k}" = "{server.url(v)}"' for k, v in REWRITES.items()]]
    (home / "gpuguide.toml").write_text("\n".join(lines) + "\n")


def test_cli_chunks_show_the_new_note_after_sync_and_index_without_ingest(isolated_home, http_server, tmp_path):
    serve_pages(http_server)
    write_config(isolated_home, http_server)
    assert gpuguide(isolated_home, "catalog", "sync", "--from", str(LISTS / "current.md"), "--force").returncode == 0
    assert gpuguide(isolated_home, "ingest").returncode == 0
    fetched = len(http_server.requests)
    synced = gpuguide(isolated_home, "catalog", "sync", "--from", str(newer_list(tmp_path)))
    assert synced.returncode == 0, synced.stderr
    assert "changed (note): The Textbook" in synced.stdout
    indexed = gpuguide(isolated_home, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert "1 added, 1 changed, 1 removed" in indexed.stdout
    out = gpuguide(isolated_home, "chunks", "--resource", TEXTBOOK, "--json")
    card = next(r for r in map(json.loads, out.stdout.splitlines()) if r["source_kind"] == "card")
    assert "The canonical textbook, 5th edition" in card["text"]
    assert len(http_server.requests) == fetched  # nothing was crawled again


def test_cli_sync_without_from_offline_is_one_line(isolated_home):
    out = gpuguide(isolated_home, "--set", "crawl.offline=true", "catalog", "sync")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--from" in out.stderr


def test_cli_sync_without_from_fetches_the_upstream_url(isolated_home, http_server):
    http_server.route("/raw/README.md", Reply.text((LISTS / "current.md").read_text(), content_type="text/markdown"))
    write_config(isolated_home, http_server)
    out = gpuguide(isolated_home, "--set", f"catalog.upstream_url={http_server.url('/raw/README.md')}",
                   "catalog", "sync", "--force")
    assert out.returncode == 0, out.stderr
    assert "synced 8 resources" in out.stdout and http_server.count("/raw/README.md") == 1
