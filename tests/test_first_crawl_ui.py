"""In the browser: `gpuguide serve` on a data dir that was never crawled starts crawling the list at once, the
status tab shows the crawl's progress (pages done / total, failed, rate, ETA) and the index growing batch by
batch, and the chat answers meanwhile. The list's pages come from a real server on 127.0.0.1 (url rewrites).
"""

from __future__ import annotations

import time
from pathlib import Path

from http_fixture import FixtureServer, Reply, http_server_fixture  # noqa: F401
from test_first_crawl import LISTS, PAGE
from ui_fixture import AppServer

from ingest.store import ChunkStore


def fresh_home(home: Path, server: FixtureServer) -> None:
    """A data dir with the fixture list synced and nothing else: no store, no index."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "catalog.json").write_text(_synced_catalog(), encoding="utf-8")
    rewrites = {"https://blog.example.org/": "/blog/", "https://docs.example.com/": "/docs/",
                "https://publisher.example.com/": "/pub/"}
    lines = [
        "[llm]", 'backend = "extractive"',
        "[ui]", "crawl_batch = 2",
        "[crawl]", 'allowed_private_hosts = ["127.0.0.1"]', "host_delay_s = 0", "read_timeout_s = 5", "retries = 0",
        "follow_arxiv_pdf = false", "follow_github_readme = false",
        "[crawl.url_rewrites]", *[f'"{k}" = "{server.url(v)}"' for k, v in rewrites.items()],
    ]
    (home / "gpuguide.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _synced_catalog() -> str:
    import json

    from ingest.catalog import catalog_payload, parse_source

    return json.dumps(catalog_payload(parse_source(str(LISTS / "current.md")).resources, "fixture list"))


def crawl_state(page: object) -> dict[str, int] | None:
    return page.evaluate(  # type: ignore[attr-defined]
        "() => { const e = document.querySelector('#gg-job .gg-crawl'); if (!e) return null;"
        " return {done: +e.dataset.done, total: +e.dataset.total, failed: +e.dataset.failed,"
        " chunks: +e.dataset.chunks}; }"
    )


def test_first_start_crawl_shows_progress_and_the_index_grows_while_chat_answers(
    tmp_path: Path, http_server: FixtureServer, browser: object
) -> None:
    for path, title in (("/blog/posts/tiled-matmul/", "Tiled Matmul"), ("/docs/guide/", "Official Guide"),
                        ("/pub/books/gpu-textbook/", "The Textbook")):
        http_server.route(path, Reply.html(PAGE.format(title=title), delay_s=1.5))
    home = tmp_path / "home"
    fresh_home(home, http_server)
    with AppServer(home) as app:
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(app.url)
        page.get_by_role("tab", name="Index status").click()
        page.locator("#gg-job .gg-crawl").wait_for()
        seen = [crawl_state(page)]
        assert seen[0]["total"] == 8

        # The chat answers from what is indexed so far while the crawl runs.
        page.get_by_role("tab", name="Chat").click()
        box = page.locator("#gg-question textarea")
        box.fill("Which textbook teaches shared memory tiling?")
        box.press("Enter")
        page.locator("#gg-chat .gg-message").first.wait_for()
        page.locator("#gg-chat .gg-pending").wait_for(state="detached")
        assert page.locator("#gg-chat .gg-error").count() == 0
        page.get_by_role("tab", name="Index status").click()

        deadline = time.monotonic() + 300  # the job line is polled every 2 s; a loaded machine indexes slowly
        while time.monotonic() < deadline:
            state = crawl_state(page)
            if state is not None and state != seen[-1]:
                seen.append(state)
            if page.locator("#gg-job .gg-job-done").count():
                break
            page.wait_for_timeout(250)
        assert page.locator("#gg-job .gg-job-done").count() == 1, page.locator("#gg-job").inner_text()
        final = crawl_state(page)
        assert (final["done"], final["total"]) == (8, 8)
        dones = [s["done"] for s in seen]
        chunks = [s["chunks"] for s in seen]
        assert dones == sorted(dones) and len(set(dones)) >= 2  # progress was seen moving, never back
        assert chunks == sorted(chunks) and chunks[-1] > chunks[0]  # the index grew batch by batch
        assert "pages/min" in page.locator("#gg-job").inner_text()
        page.screenshot(path=str(tmp_path / "first-crawl.png"))
        context.close()


def test_update_from_the_list_rebuilds_a_changed_card_without_a_crawl(
    tmp_path: Path, http_server: FixtureServer, browser: object
) -> None:
    for path, title in (("/blog/posts/tiled-matmul/", "Tiled Matmul"), ("/pub/books/gpu-textbook/", "The Textbook")):
        http_server.route(path, Reply.html(PAGE.format(title=title)))
    home = tmp_path / "home"
    fresh_home(home, http_server)
    newer = tmp_path / "newer.md"
    newer.write_text((LISTS / "current.md").read_text().replace("The canonical textbook", "The canonical textbook, 5th edition"))
    with AppServer(home) as app:
        context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(app.url)
        page.get_by_role("tab", name="Index status").click()
        page.locator("#gg-job .gg-job-done").wait_for()  # the first-start crawl
        fetched = len(http_server.requests)

        from core.settings import load_settings
        from ingest.listsync import sync_list

        sync_list(load_settings(home=home), str(newer))  # `gpuguide catalog sync` while the app runs
        page.locator("#gg-update").click()
        page.get_by_text("update: done").wait_for()
        page.wait_for_timeout(2500)  # the status table is redrawn on the next poll
        assert "changed (note): The Textbook" in page.locator("#gg-status").inner_text()
        assert len(http_server.requests) == fetched  # nothing crawled again
        context.close()
    card = next(c for c in ChunkStore(home / "store.sqlite3").chunks() if c.source_kind == "card"
                and c.url == "https://publisher.example.com/books/gpu-textbook/")
    assert "5th edition" in card.text
