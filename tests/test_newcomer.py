"""The app as a newcomer meets it, in a real browser (Debian's chromium, Playwright) against `gpuguide serve` on
the fixture index plus the conversation fixture: no serious accessibility violation on any tab (axe-core,
pinned in tests/a11y, injected into the page), the question box keeps the focus, a follow-up is answered in
the conversation's context, and the phone-width layout has no overlapping elements.

Screenshots: tests/artifacts/ (the README's come from the real list: bench/screenshots.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_fixture import AppServer, ask_in_chat, make_home, shot_dir

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "tests" / "a11y" / "node_modules" / "axe-core" / "axe.min.js"
TIMEOUT_MS = 30_000
FLASH = "How does FlashAttention reduce HBM traffic?"
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 420, "height": 900}



@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    home = tmp_path_factory.mktemp("newcomer-home")
    make_home(home, conversation=True)
    with AppServer(home) as app:
        yield app


class App:
    """One browser tab on the app at a given window size."""

    def __init__(self, browser: object, url: str, viewport: dict[str, int], color_scheme: str = "light") -> None:
        self.context = browser.new_context(viewport=viewport, color_scheme=color_scheme)  # type: ignore[attr-defined]
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.goto(url)
        self.box.wait_for()

    @property
    def box(self) -> object:
        return self.page.locator("#gg-question textarea")

    def send(self, question: str) -> object:
        """Type a question and press Enter; returns the locator of the finished answer."""
        return ask_in_chat(self.page, question)

    def tab(self, name: str) -> None:
        self.page.get_by_role("tab", name=name).click()

    def axe(self) -> list[dict[str, object]]:
        """Serious and critical axe-core violations of the page as it is now."""
        if not AXE.exists():
            pytest.fail("axe-core is not installed: run `make a11y` (npm ci in tests/a11y)")
        # Gradio dims a block while its event runs and fades it back in: judge the settled page
        self.page.wait_for_function(
            "() => !document.querySelector('.wrap.default:not(.hide), .wrap.center:not(.hide), .generating')")
        self.page.wait_for_timeout(600)
        self.page.add_script_tag(path=str(AXE))
        result = self.page.evaluate(
            "async () => { const r = await axe.run(document, {resultTypes: ['violations']});"
            " return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
            " nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || ''))})); }"
        )
        return [v for v in result if v["impact"] in ("serious", "critical")]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def desktop(browser: object, server: AppServer) -> Iterator[App]:
    app = App(browser, server.url, DESKTOP)
    yield app
    app.close()


@pytest.fixture
def phone(browser: object, server: AppServer) -> Iterator[App]:
    app = App(browser, server.url, PHONE)
    yield app
    app.close()


def _report(violations: list[dict[str, object]]) -> str:
    return json.dumps(violations, indent=1)[:4000]


def test_no_serious_accessibility_violation_on_any_tab(desktop: App) -> None:
    desktop.send(FLASH)
    desktop.page.locator("#gg-settings").get_by_text("Settings").first.click()  # the backends and their help
    desktop.page.locator("#gg-backend-help li").first.wait_for()
    assert (found := desktop.axe()) == [], _report(found)
    desktop.tab("Guide")
    desktop.page.locator("#gg-guide input.gg-check").first.wait_for()
    desktop.page.locator("#gg-search textarea").fill("warp shuffle reduction")
    desktop.page.locator("#gg-search textarea").press("Enter")
    desktop.page.locator("#gg-results li").first.wait_for()
    assert (found := desktop.axe()) == [], _report(found)
    desktop.page.locator("#gg-results").screenshot(path=str(shot_dir() / "newcomer-results.png"))
    desktop.tab("Index status")
    desktop.page.locator("#gg-status .gg-status").wait_for()
    assert (found := desktop.axe()) == [], _report(found)


def test_no_serious_accessibility_violation_in_dark_mode_either(browser: object, server: AppServer) -> None:
    app = App(browser, server.url, DESKTOP, color_scheme="dark")
    try:
        assert app.page.evaluate("() => document.body.classList.contains('dark')")
        app.send(FLASH)
        assert (found := app.axe()) == [], _report(found)
        app.tab("Guide")
        app.page.locator("#gg-search textarea").fill("sourdough")
        app.page.locator("#gg-search textarea").press("Enter")
        app.page.locator("#gg-results .gg-outcome").wait_for()
        assert (found := app.axe()) == [], _report(found)
    finally:
        app.close()


def test_each_tab_has_a_heading(desktop: App) -> None:
    for name in ("Chat", "Guide", "Index status"):
        desktop.tab(name)
        desktop.page.wait_for_timeout(200)
        headings = desktop.page.locator("h1:visible, h2:visible")
        assert headings.count() >= 1, name


def test_the_question_box_keeps_the_focus_after_sending(desktop: App) -> None:
    desktop.send(FLASH)
    desktop.page.wait_for_timeout(1500)  # the finding: 1.5 s after Enter the focus had left for <body>
    assert desktop.page.evaluate("() => document.activeElement && document.activeElement.closest('#gg-question') !== null")
    desktop.box.type("and")  # still usable: what is typed lands in the box
    assert desktop.box.input_value() == "and"


def test_a_follow_up_about_version_3_cites_the_flashattention_3_paper(desktop: App) -> None:
    desktop.send(FLASH)
    follow = desktop.send("and what changed in version 3?")
    first = follow.locator(".gg-source a.gg-title").first
    assert first.inner_text().startswith("FlashAttention-3")
    assert "What changed in FlashAttention-3?" in follow.locator(".gg-searched").inner_text()
    desktop.page.screenshot(path=str(shot_dir() / "newcomer-desktop.png"))


def test_the_question_and_the_start_of_its_answer_are_visible_after_it_arrives(desktop: App) -> None:
    desktop.send(FLASH)
    answer = desktop.send("and what changed in version 3?")
    question = desktop.page.locator("#gg-chat .gg-question").last
    chat = desktop.page.locator("#gg-chat").bounding_box()
    assert chat["height"] >= 0.5 * DESKTOP["height"]  # the chat uses the window's height
    q, a = question.bounding_box(), answer.bounding_box()
    assert q["y"] >= chat["y"] - 1 and q["y"] + q["height"] <= chat["y"] + chat["height"] + 1
    assert a["y"] < chat["y"] + chat["height"]
    assert q["y"] - chat["y"] < 0.25 * chat["height"]  # scrolled up to the new question, not left at the bottom


_OVERLAPS_JS = """
() => {
  const sel = 'textarea, input, button, select, label, h1, h2, h3, [role=tab], .gg-message, .gg-question, '
    + '.gg-job, .gg-searched, .gg-note, [data-testid=block-label]';
  const visible = (el) => {
    const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 1 && r.height > 1 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0'
      && r.bottom > 0 && r.right > 0 && r.left < innerWidth;
  };
  // what is on screen of an element: its box clipped by every scrolling or clipping ancestor
  const shown = (el) => {
    let r = el.getBoundingClientRect();
    let [l, t, rt, b] = [r.left, r.top, r.right, r.bottom];
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = p.getBoundingClientRect();
        [l, t, rt, b] = [Math.max(l, c.left), Math.max(t, c.top), Math.min(rt, c.right), Math.min(b, c.bottom)];
      }
    }
    return {left: l, top: t, right: rt, bottom: b};
  };
  const els = Array.from(document.querySelectorAll(sel)).filter(visible);
  const out = [];
  for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
    const a = els[i], b = els[j];
    if (a.contains(b) || b.contains(a)) continue;
    if (a.tagName === 'LABEL' && (a.control === b || a.contains(b))) continue;
    if (b.tagName === 'LABEL' && (b.control === a || b.contains(a))) continue;
    const r = shown(a), s = shown(b);
    const w = Math.min(r.right, s.right) - Math.max(r.left, s.left);
    const h = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
    if (w > 2 && h > 2) out.push([a.outerHTML.slice(0, 120), b.outerHTML.slice(0, 120)]);
  }
  const wide = Array.from(document.querySelectorAll('body *')).filter(visible)
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 1 && getComputedStyle(el).position !== 'fixed')
    .map((el) => el.outerHTML.slice(0, 120));
  return {overlaps: out.slice(0, 10), wide: wide.slice(0, 5)};
}
"""


def test_phone_width_layout_has_no_overlapping_elements(phone: App) -> None:
    box = phone.box.bounding_box()
    assert box["width"] >= 0.8 * PHONE["width"] - 40  # the question box takes the row, Ask goes below
    phone.send(FLASH)
    found = phone.page.evaluate(_OVERLAPS_JS)
    assert found["overlaps"] == [] and found["wide"] == [], json.dumps(found, indent=1)
    phone.page.screenshot(path=str(shot_dir() / "newcomer-phone.png"))
    for name in ("Guide", "Index status"):
        phone.tab(name)
        phone.page.wait_for_timeout(300)
        found = phone.page.evaluate(_OVERLAPS_JS)
        assert found["overlaps"] == [], (name, json.dumps(found, indent=1))
