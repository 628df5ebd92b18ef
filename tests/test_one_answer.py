"""One answer on screen: the sources shown before the model writes stay in the final answer, with the same
numbers, and a backend that fails leaves the quoted evidence over those same sources with the reason."""

from __future__ import annotations

import re

import pytest
from fixtures.index.corpus import build, make_settings, searcher
from ui_fixture import free_port

from assistant.chain import Assistant, Query
from assistant.profile import Profile

QUESTION = "How does FlashAttention avoid writing the attention matrix to HBM?"


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    home = tmp_path_factory.mktemp("one-answer-home")
    settings = make_settings(home)
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens: the server backends fail for real
    settings.llm.ollama_url = closed
    settings.llm.openai_base_url = closed + "/v1"
    build(settings)
    return Assistant(settings, searcher(settings), profile=Profile(home / "profile.sqlite3"))


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_a_failed_backend_keeps_every_shown_source_with_its_number(assistant, backend):
    events = list(assistant.stream(Query(QUESTION, backend=backend)))
    shown = [(c.n, c.resource_id) for c in events[0].answer.citations]
    final = events[-1].answer
    assert events[0].kind == "sources" and shown
    assert final.route == "search"
    assert [(c.n, c.resource_id) for c in final.citations] == shown
    assert final.fallback.startswith(f"{backend} failed")
    assert final.text  # the quoted evidence, not an empty answer


def test_sources_the_final_answer_does_not_cite_are_marked_not_removed(assistant):
    final = list(assistant.stream(Query(QUESTION, backend="ollama")))[-1].answer
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", final.text)}
    assert {c.n for c in final.citations if c.cited} == cited
    assert all(c.n in cited or not c.cited for c in final.citations)
