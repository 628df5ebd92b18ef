"""The README's screenshots, taken from the real catalog with an ingested archive: `gpuguide serve` on a copy of
a data dir, driven by headless chromium through Playwright.

    .venv/bin/python bench/screenshots.py [--home DATA_DIR] [--only chat guide] [--out docs/screenshots]
                                         [--backend embedded|extractive]

DATA_DIR defaults to bench's own data dir (the shared archive `../shared/corpus/guide-pages.warc.gz` ingested
and indexed once, see bench/common.py). It is copied first, so the shots' reading progress never touches it.

`SHOTS` is a list of named shots; add one with `@shot("name", "what it shows")` on a function of the open
page. Prints one JSON object: each shot's file and how long it took.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import ROOT, real_corpus_settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}
DESKTOP = {"width": 1400, "height": 1000}  # the newcomer shots: a desktop window and a phone
PHONE = {"width": 420, "height": 900}
ANSWER_TIMEOUT_MS = 240_000  # an embedded answer on 2 shared cores
CHAT_QUESTION = "How does FlashAttention avoid writing the attention matrix to HBM?"
# Progress for the guide shot: the first Tier 1 resources of the first topics, as a learner would start.
READ_PER_TOPIC = {0: 4, 1: 2, 2: 1}


@dataclass
class Shot:
    name: str
    what: str
    take: Callable[[Any], None]  # gets the Playwright page, open on the app's first tab
    viewport: dict[str, int] | None = None  # the window size; None: VIEWPORT


SHOTS: list[Shot] = []


def shot(name: str, what: str,
         viewport: dict[str, int] | None = None) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    def register(take: Callable[[Any], None]) -> Callable[[Any], None]:
        SHOTS.append(Shot(name, what, take, viewport))
        return take

    return register


# --- the shots -----------------------------------------------------------------------------------------


def ask(page: Any, question: str) -> Any:
    before = page.locator("#gg-chat .gg-message").count()
    box = page.locator("#gg-question textarea")
    box.fill(question)
    box.press("Enter")
    answer = page.locator("#gg-chat .gg-message").nth(before)
    answer.wait_for(timeout=ANSWER_TIMEOUT_MS)
    page.locator("#gg-chat .gg-pending, #gg-chat .gg-draft").first.wait_for(state="detached",
                                                                           timeout=ANSWER_TIMEOUT_MS)
    return answer


@shot("chat", "a question answered with [n] citations and the sources panel")
def chat(page: Any) -> None:
    answer = ask(page, CHAT_QUESTION)
    answer.locator(".gg-source").first.wait_for()
    page.wait_for_timeout(300)


@shot("guide", "the guide tab with reading progress per topic × tier and 'What next?'")
def guide(page: Any) -> None:
    page.get_by_role("tab", name="Guide").click()
    page.locator("#gg-next li").first.wait_for()
    page.locator("#gg-guide input.gg-check").first.wait_for()
    page.wait_for_timeout(800)  # the plot draws after its data arrives


@shot("learning", "the guide tab with reading states, time left per topic × tier, the plan with its time, "
                  "and one resource's summary cited to its passages")
def learning(page: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 1500})
    page.get_by_role("tab", name="Guide").click()
    page.locator("#gg-next li").first.wait_for()
    picks = page.locator("#gg-next li").evaluate_all("els => els.map(e => e.dataset.rid)")
    reading = next((rid for rid in picks[1:] if page.locator(
        f"#gg-guide .gg-res[data-rid='{rid}'] .gg-time").inner_text() != "unknown"), picks[-1])
    page.locator(f"#gg-guide select.gg-state[data-rid='{reading}']").select_option("reading")
    page.wait_for_function(f"() => document.querySelector('#gg-next li')?.dataset.rid === '{reading}'")
    page.locator(f"#gg-guide select.gg-state[data-rid='{picks[0]}']").select_option("skipped")
    page.wait_for_function(f"() => !document.querySelector(\"#gg-next li[data-rid='{picks[0]}']\")")
    page.locator(f"#gg-guide button.gg-digest-button[data-rid='{reading}'][data-kind='summary']").click()
    page.locator(f"#gg-digest .gg-digest[data-rid='{reading}']").wait_for(timeout=ANSWER_TIMEOUT_MS)
    page.wait_for_timeout(800)


@shot("followup", "a follow-up ('and what changed in version 3?') searched as a standalone question, desktop",
      viewport=DESKTOP)
def followup(page: Any) -> None:
    ask(page, "How does FlashAttention reduce HBM traffic?")
    ask(page, "and what changed in version 3?").locator(".gg-source").first.wait_for()
    page.wait_for_timeout(500)


@shot("phone", "the chat at phone width (420 px): the question box full width, Ask below", viewport=PHONE)
def phone(page: Any) -> None:
    ask(page, CHAT_QUESTION).locator(".gg-source").first.wait_for()
    page.wait_for_timeout(500)


@shot("status", "the index status tab: pages, index, the list's version")
def status(page: Any) -> None:
    page.get_by_role("tab", name="Index status").click()
    page.locator("#gg-status table, #gg-status .gg-status").first.wait_for()
    page.wait_for_timeout(300)


# --- running them --------------------------------------------------------------------------------------


def gpuguide(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUGUIDE_HOME": str(home)}
    return subprocess.run([str(ROOT / ".venv" / "bin" / "gpuguide"), *args], env=env, capture_output=True,
                          text=True, timeout=300, check=True)


def copy_home(source: Path, target: Path) -> Path:
    """The data dir without its reading profile (the shots set their own); the model is linked, not copied."""
    shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns("profile.sqlite3*", ".index-*"))
    return target


def mark_progress(home: Path) -> None:
    resources = json.loads(gpuguide(home, "catalog", "--json").stdout)
    topics = list(dict.fromkeys(r["topic"] for r in resources))
    ids = []
    for index, count in READ_PER_TOPIC.items():
        if index < len(topics):
            tier1 = [r for r in resources if r["topic"] == topics[index] and r["tier"] == 1]
            ids += [r["id"] for r in tier1[:count]]
    if ids:
        gpuguide(home, "read", "add", *ids)


class Server:
    def __init__(self, home: Path, backend: str) -> None:
        port = free_port()
        env = {**os.environ, "GPUGUIDE_HOME": str(home), "GRADIO_ANALYTICS_ENABLED": "False"}
        self.proc = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "gpuguide"), "--set", f"llm.backend={backend}",
             "--set", "ui.first_start_crawl=false", "serve", "--port", str(port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.url = ""
        self.output: list[str] = []
        ready = threading.Event()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.output = [*self.output[-20:], line.rstrip()]
                if line.startswith("gpuguide: serving on "):
                    self.url = line.split()[3]
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(300) or not self.url:
            self.stop()
            raise SystemExit("the app did not start:\n" + "\n".join(self.output))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, help="an ingested data dir (default: bench's, built once)")
    parser.add_argument("--only", nargs="*", help="shot names to take (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--backend", default="embedded", choices=["embedded", "extractive"])
    args = parser.parse_args()
    unknown = set(args.only or []) - {s.name for s in SHOTS}
    if unknown:
        raise SystemExit(f"--only: no shot named {', '.join(sorted(unknown))}; have {', '.join(s.name for s in SHOTS)}")
    from playwright.sync_api import sync_playwright

    source = args.home or real_corpus_settings().home
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"home": str(source), "backend": args.backend, "shots": {}}
    with tempfile.TemporaryDirectory(prefix="gpuguide-shots-") as tmp:
        home = copy_home(source, Path(tmp) / "home")
        gpuguide(home, "index")  # brings an index made by an older version up to date (embeddings are cached)
        mark_progress(home)
        server = Server(home, args.backend)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                for item in SHOTS:
                    if args.only and item.name not in args.only:
                        continue
                    started = time.monotonic()
                    context = browser.new_context(viewport=item.viewport or VIEWPORT)
                    page = context.new_page()
                    page.set_default_timeout(60_000)
                    page.goto(server.url)
                    page.locator("#gg-question textarea").wait_for()
                    item.take(page)
                    path = args.out / f"{item.name}.png"
                    page.evaluate("window.scrollTo(0, 0)")
                    page.screenshot(path=str(path))
                    context.close()
                    report["shots"][item.name] = {"file": str(path.relative_to(ROOT)) if path.is_relative_to(ROOT)
                                                  else str(path), "what": item.what,
                                                  "seconds": round(time.monotonic() - started, 1)}
                browser.close()
        finally:
            server.stop()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
