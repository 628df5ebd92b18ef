"""The app's tab handlers and API tools called as plain functions over a Guide: no Gradio app is built.

Each test is one behaviour a tab shows; the fixture index is real (FAISS, the packaged embedder).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from ui_fixture import make_home

from assistant.app import api, chat_tab, guide_tab, status_tab
from assistant.app_state import IngestJob
from assistant.guide import Guide
from assistant.profile import Profile
from core.errors import UserError
from core.settings import load_settings

FLASH = "flashattention"


@pytest.fixture(scope="module")
def served_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("handlers-home")
    make_home(home)
    return home


@pytest.fixture
def guide(served_home: Path, tmp_path: Path) -> Guide:
    """The served index, with this test's own reading profile (states never leak between tests)."""
    guide = Guide(load_settings(home=str(served_home)))
    guide.profile = Profile(tmp_path / "profile.sqlite3")  # before anything loads: the chain shares it
    return guide


def test_ticking_a_read_box_counts_it_in_the_progress_line(guide: Guide) -> None:
    before, _, _ = guide_tab.progress_view(guide, "")
    assert guide_tab.select(guide, "", FLASH, True) == "read"
    after, _, _ = guide_tab.progress_view(guide, "")
    assert before.startswith("**Read 0 of") and after.startswith("**Read 1 of")


def test_choosing_a_state_stores_it_and_a_forged_id_is_ignored(guide: Guide) -> None:
    assert guide_tab.select(guide, "state:reading", FLASH, False) == "state"
    guide_tab.select(guide, "state:read", "not-a-resource", False)
    assert guide.states() == {FLASH: "reading"}


def test_a_summary_button_is_left_to_the_digest_view(guide: Guide) -> None:
    assert guide_tab.select(guide, "digest:summary", FLASH, False) == "digest"
    assert guide.states() == {}
    assert guide_tab.digest_view(guide, "state:read", FLASH) is None


def test_the_next_reads_panel_follows_the_interest(guide: Guide) -> None:
    _, _, plain = guide_tab.progress_view(guide, "")
    _, _, focused = guide_tab.progress_view(guide, "collective communication all-reduce")
    assert "NVIDIA NCCL" in focused and plain != focused


def test_guide_search_shows_the_matching_resource(guide: Guide) -> None:
    html = guide_tab.search_view(guide, "Tensor Memory Accelerator copying tiles on Hopper", "any", "any", "any", False)
    assert "Deep Dive on the Hopper TMA Unit" in html
    assert guide_tab.search_view(guide, "   ", "any", "any", "any", False) == ""


def test_the_export_buttons_get_a_path_and_a_self_check_file(guide: Guide, tmp_path: Path) -> None:
    md, csv_file = guide_tab.exports(guide, tmp_path)
    assert Path(md).read_text(encoding="utf-8").startswith("#") and Path(csv_file).exists()


def test_a_reading_plan_answer_offers_its_reads_and_the_offer_marks_them(guide: Guide) -> None:
    answers = [{"route": "next", "read_ids": [FLASH, "not-a-resource"], "question": "q"}]
    assert chat_tab.reads_to_offer(guide, answers) == [FLASH]
    assert chat_tab.offer_label([FLASH]) == "Add this to my reads"
    assert chat_tab.add_understood(guide, answers) == [FLASH]
    assert chat_tab.reads_to_offer(guide, answers) == [] and guide.read_ids() == {FLASH}


def test_a_search_answer_offers_nothing(guide: Guide) -> None:
    assert chat_tab.reads_to_offer(guide, [{"route": "search", "read_ids": [FLASH]}]) == []


def test_the_chat_reply_ends_with_a_cited_answer(guide: Guide) -> None:
    history, asked = chat_tab.user_turn("How does FlashAttention avoid writing the attention matrix to HBM?", [])
    steps = list(chat_tab.respond(guide, asked, history, [], "extractive", 3, "any", "any", "any", False))
    _, answers = steps[-1]
    assert answers[-1]["route"] == "search" and answers[-1]["citations"][0]["resource_id"] == FLASH


def test_the_status_tab_says_how_many_resources_have_their_page_text(guide: Guide) -> None:
    n = len(guide.resources)
    assert f"{n} in the list; {n} of them with their page text in the index" in status_tab.status_view(guide)


def test_a_second_job_is_refused_while_one_runs(guide: Guide) -> None:
    release = threading.Event()
    assert guide.jobs.start(IngestJob(phase="indexing", kind="update"), lambda job: release.wait(30))
    try:
        _, started = status_tab.start_reingest(guide)
        panel, running = status_tab.job_view(guide)
        assert not started and running and panel
    finally:
        release.set()
        guide.wait_job(30)


def test_the_search_tool_refuses_an_oversized_query(guide: Guide) -> None:
    with pytest.raises(UserError, match="limit is 2000"):
        api.search(guide, "why " * 1000)


def test_the_reading_state_tool_sets_and_reads_a_state(guide: Guide) -> None:
    assert api.reading_state(guide, FLASH, "skipped")["state"] == "skipped"
    assert api.reading_state(guide, FLASH)["state"] == "skipped"
    with pytest.raises(UserError, match="state must be one of"):
        api.reading_state(guide, FLASH, "devoured")


def test_the_next_reads_tool_counts_free_text_as_read(guide: Guide) -> None:
    plan = api.next_reads(guide, "", 3, ["the FlashAttention paper"])
    assert plan["counted_as_read"] == [FLASH] and FLASH not in {p["id"] for p in plan["picks"]}
