"""The learning path in a real browser and through the API: reading states in the guide, time left, the plan
finishing what is being read, a resource's summary, the export buttons; `gpuguide serve` on the fixture index.

The screenshot goes to tests/artifacts/ (the README's come from the real list: bench/screenshots.py).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from gradio_client import Client
from ui_fixture import AppServer, make_home, shot_dir

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_MS = 30_000



def add_setting(toml: Path, table: str, line: str) -> None:
    """One `key = value` line into `[table]` of the data dir's settings file, whether the table exists or not."""
    text = toml.read_text(encoding="utf-8")
    head = f"[{table}]\n"
    text = text.replace(head, head + line + "\n", 1) if head in text else f"{text.rstrip()}\n\n{head}{line}\n"
    toml.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    home = tmp_path_factory.mktemp("learning-home")
    make_home(home)
    # Summaries without loading the model; the fixture index's pages kept (no first-start crawl replacing them).
    add_setting(home / "gpuguide.toml", "learning", 'digest_backend = "extractive"')
    with AppServer(home) as app:
        yield app


@pytest.fixture(scope="module")
def page(server: AppServer, browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, accept_downloads=True)  # type: ignore[attr-defined]
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    tab.goto(server.url)
    tab.get_by_role("tab", name="Guide").click()
    tab.locator("#gg-guide select.gg-state").first.wait_for()
    yield tab
    context.close()


def time_left(page: object) -> str:
    text = page.locator("#gg-summary").inner_text()  # type: ignore[attr-defined]
    return re.search(r"time left: (.+)$", text.strip()).group(1)


def picks(page: object) -> list[str]:
    return page.locator("#gg-next li").evaluate_all("els => els.map(e => e.dataset.rid)")  # type: ignore[attr-defined]


def test_marking_reading_puts_it_first_in_the_plan_and_skipping_cuts_the_time_left(page: object) -> None:
    page.wait_for_function("() => /time left: /.test(document.querySelector('#gg-summary').innerText)")
    before_time, before_picks = time_left(page), picks(page)
    assert "horovod" not in before_picks[:1]
    assert page.locator("#gg-guide .gg-res[data-rid='horovod'] .gg-time").inner_text() == "16 min"  # README + code
    assert page.locator("#gg-guide .gg-left").count() > 0

    page.locator("#gg-guide select.gg-state[data-rid='horovod']").select_option("reading")
    page.wait_for_function("() => document.querySelector('#gg-next li')?.dataset.rid === 'horovod'")
    assert "you are reading this" in page.locator("#gg-next li").first.inner_text()
    assert page.locator("#gg-next .gg-plan-time").inner_text().startswith("These picks take ")
    assert time_left(page) == before_time  # reading still counts as time left

    page.locator("#gg-guide select.gg-state[data-rid='gqa']").select_option("skipped")
    page.wait_for_function("t => !document.querySelector('#gg-summary').innerText.includes('time left: ' + t)",
                           arg=before_time)
    assert "1 reading, 1 skipped" in page.locator("#gg-summary").inner_text()
    page.wait_for_function("() => document.querySelector(\"#gg-guide .gg-res[data-rid='gqa']\")"
                           ".classList.contains('gg-st-skipped')")


def test_states_survive_a_reload(page: object, server: AppServer) -> None:
    page.locator("#gg-guide select.gg-state[data-rid='nccl']").select_option("read")
    page.wait_for_function("() => !document.querySelector(\"#gg-next li[data-rid='nccl']\")")
    page.goto(server.url)
    page.get_by_role("tab", name="Guide").click()
    page.locator("#gg-guide select.gg-state[data-rid='nccl']").wait_for()
    states = page.locator("#gg-guide select.gg-state").evaluate_all(
        "els => Object.fromEntries(els.map(e => [e.dataset.rid, e.value]))")
    assert states["nccl"] == "read" and states["horovod"] == "reading" and states["gqa"] == "skipped"
    assert page.locator("#gg-guide input.gg-check[data-rid='nccl']").is_checked()


def test_a_summary_opens_with_points_cited_to_its_own_passages(page: object) -> None:
    page.locator("#gg-guide button.gg-digest-button[data-rid='hopper-tma'][data-kind='summary']").click()
    digest = page.locator("#gg-digest .gg-digest[data-rid='hopper-tma']")
    digest.wait_for()
    assert digest.get_attribute("data-mode") == "extracted"
    assert "extracted" in digest.locator(".gg-digest-mode").inner_text()
    assert digest.locator(".gg-points li").count() >= 1
    assert digest.locator(".gg-passage").count() >= 1
    chunks = digest.locator(".gg-passage").evaluate_all("els => els.map(e => e.dataset.chunk)")
    assert all(c.startswith("hopper-tma:") for c in chunks)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shot_dir() / "guide-learning.png"), full_page=False)


def test_a_self_check_shows_questions_and_the_export_buttons_download_them(page: object) -> None:
    page.locator("#gg-guide button.gg-digest-button[data-rid='nccl'][data-kind='self-check']").click()
    page.locator("#gg-digest .gg-digest[data-rid='nccl'] .gg-questions li").first.wait_for()
    page.locator("#gg-guide select.gg-state[data-rid='vllm']").select_option("reading")  # refreshes the exports
    page.wait_for_function("() => document.querySelector('#gg-next li')?.dataset.rid === 'horovod'")
    with page.expect_download() as md:
        page.locator("#gg-export-md").click()
    text = Path(md.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# My GPU reading path") and "**reading**" in text
    with page.expect_download() as cards:
        page.locator("#gg-export-anki").click()
    rows = [r for r in csv.reader(Path(cards.value.path()).read_text(encoding="utf-8").splitlines())
            if r and not r[0].startswith("#")]
    assert rows and all(len(r) == 3 and "nccl" in r[2] for r in rows)


def test_the_api_and_mcp_expose_states_time_left_and_the_plan(server: AppServer) -> None:
    client = Client(server.url, verbose=False)
    got = client.predict("triton-intro", "reading", api_name="/reading_state")
    assert got["state"] == "reading" and got["time"]["minutes"] == 1
    path = client.predict("", api_name="/learning_path")
    assert path["states"]["reading"] >= 1 and "time left" in path["summary"]
    plan = client.predict("", 3, [], api_name="/next_reads")
    assert plan["picks"][0]["time"] is not None and "label" in plan["time_total"]
    tools = {t["name"] for t in httpx.get(server.url + "gradio_api/mcp/schema", timeout=30).json()}
    assert {"reading_state", "learning_path", "next_reads", "summary", "self_check"} <= tools


def test_a_search_result_sets_a_reading_state_that_the_guide_then_shows(page: object) -> None:
    page.locator("#gg-search textarea").fill("roofline model arithmetic intensity")
    page.locator("#gg-search textarea").press("Enter")
    menu = page.locator("#gg-results select.gg-state[data-rid='roofline']")
    menu.wait_for()
    assert menu.input_value() == "unread"
    menu.select_option("skipped")
    page.wait_for_function("() => document.querySelector(\"#gg-guide select.gg-state[data-rid='roofline']\")"
                           "?.value === 'skipped'")
    assert "skipped" in page.locator("#gg-summary").inner_text()
