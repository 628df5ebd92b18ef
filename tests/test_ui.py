"""The web app in a real browser (Debian's chromium driven by Playwright) against `gpuguide serve` on a
fixture index: cited answers, reading progress that survives a restart, escaped crawled text, re-ingest.

Screenshots go to tests/artifacts/ (the README's come from the real list: bench/screenshots.py).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_fixture import FixtureServer, Reply
from ui_fixture import (
    XSS_IMG,
    XSS_QUESTION,
    XSS_SCRIPT,
    XSS_TITLE,
    AppServer,
    ask_in_chat,
    make_home,
    shot_dir,
)

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_MS = 30_000
FLASH_QUESTION = "How does FlashAttention avoid writing the attention matrix to HBM?"



@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    home = tmp_path_factory.mktemp("ui-home")
    make_home(home)
    with AppServer(home) as app:
        yield app


class Page:
    """One tab on the app, recording every JavaScript dialog (an alert would mean injected script ran)."""

    def __init__(self, browser: object, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.dialogs: list[str] = []
        self.page.on("dialog", self._dialog)
        self.external: list[str] = []  # anything not served by the app (fonts, CDNs, analytics)
        self.page.on("request", lambda req: None if req.url.startswith(("http://127.0.0.1", "data:", "blob:"))
                     else self.external.append(req.url))
        self.open(url)

    def _dialog(self, dialog: object) -> None:
        self.dialogs.append(dialog.message)  # type: ignore[attr-defined]
        dialog.dismiss()  # type: ignore[attr-defined]

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.locator("#gg-question textarea").wait_for()

    def ask(self, question: str) -> object:
        """Send a question; returns the locator of the finished answer (its sources panel, or its text)."""
        return ask_in_chat(self.page, question)

    def tab(self, name: str) -> None:
        self.page.get_by_role("tab", name=name).click()

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser: object, server: AppServer) -> Iterator[Page]:
    tab = Page(browser, server.url)
    yield tab
    tab.close()


def test_a_question_gets_a_cited_answer_with_its_place_in_the_list(page: Page) -> None:
    answer = page.ask(FLASH_QUESTION)
    refs = answer.locator(".gg-answer a.gg-ref")
    assert refs.count() >= 1
    assert refs.first.inner_text() == "[1]"
    assert refs.first.get_attribute("href").startswith("https://example.org/papers/flashattention#:~:text=")
    first = answer.locator(".gg-source").first
    assert first.locator("a.gg-title").inner_text().startswith("FlashAttention")
    place = first.locator("a.gg-place")
    assert re.search(r"Attention & Memory-Bound Kernels › FlashAttention · Tier 1", place.inner_text())
    assert place.get_attribute("href").endswith("#flashattention")
    assert "attention matrix" in first.locator(".gg-passage").inner_text()
    assert "score" not in first.inner_text()  # no raw numbers: a weak match is said in words
    page.page.screenshot(path=str(shot_dir() / "chat.png"))

    follow = page.ask("and the first one?")  # rewritten from the previous turn's citations
    assert follow.locator(".gg-source a.gg-title").first.inner_text().startswith("FlashAttention")
    assert not page.dialogs
    assert page.external == []  # works offline and tells no one


def test_crawled_html_and_titles_render_as_text(page: Page) -> None:
    answer = page.ask(XSS_QUESTION)
    source = answer.locator(".gg-source").first
    assert source.locator("a.gg-title").inner_text() == XSS_TITLE
    passage = source.locator(".gg-passage").inner_text()
    assert XSS_SCRIPT in passage and XSS_IMG in passage
    page.tab("Guide")
    guide = page.page.locator("#gg-guide")
    guide.get_by_text(XSS_TITLE).wait_for()
    assert XSS_IMG in guide.inner_text()
    page.page.locator("#gg-search textarea").fill("warp shuffle reduction")
    page.page.locator("#gg-search textarea").press("Enter")
    page.page.locator("#gg-results li").first.wait_for()
    assert XSS_TITLE in page.page.locator("#gg-results").inner_text()
    page.page.wait_for_timeout(500)  # give an injected onerror/script every chance to fire
    assert page.page.locator("img[src='x'], #gg-guide script, #gg-chat script, #gg-results script").count() == 0
    assert page.dialogs == []


def _bars(page: Page) -> dict[str, str]:
    labels = page.page.locator("#gg-grid td.gg-cell[data-topic]").evaluate_all(
        "els => els.map(e => e.getAttribute('aria-label'))"
    )
    return {lbl.split(":")[0]: lbl for lbl in labels if lbl}  # "<topic> · <tier>: <read> of <total> read"


def _progress(page: Page) -> tuple[int, list[str], dict[str, str]]:
    # the summary is filled by a page-load event, which may land after the grid is drawn
    page.page.wait_for_function("() => /Read \\d+ of/.test(document.querySelector('#gg-summary')?.innerText || '')")
    summary = page.page.locator("#gg-summary").inner_text()
    read = int(re.search(r"Read (\d+) of", summary).group(1))
    picks = page.page.locator("#gg-next li").evaluate_all("els => els.map(e => e.dataset.rid)")
    return read, picks, _bars(page)


def test_ticking_read_updates_progress_and_next_and_survives_a_restart(page: Page, server: AppServer) -> None:
    page.tab("Guide")
    page.page.locator("#gg-grid td.gg-cell").first.wait_for(state="attached")
    read, picks, bars = _progress(page)
    target = picks[0]
    box = page.page.locator(f"#gg-guide input.gg-check[data-rid='{target}']")
    assert not box.is_checked()
    box.check()
    page.page.wait_for_function(
        "n => /Read (\\d+) of/.test(document.querySelector('#gg-summary').innerText) && "
        "Number(document.querySelector('#gg-summary').innerText.match(/Read (\\d+) of/)[1]) === n", arg=read + 1
    )
    page.page.wait_for_function(f"() => !document.querySelector(\"#gg-next li[data-rid='{target}']\")")
    read_after, picks_after, bars_after = _progress(page)
    assert target not in picks_after and picks_after != picks
    assert bars_after != bars  # one topic × tier bar grew

    page.open(server.restart().url)
    page.tab("Guide")
    page.page.locator(f"#gg-guide input.gg-check[data-rid='{target}']").wait_for()
    assert page.page.locator(f"#gg-guide input.gg-check[data-rid='{target}']").is_checked()
    page.page.locator("#gg-grid td.gg-cell").first.wait_for(state="attached")
    page.page.wait_for_function("() => /Read \\d+ of/.test(document.querySelector('#gg-summary').innerText)")
    assert _progress(page) == (read_after, picks_after, bars_after)

    for rid in ("hopper-tma", "triton-intro"):  # a little more progress for the screenshot
        page.page.locator(f"#gg-guide input.gg-check[data-rid='{rid}']").check()
        page.page.wait_for_function(f"() => !document.querySelector(\"#gg-next li[data-rid='{rid}']\")")
    page.page.evaluate("window.scrollTo(0, 0)")
    page.page.screenshot(path=str(shot_dir() / "guide.png"))


def test_a_reading_plan_answer_offers_one_click_to_add_what_it_understood(page: Page) -> None:
    answer = page.ask("I've read the GQA paper and the Horovod repo. What should I read next?")
    assert "Counting as read: GQA: Training Generalized Multi-Query Transformer Models; Horovod." in answer.inner_text()
    assert "Focus:" in answer.inner_text()
    button = page.page.locator("#gg-add-reads")
    button.wait_for()
    assert button.inner_text() == "Add these 2 to my reads"
    button.click()
    button.wait_for(state="hidden")
    page.tab("Guide")
    for rid in ("gqa", "horovod"):
        page.page.locator(f"#gg-guide input.gg-check[data-rid='{rid}']").wait_for()
        page.page.wait_for_function(f"() => document.querySelector(\"#gg-guide input.gg-check[data-rid='{rid}']\").checked")


def test_reingest_runs_in_the_background_and_chat_keeps_answering(page: Page) -> None:
    page.tab("Index status")
    status = page.page.locator("#gg-status")
    status.wait_for()
    page.page.locator("#gg-reingest").click()
    page.page.locator("#gg-job .gg-job-done").wait_for(timeout=120_000)
    # Offline with no archives: every resource is now known by its catalog card only.
    assert "11 resources have no page text yet" in status.inner_text()


def test_chat_answers_while_a_reingest_is_still_crawling(
    browser: object, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A slow loopback site makes the re-ingest's crawl last; the answer must arrive between its first and
    its last page request (the site's own log is the clock, not the 2 s job poll)."""
    home = tmp_path_factory.mktemp("ui-reingest-home")
    make_home(home)
    resources = json.loads((home / "catalog.json").read_text(encoding="utf-8"))["resources"]
    with FixtureServer() as site:
        rewrites = {}
        for i, res in enumerate(r for r in resources if r["url"]):
            path = f"/page{i}"
            text = "".join(f"<p>{res['title']}: section {k} of the notes on this resource, page {i}.</p>" for k in range(30))
            page_html = f"<html><head><title>{res['title']}</title></head><body><article>{text}</article></body></html>"
            site.route(path, Reply.html(page_html, delay_s=1.5))
            rewrites[res["url"]] = site.url(path)
        pages = len(rewrites)
        toml = (
            '[llm]\nbackend = "extractive"\n\n[ui]\nfirst_start_crawl = false\n\n'
            '[crawl]\nallowed_private_hosts = ["127.0.0.1"]\nconcurrency = 1\nper_host_concurrency = 1\n'
            "host_delay_s = 0\nretries = 0\nfollow_arxiv_pdf = false\nfollow_github_readme = false\n\n"
            "[crawl.url_rewrites]\n" + "".join(f"{json.dumps(k)} = {json.dumps(v)}\n" for k, v in rewrites.items())
        )
        (home / "gpuguide.toml").write_text(toml, encoding="utf-8")

        def served() -> int:
            return sum(site.count(f"/page{i}") for i in range(pages))

        with AppServer(home) as app:
            tab = Page(browser, app.url)
            try:
                tab.tab("Index status")
                tab.page.locator("#gg-reingest").click()
                deadline = time.monotonic() + 60
                while served() == 0:
                    assert time.monotonic() < deadline, "the re-ingest never started crawling"
                    time.sleep(0.05)
                tab.tab("Chat")
                answer = tab.ask(FLASH_QUESTION)
                served_at_answer = served()
                assert answer.locator(".gg-source").count() >= 1
                assert answer.locator(".gg-answer a.gg-ref").count() >= 1  # a cited answer, not a notice
                assert served_at_answer < pages, "the crawl had finished before the answer arrived"
                tab.tab("Index status")
                tab.page.locator("#gg-job .gg-job-done").wait_for(timeout=180_000)
                assert served() == pages
            finally:
                tab.close()


# --- the chat's event handling and rendering, without a browser ----------------------------------


def _answer(text: str, title: str = "FlashAttention", url: str = "https://example.org/fa", **extra: object) -> object:
    from assistant.records import Answer, Citation

    cite = Citation(n=1, resource_id="fa", title=title, url=url, topic="Attention", section="FlashAttention", tier=1,
                    list_url="https://github.com/x/list#flashattention", passage="Tiles through SRAM.", score=0.9,
                    kind="paper")
    return Answer(text=text, citations=[cite], abstained=False, route="search", question="q",
                  standalone_question="How does FlashAttention avoid HBM?", backend="extractive", **extra)


def test_chat_shows_the_sources_then_the_streamed_draft_then_the_verified_answer_in_its_place() -> None:
    import ui
    from assistant.chain import AnswerEvent

    seen = []

    def stream(query):
        seen.append(query)
        yield AnswerEvent("sources", _answer(""))  # an LLM backend: the sources come first, no text
        yield AnswerEvent("token", token="Flash")
        yield AnswerEvent("token", token="Attention tiles [1]")
        yield AnswerEvent("final", _answer("FlashAttention tiles [1]."))

    shown, question = ui.user_turn("  How does FlashAttention avoid HBM? ", [])
    assert question == "How does FlashAttention avoid HBM?" and shown[0]["role"] == "user"
    steps = list(ui.chat_reply(stream, question, shown, [], "embedded", {"k": 3}))
    contents = [history[-1]["content"] for history, _ in steps]
    assert "Searching the guide" in contents[0]
    assert "gg-source" in contents[1] and "Built-in model is writing an answer" in contents[1]
    assert "gg-answer" not in contents[1]  # nothing shown that the verified answer would replace
    assert "FlashAttention tiles [1]▌" in contents[3] and "gg-source" in contents[3]
    assert "gg-pending" not in contents[-1] and "gg-draft" not in contents[-1] and 'class="gg-ref"' in contents[-1]
    history, answers = steps[-1]
    assert [m["role"] for m in history] == ["user", "assistant"] and len(answers) == 1

    list(ui.chat_reply(stream, "and the first one?", ui.user_turn("and the first one?", history)[0], answers,
                       "extractive", {"k": 3}))
    turn = seen[-1].history[0]
    assert turn.standalone == "How does FlashAttention avoid HBM?" and turn.cited_titles == ["FlashAttention"]


def test_a_second_draft_replaces_the_first_on_screen_and_says_why() -> None:
    import ui
    from assistant.chain import AnswerEvent

    def stream(query):
        yield AnswerEvent("sources", _answer(""))
        yield AnswerEvent("token", token="An invented claim [1].")
        yield AnswerEvent("redraft")
        yield AnswerEvent("token", token="Tiles go through SRAM [1].")
        yield AnswerEvent("final", _answer("Tiles go through SRAM [1]."))

    steps = list(ui.chat_reply(stream, "q?", [], [], "embedded", {"k": 3}))
    second = [history[-1]["content"] for history, _ in steps][4]  # searching, sources, first draft, redraft, token
    assert "An invented claim" not in second and "Tiles go through SRAM [1].▌" in second
    assert "No sentence of the first draft held up" in second


def test_a_fallback_is_mentioned_and_an_oversized_question_is_refused() -> None:
    import ui
    from assistant.chain import AnswerEvent

    def stream(query):
        yield AnswerEvent("final", _answer("“Quoted” [1].", fallback="embedded failed: no model"))

    *_, (history, _) = ui.chat_reply(stream, "q?", [], [], "embedded", {})
    assert "Quoted from the sources (embedded failed: no model)" in history[-1]["content"]

    def never(query):
        raise AssertionError("an oversized question must not reach the chain")

    shown, question = ui.user_turn("x" * 2001, [])
    assert len(shown[0]["content"]) < 2100  # the echo is cut, the question is refused whole
    *_, (history, answers) = ui.chat_reply(never, question, shown, [], "extractive", {})
    assert "limit is 2000" in history[-1]["content"] and answers == []


def test_sentences_the_source_check_removed_are_shown_struck_through_with_the_reason() -> None:
    import ui
    from assistant.records import Dropped

    html = ui.render_answer(_answer("FlashAttention tiles [1].", dropped=[Dropped("It runs on <b>TPUs</b> [1].", "not supported")]))
    assert "<del>It runs on &lt;b&gt;TPUs&lt;/b&gt; [1].</del>" in html and "(not supported)" in html
    assert html.index("gg-answer") < html.index("gg-dropped")


def test_a_weak_match_is_marked_as_such() -> None:
    import ui

    assert "Weak match" in ui.render_answer(_answer("Closest thing [1].", weak=True))
    assert "Weak match" not in ui.render_answer(_answer("Closest thing [1]."))


def test_rendering_escapes_text_and_drops_unsafe_links() -> None:
    import ui

    html = ui.render_answer(_answer(f"See {XSS_IMG} [1].", title=XSS_TITLE, url="javascript:alert(1)"))
    assert "<img" not in html and "<script" not in html and "javascript:" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="https://github.com/x/list#flashattention"' in html  # the [1] falls back to the list link
    assert ui.safe_url(" https://a.org/x?y=1&z=2 ") == "https://a.org/x?y=1&amp;z=2"
    assert ui.safe_url("data:text/html,<b>") == ""


# --- first start: an index with no crawl, offline ---------------------------------------------------


def _first_start(home: Path, warcs: list[Path]) -> object:
    import json
    from concurrent.futures import ThreadPoolExecutor

    from fixtures.index.corpus import embedder, load_corpus

    from assistant.guide import Guide
    from core.settings import Settings
    from ingest.catalog import catalog_payload

    _, resources = load_corpus()
    home.mkdir(parents=True)
    (home / "catalog.json").write_text(json.dumps(catalog_payload(resources[:3], "test")), encoding="utf-8")
    settings = Settings(home=home, crawl={"warcs": warcs})
    state = Guide(settings, embedder=embedder(settings))
    # `serve` prepares before any event loop exists; here Playwright's loop may be running in this thread,
    # and the offline ingest (asyncio.run) must not see it.
    with ThreadPoolExecutor(1) as pool:
        what = pool.submit(state.prepare).result()
    return state, what, resources[:3]


def test_first_start_builds_a_card_index_with_no_pages(tmp_path: Path) -> None:
    state, what, resources = _first_start(tmp_path / "home", [])
    assert "3 catalog cards" in what
    status = state.status()
    assert (status.chunks, status.card_only, status.pages_ok, status.last_ingest) == (3, 3, 0, "")
    assert state.search(resources[0].title, k=1)[0].resource.id == resources[0].id
    assert "index found" in state.prepare()  # the second start reuses it


def test_first_start_replays_configured_archives_offline(tmp_path: Path, fixtures_dir: Path) -> None:
    from fixtures.index.corpus import load_corpus
    from test_archive import HTML, build_warc  # the archive tests' WARC writer

    _, resources = load_corpus()
    page = (fixtures_dir / "pages" / "article.html").read_bytes()
    warc = build_warc(tmp_path / "pages.warc.gz", [(resources[0].url, 200, HTML, page)])
    state, what, _ = _first_start(tmp_path / "home", [warc])
    assert "stored chunks" in what
    status = state.status()
    assert status.pages_ok == 1 and status.card_only == 2 and status.last_ingest
    assert status.chunks > 3  # the page's chunks besides the three cards
