"""The chat with the packaged model, in a real browser: sources at once, the draft streaming, then one
verified answer in the draft's place (never an instant answer replaced by another)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_llm import MODELS_DIR
from test_ui import FLASH_QUESTION
from ui_fixture import AppServer, make_home

from assistant.llm import assemble_packaged_gguf

ANSWER_TIMEOUT_MS = 240_000  # two cores shared with other work: the model can take a minute


@pytest.fixture(scope="module")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    model = assemble_packaged_gguf(MODELS_DIR)
    home = tmp_path_factory.mktemp("ui-llm-home")
    make_home(home)
    (home / "gpuguide.toml").write_text(
        f'[llm]\nbackend = "embedded"\nmodel_path = "{model}"\nmax_tokens = 90\n\n[crawl]\noffline = true\n\n[ui]\nfirst_start_crawl = false\n',
        encoding="utf-8",
    )
    with AppServer(home) as app:
        yield app


@pytest.fixture(scope="module")
def tab(llm_server: AppServer, browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(ANSWER_TIMEOUT_MS)
    page.goto(llm_server.url)
    page.locator("#gg-question textarea").wait_for()
    yield page
    context.close()


# Records, on every change of the chat, what the last assistant message holds.
RECORD_STATES = """
() => {
  window.ggStates = [];
  const chat = document.querySelector('#gg-chat');
  new MutationObserver(() => {
    const all = chat.querySelectorAll('.gg-message');
    const m = all[all.length - 1];
    if (!m) return;
    const state = ['gg-source', 'gg-draft', 'gg-answer', 'gg-pending']
      .filter(c => m.querySelector('.' + c) || m.classList.contains(c)).join(' ');
    if (window.ggStates[window.ggStates.length - 1] !== state) window.ggStates.push(state);
  }).observe(chat, {childList: true, subtree: true, characterData: true});
}
"""


def test_the_chat_shows_sources_first_then_the_draft_then_one_verified_answer(tab) -> None:
    tab.evaluate(RECORD_STATES)
    box = tab.locator("#gg-question textarea")
    box.fill(FLASH_QUESTION)
    box.press("Enter")
    tab.locator("#gg-chat .gg-message .gg-source").first.wait_for()
    tab.locator("#gg-chat .gg-pending").wait_for(state="detached")
    final = tab.locator("#gg-chat .gg-message").last
    final.locator(".gg-answer").wait_for()
    states = tab.evaluate("window.ggStates")
    first_sources = next(i for i, s in enumerate(states) if "gg-source" in s)
    first_draft = next(i for i, s in enumerate(states) if "gg-draft" in s)
    assert first_sources < first_draft  # the sources came before the model wrote
    # No answer text was shown while the model was still writing: nothing replaced, no flicker.
    assert not any("gg-answer" in s and ("gg-pending" in s or "gg-draft" in s) for s in states), states
    assert states[-1].split() == ["gg-source", "gg-answer"], states
    assert final.locator(".gg-answer").count() == 1
    text = final.locator(".gg-answer").inner_text()
    assert "▌" not in text and "<|" not in text
    assert final.locator(".gg-answer a.gg-ref").count() >= 1
