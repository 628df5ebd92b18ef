"""The app's first start on a data dir no crawl has touched: the catalog cards answer at once, a background
crawl fetches the list in batches, and each batch is stored and indexed as it arrives (chat keeps working).

Pages come from a real server on 127.0.0.1 (url rewrites in the settings); real FAISS, packaged embedder.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from http_fixture import FixtureServer, Reply, crawl_settings, http_server_fixture  # noqa: F401

from assistant.guide import Guide
from assistant.jobs import OFFLINE_HINT
from core.settings import Settings, UISettings
from index.embed import Embedder
from ingest.listsync import sync_list
from ingest.store import ChunkStore

LISTS = Path(__file__).parent / "fixtures" / "lists"
PAGE = (
    "<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
    "<p>{title} explains how a kernel moves tiles of a matrix through shared memory so that each element "
    "is read from global memory once, and how the block size decides the occupancy of each multiprocessor.</p>"
    "<h2>Measuring</h2><p>Profile the kernel, compare achieved bandwidth with the peak, and change one "
    "parameter at a time: tile width, vector loads, double buffering.</p></main></body></html>"
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(Settings())


def serve_everything(server: FixtureServer) -> None:
    for path, title in (("/blog/posts/tiled-matmul/", "Tiled Matmul"), ("/docs/guide/", "Official Guide"),
                        ("/pub/books/gpu-textbook/", "The Textbook")):
        server.route(path, Reply.html(PAGE.format(title=title)))


def app_settings(home: Path, server: FixtureServer, **ui: object) -> Settings:
    rewrites = {"https://blog.example.org/": server.url("/blog/"), "https://docs.example.com/": server.url("/docs/"),
                "https://publisher.example.com/": server.url("/pub/")}
    settings = crawl_settings(home, url_rewrites=rewrites, retries=0, follow_arxiv_pdf=False,
                              follow_github_readme=False)
    settings = settings.model_copy(update={"ui": UISettings(crawl_batch=3, **ui)})
    sync_list(settings, str(LISTS / "current.md"), force=True)
    return settings


def started(settings: Settings, embedder: Embedder) -> Guide:
    state = Guide(settings, embedder=embedder)
    state.prepare()
    return state


def test_first_start_serves_the_catalog_cards_before_any_crawl(isolated_home, http_server, embedder):
    state = started(app_settings(isolated_home, http_server), embedder)
    kinds = {c.source_kind for c in state.assistant().searcher.chunks}
    assert kinds == {"card"}
    assert state.status().crawl_pending == 8


def test_first_start_crawls_in_batches_and_the_index_grows(isolated_home, http_server, embedder):
    serve_everything(http_server)
    state = started(app_settings(isolated_home, http_server), embedder)
    cards = len(state.assistant().searcher.chunks)
    assert state.start_first_crawl()
    job = state.wait_job(timeout=240)
    assert job.phase == "done", job.message
    assert (job.crawl.done, job.crawl.total) == (8, 8)
    assert job.batches == 3  # 8 resources, 3 a batch
    assert 0 < job.crawl.failed < 8  # arxiv, github, huggingface, discord, substack are not served
    pages = [c for c in state.assistant().searcher.chunks if c.source_kind != "card"]
    assert {c.url for c in pages} >= {"https://blog.example.org/posts/tiled-matmul/", "https://docs.example.com/guide/"}
    assert len(state.assistant().searcher.chunks) > cards
    assert state.status().crawl_pending == 0


def test_search_answers_while_the_crawl_runs(isolated_home, http_server, embedder):
    http_server.route("/blog/posts/tiled-matmul/", Reply.html(PAGE.format(title="Tiled Matmul"), delay_s=1.0))
    state = started(app_settings(isolated_home, http_server), embedder)
    assert state.start_first_crawl()
    hits = state.search("shared memory tiling textbook", k=3)
    assert hits and state.job.running
    state.wait_job(timeout=240)


def test_a_data_dir_that_was_crawled_does_not_crawl_again_on_start(isolated_home, http_server, embedder):
    serve_everything(http_server)
    state = started(app_settings(isolated_home, http_server), embedder)
    state.start_first_crawl()
    state.wait_job(timeout=240)
    assert not started(state.settings, embedder).start_first_crawl()


def test_the_setting_turns_the_first_start_crawl_off(isolated_home, http_server, embedder):
    state = started(app_settings(isolated_home, http_server, first_start_crawl=False), embedder)
    assert not state.start_first_crawl()
    assert state.job.phase == "idle"


def test_offline_the_job_says_so_and_how_to_load_an_archive(isolated_home, http_server, embedder):
    settings = app_settings(isolated_home, http_server)
    settings = settings.model_copy(update={"crawl": settings.crawl.model_copy(update={"offline": True})})
    state = started(settings, embedder)
    assert state.start_first_crawl()
    job = state.wait_job(timeout=120)
    assert job.phase == "offline" and job.message == OFFLINE_HINT
    assert "gpuguide ingest --warc FILE" in OFFLINE_HINT
    assert ChunkStore(settings.store_file).last_report() is None


def test_unreachable_sites_count_as_offline(isolated_home, http_server, embedder):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    settings = app_settings(isolated_home, http_server)
    rewrites = {k: closed for k in settings.crawl.url_rewrites}
    rewrites.update({"https://": closed, "http://": closed})
    settings = settings.model_copy(update={"crawl": settings.crawl.model_copy(update={"url_rewrites": rewrites})})
    state = started(settings, embedder)
    state.start_first_crawl()
    assert state.wait_job(timeout=120).phase == "offline"


def test_reingest_picks_up_a_list_synced_while_the_app_runs(isolated_home, http_server, embedder, tmp_path):
    serve_everything(http_server)
    state = started(app_settings(isolated_home, http_server), embedder)
    newer = tmp_path / "newer.md"
    newer.write_text((LISTS / "current.md").read_text().replace("The canonical textbook", "The canonical textbook, 5th edition"))
    sync_list(state.settings, str(newer))
    assert state.start_reingest()
    job = state.wait_job(timeout=240)
    assert job.phase == "done", job.message
    assert job.crawl.done == job.crawl.total == 8
    cards = [c.text for c in state.assistant().searcher.chunks if c.source_kind == "card"]
    assert any("5th edition" in text for text in cards)


def offline(settings: Settings) -> Settings:
    return settings.model_copy(update={"crawl": settings.crawl.model_copy(update={"offline": True})})


def test_a_list_synced_while_the_app_was_stopped_is_applied_at_the_next_start(isolated_home, http_server,
                                                                              embedder, tmp_path):
    settings = offline(app_settings(isolated_home, http_server))
    started(settings, embedder)  # the first run: cards stored and indexed
    newer = tmp_path / "newer.md"
    newer.write_text((LISTS / "current.md").read_text().replace("The canonical textbook",
                                                                "The canonical textbook, 5th edition"))
    sync_list(settings, str(newer))  # while the app is stopped; no `gpuguide index` after it

    state = started(settings, embedder)  # the next start
    assert state.start_list_update()
    job = state.wait_job(timeout=240)
    assert job.phase in {"done", "offline"}, job.message
    cards = [c.text for c in state.assistant().searcher.chunks if c.source_kind == "card" and "Textbook" in c.text]
    assert cards and all("5th edition" in text for text in cards)


def test_an_unchanged_list_starts_no_update(isolated_home, http_server, embedder):
    settings = offline(app_settings(isolated_home, http_server))
    started(settings, embedder)
    assert not started(settings, embedder).start_list_update()
