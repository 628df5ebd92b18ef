"""Only the embedded model's generation is one at a time: while it holds the slot, retrieval, extractive answers,
the planner and search go on; the generation itself runs at a lower CPU priority, restored afterwards.
The packaged model and the fixture index, both real."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from fixtures.index.corpus import build, load_corpus, make_settings, searcher

from assistant.chain import Assistant, Query
from assistant.llm import assemble_packaged_gguf, background_priority, embedded_llm
from assistant.profile import Profile

MODELS_DIR = Path(os.environ["GPUGUIDE_MODEL_CACHE"])  # the one shared model cache (tests/conftest.py)


def thread_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_generation_priority_is_lower_inside_and_restored_after() -> None:
    before = thread_nice()
    with background_priority(5):
        inside = thread_nice()
    assert inside == min(19, before + 5) and thread_nice() == before


def test_priority_zero_leaves_the_thread_as_it_is() -> None:
    before = thread_nice()
    with background_priority(0):
        assert thread_nice() == before


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    home = tmp_path_factory.mktemp("slot-home")
    settings = make_settings(home)
    settings.llm.model_path = str(assemble_packaged_gguf(MODELS_DIR))
    settings.llm.max_tokens = 120
    chunks, resources = load_corpus()
    build(settings, chunks, resources)
    return Assistant(settings, searcher(settings), profile=Profile(home / "profile.sqlite3"))


def test_extractive_answers_and_the_planner_run_while_a_generation_holds_the_slot(assistant: Assistant) -> None:
    llm = embedded_llm(assistant.settings)
    llm.warm()
    generating = threading.Event()
    release = threading.Event()

    def slow_reader() -> None:  # a chat that reads its stream slowly keeps the slot the whole time
        for _ in llm.stream("Question: explain tiling in two sentences.", None, 60):
            generating.set()
            release.wait(60)

    thread = threading.Thread(target=slow_reader)
    thread.start()
    try:
        assert generating.wait(120)
        assert llm.lock.locked()
        started = time.monotonic()
        answer = assistant.ask(Query("How does FlashAttention avoid writing the attention matrix to HBM?",
                                     backend="extractive"))
        plan = assistant.ask(Query("I finished the Triton tutorial, what should I read next?", backend="extractive"))
        hits = assistant.searcher.search("warp shuffle reduction", k=3)
        took = time.monotonic() - started
        assert llm.lock.locked()  # the generation still held the slot throughout
    finally:
        release.set()
        thread.join(120)
    assert answer.citations and answer.text
    assert plan.route == "next" and hits
    assert took < 30
