"""A resource whose page could not be fetched is described on its card by the crawled pages that link to it.

Pages come from a real server on 127.0.0.1 (url rewrites in the settings); the store is the real SQLite one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from http_fixture import FixtureServer, Reply, crawl_settings, http_server_fixture  # noqa: F401

from core.records import FetchResult
from core.settings import Settings
from core.urls import url_key
from ingest.catalog import current_catalog
from ingest.inlinks import continued_pages, html_links, markdown_links, page_links
from ingest.listsync import sync_list
from ingest.pipeline import run_ingest
from ingest.refresh import refresh_from_catalog
from ingest.store import ChunkStore

LISTS = Path(__file__).parent / "fixtures" / "lists"
TEXTBOOK = "https://publisher.example.com/books/gpu-textbook/"
MATMUL = "https://blog.example.org/posts/tiled-matmul/"
ATTENTION = "https://arxiv.org/abs/2205.00001"  # never served: known only by its card
KERNELS = "https://github.com/example/kernels"  # never served either
SENTENCE = "Chapter nine builds on the tiled attention algorithm that avoids writing the score matrix to memory."
TEXTBOOK_PAGE = (
    "<html><head><title>The Textbook</title></head><body>"
    f"<nav><a href='{KERNELS}'>Kernels we like</a></nav><main><h1>The Textbook</h1>"
    "<p>This book teaches parallel programming on graphics processors from the first kernel onwards, with "
    "chapters on memory coalescing, shared memory tiling, reductions, scans and histograms.</p>"
    f"<p>Chapter nine builds on the <a href='{ATTENTION}'>tiled attention algorithm</a> that avoids writing the "
    "score matrix to memory. Exercises measure every kernel against the memory bandwidth.</p>"
    f"<p>Readers who want a worked example can follow <a href='{MATMUL}'>a matmul worklog</a> step by step.</p>"
    "</main></body></html>"
)
REWRITES = {"https://blog.example.org/": "/blog/", "https://publisher.example.com/": "/pub/"}


def settings_for(home: Path, server: FixtureServer, **chunk: int) -> Settings:
    settings = crawl_settings(home, url_rewrites={k: server.url(v) for k, v in REWRITES.items()}, retries=0,
                              follow_arxiv_pdf=False, follow_github_readme=False)
    return settings.model_copy(update={"chunk": settings.chunk.model_copy(update=chunk)})


def ingest(home: Path, server: FixtureServer, **chunk: int) -> Settings:
    server.route("/blog/posts/tiled-matmul/", Reply.file("../pages/article.html"))
    server.route("/pub/books/gpu-textbook/", Reply.html(TEXTBOOK_PAGE))
    settings = settings_for(home, server, **chunk)
    sync_list(settings, str(LISTS / "current.md"), force=True)
    run_ingest(current_catalog(settings), settings, progress=False)
    return settings


def card_text(settings: Settings, url: str) -> str:
    return next(c.text for c in ChunkStore(settings.store_file).chunks() if c.url == url and c.source_kind == "card")


@pytest.fixture
def ingested(isolated_home: Path, http_server: FixtureServer) -> Settings:
    return ingest(isolated_home, http_server)


def test_a_card_only_resource_gets_the_sentence_of_a_page_that_links_to_it(ingested):
    assert SENTENCE in card_text(ingested, ATTENTION)


def test_a_link_in_a_pages_menu_adds_nothing_to_the_card(ingested):
    assert "Kernels we like" not in card_text(ingested, KERNELS)


def test_a_resource_with_page_text_keeps_its_plain_card(ingested):
    assert "worklog" not in card_text(ingested, MATMUL).split("Link:")[1]


def test_the_card_document_stays_the_list_entry_alone(ingested):
    card = next(d for d in ChunkStore(ingested.store_file).documents() if d.url == ATTENTION)
    assert SENTENCE not in card.text


def test_a_catalog_refresh_keeps_the_inlink_text_on_a_rebuilt_card(ingested, tmp_path):
    newer = tmp_path / "newer.md"
    newer.write_text((LISTS / "current.md").read_text().replace("IO-aware exact attention", "IO-aware attention"))
    sync_list(ingested, str(newer))
    refresh = refresh_from_catalog(ingested, current_catalog(ingested))
    assert refresh.changed and SENTENCE in card_text(ingested, ATTENTION)


def test_a_refresh_after_an_ingest_with_inlinks_finds_nothing_changed(ingested):
    assert refresh_from_catalog(ingested, current_catalog(ingested)).empty


def test_card_inlinks_zero_leaves_every_card_plain(isolated_home, http_server):
    settings = ingest(isolated_home, http_server, card_inlinks=0)
    assert SENTENCE not in card_text(settings, ATTENTION)


def test_list_neighbours_put_the_next_entrys_note_on_the_card(isolated_home, http_server):
    settings = ingest(isolated_home, http_server, card_neighbours=1)
    assert "Tiling, shared memory, vectorized loads" in card_text(settings, ATTENTION)


def test_relative_links_are_resolved_against_the_page_and_keyed_like_catalog_urls():
    links = html_links(b"<html><body><p>See <a href='../guide/'>the guide</a> first.</p></body></html>",
                       "https://docs.example.com/cuda/intro/")
    assert [(link.target, link.anchor, link.sentence) for link in links] == [
        (url_key("https://docs.example.com/cuda/guide/"), "the guide", "See the guide first.")
    ]


def test_a_long_paragraph_keeps_only_the_sentence_holding_the_link():
    body = ("<p>First sentence about something else entirely. The <a href='https://x.example/a'>fused kernel</a> "
            "halves memory traffic. Last sentence is unrelated.</p>").encode()
    assert html_links(body, "https://p.example/")[0].sentence == "The fused kernel halves memory traffic."


def test_markdown_links_keep_anchor_and_sentence():
    links = markdown_links("Intro line.\n\nWe build on [FlashAttention](https://arxiv.org/abs/2205.14135) here.")
    assert [(link.target, link.sentence) for link in links] == [
        (url_key("https://arxiv.org/abs/2205.14135"), "We build on FlashAttention here.")
    ]


def test_a_body_that_is_neither_html_nor_markdown_has_no_links():
    result = FetchResult(url="https://p.example/x.pdf", final_url="https://p.example/x.pdf", status="ok",
                         content_type="application/pdf", body=b"%PDF-1.7 [a](https://x.example/)")
    assert page_links(result) == []


def test_a_page_linking_next_to_a_page_under_its_own_path_opens_a_multi_page_document() -> None:
    pages = {"https://docs.example.org/manual/": {"links": [
        ["docs.example.org/manual/contents.html", "previous Contents", ""],
        ["docs.example.org/manual/part1.html", "next 1. Introduction", ""]]}}
    assert continued_pages(pages) == {"docs.example.org/manual"}


def test_a_next_link_to_another_document_or_a_fetched_page_continues_nothing() -> None:
    pages = {
        "https://docs.example.org/tuning-guide/": {"links": [["docs.example.org/compat-guide", "next Compat Guide", ""]]},
        "https://docs.example.org/manual/": {"links": [["docs.example.org/manual/part1.html", "next Part 1", ""]]},
        "https://docs.example.org/manual/part1.html": {"links": []},
    }
    assert continued_pages(pages) == set()
