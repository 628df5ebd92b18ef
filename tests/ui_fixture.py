"""The app under test: a data dir with the fixture index (plus a page carrying XSS payloads) and a real
`gpuguide serve` subprocess on a free loopback port, so the browser and API tests see what a user sees."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

from fixtures.index.corpus import build, load_corpus, make_settings

from core.records import Chunk, Resource
from ingest.cards import card_chunk
from ingest.catalog import catalog_payload

ROOT = Path(__file__).resolve().parent.parent
XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS_TITLE = f"Warp Shuffle Tricks {XSS_SCRIPT}"
XSS_QUESTION = "How do warp shuffle instructions make a reduction need no shared memory?"


def xss_corpus() -> tuple[list[Chunk], list[Resource]]:
    """The index fixture plus one resource whose title, note and page text carry HTML payloads."""
    chunks, resources = load_corpus()
    evil = replace(
        resources[0], id="warp-shuffle-xss", title=XSS_TITLE, url="https://example.org/warp-shuffle",
        authors="Mallory", note=f"Register exchange within a warp {XSS_IMG}", topic="Fundamentals",
        section="Warp-level primitives", tier=1, kind="blog", list_anchor="#warp-level-primitives",
        position=len(resources),
    )
    text = (
        "Warp shuffle instructions such as shfl.down let the threads of a warp exchange register values "
        f"directly, so a warp-level reduction needs no shared memory. {XSS_SCRIPT} {XSS_IMG} Each shuffle "
        "step halves the number of active lanes until lane zero holds the sum of the warp."
    )
    page = Chunk(chunk_id="warp-shuffle-xss:0", resource_id=evil.id, url=evil.url, heading_path=("Warp shuffles",),
                 start=0, end=len(text), text=text, context=f"{evil.title}\n{evil.place}")
    return [*chunks, card_chunk(evil), page], [*resources, evil]


def shot_dir() -> Path:
    """Where browser tests leave their screenshots (the README's come from bench/screenshots.py)."""
    path = Path(__file__).resolve().parent / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ask_in_chat(page: object, question: str) -> object:
    """Type a question into the chat and press Enter; returns the locator of the finished answer."""
    before = page.locator("#gg-chat .gg-message").count()  # type: ignore[attr-defined]
    box = page.locator("#gg-question textarea")  # type: ignore[attr-defined]
    box.fill(question)
    box.press("Enter")
    answer = page.locator("#gg-chat .gg-message").nth(before)  # type: ignore[attr-defined]
    answer.wait_for()
    page.locator("#gg-chat .gg-pending").wait_for(state="detached")  # type: ignore[attr-defined]
    return answer


def make_home(home: Path, conversation: bool = False) -> None:
    """A data dir the app can serve at once: index, catalog (the fixture's, as a synced list), settings.
    `conversation` adds the later FlashAttention papers and AMD's library (tests/fixtures/conversation)."""
    home.mkdir(parents=True, exist_ok=True)
    chunks, resources = xss_corpus()
    if conversation:
        from fixtures.conversation.corpus import conversation_corpus

        chunks, resources = conversation_corpus(chunks, resources)
    build(make_settings(home), chunks, resources)
    (home / "catalog.json").write_text(json.dumps(catalog_payload(resources, "test fixture")), encoding="utf-8")
    # Extractive answers (no model to load) and no network: a re-ingest replays nothing and keeps the cards.
    # No first-start crawl: it would replace the fixture's page text with a store of cards only.
    (home / "gpuguide.toml").write_text('[llm]\nbackend = "extractive"\n\n[crawl]\noffline = true\n\n'
                                        '[ui]\nfirst_start_crawl = false\n', encoding="utf-8")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class AppServer:
    """`gpuguide serve` in a subprocess; `url` is what it printed."""

    def __init__(self, home: Path, port: int | None = None, extra_args: tuple[str, ...] = ()) -> None:
        self.home = home
        self.port = port or free_port()
        self.extra_args = extra_args
        self.url = ""
        self.output: deque[str] = deque(maxlen=200)
        self.proc: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 120.0) -> AppServer:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GPUGUIDE_")}
        env.update(GPUGUIDE_HOME=str(self.home), PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "assistant.cli", "serve", "--port", str(self.port), *self.extra_args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        ready = threading.Event()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.output.append(line.rstrip())
                if line.startswith("gpuguide: serving on "):
                    self.url = line.split()[3]
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.2):
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("app did not start:\n" + "\n".join(self.output))
        if not self.url:
            raise RuntimeError(f"app exited with {self.proc.wait()}:\n" + "\n".join(self.output))
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def restart(self) -> AppServer:
        """The same data dir and port, a new process: what a user gets after stopping `gpuguide serve`."""
        self.stop()
        self.url = ""
        return self.start()

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
