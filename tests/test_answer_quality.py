"""The answer-quality benchmark's scorer (bench/answer_quality.py) on small answers written here: how it
reads citations, which tokens it treats as numbers and names, when such a token counts as unsupported, and
when a key point counts as covered. No chat model is needed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def aq() -> ModuleType:
    import sys

    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("answer_quality_bench", BENCH / "answer_quality.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# --- citations -------------------------------------------------------------------------------------

def test_markers_read_single_adjacent_and_listed_numbers_once_each(aq) -> None:
    assert aq.markers("Tiling helps [2][1] and so does fusion [1, 3].") == [2, 1, 3]


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before(aq) -> None:
    sentences = aq.split_answer("The KV cache grows per request. [1] Paging avoids fragmentation [2].")
    assert [(s.text, s.cited) for s in sentences] == [
        ("The KV cache grows per request.", [1]),
        ("Paging avoids fragmentation.", [2]),
    ]


def test_a_sentence_without_a_marker_cites_nothing(aq) -> None:
    sentences = aq.split_answer("FlashAttention uses tiling [1]. It is exact.")
    assert [s.cited for s in sentences] == [[1], []]


def test_an_abbreviation_does_not_end_a_sentence(aq) -> None:
    sentences = aq.split_answer("Formats differ, e.g. FP8 and FP4 [1].")
    assert len(sentences) == 1


# --- numbers and names -----------------------------------------------------------------------------

def test_salient_items_are_numbers_versions_camelcase_acronyms_and_inner_capitals(aq) -> None:
    items = aq.salient_items("Kernels on the H100 reach 740 TFLOPS with FlashAttention-3 in PyTorch on Hopper.")
    assert items == ["H100", "740", "TFLOPS", "FlashAttention-3", "PyTorch", "Hopper"]


def test_the_first_word_and_plain_lowercase_words_are_not_salient(aq) -> None:
    assert aq.salient_items("Tiling reduces memory traffic between levels.") == []


def test_a_number_or_acronym_at_the_sentence_start_still_counts(aq) -> None:
    assert aq.salient_items("NCCL picks a protocol.") == ["NCCL"]
    assert aq.salient_items("23x more throughput.") == ["23x"]


def test_an_item_in_the_cited_passage_is_supported(aq) -> None:
    sentence = aq.Sentence("vLLM improves throughput by 2-4x.", [1])
    sources = {1: "PagedAttention\nvLLM improves the throughput of popular LLMs by 2-4× with the same latency."}
    assert aq.unsupported_items(sentence, sources) == []


def test_an_item_only_in_another_source_is_unsupported_for_the_sentence_that_cites_one(aq) -> None:
    sentence = aq.Sentence("Orca reaches 36.9x higher throughput.", [1])
    sources = {1: "Orca schedules each iteration.", 2: "A 36.9x gain was measured elsewhere."}
    assert aq.unsupported_items(sentence, sources) == ["36.9x"]


def test_an_uncited_sentence_is_checked_against_all_sources(aq) -> None:
    sentence = aq.Sentence("Orca reaches 36.9x higher throughput.", [])
    sources = {1: "Orca schedules each iteration.", 2: "A 36.9x gain was measured elsewhere."}
    assert aq.unsupported_items(sentence, sources) == []


def test_a_number_must_match_as_a_whole_token(aq) -> None:
    assert not aq.item_in("40", "reaching only 25-400 units")
    assert aq.item_in("25-40%", "reaching only 25-40% of the maximum")


def test_a_plural_acronym_matches_its_singular(aq) -> None:
    assert aq.item_in("GPUs", "each GPU has its own memory")


def test_a_possessive_matches_the_plain_name(aq) -> None:
    assert aq.item_in("GPU's", "the GPU reads memory")


def test_a_marker_naming_no_given_source_is_reported(aq) -> None:
    scored = aq.score_answer("Tiling cuts HBM traffic [3].", {1: "tiling cuts HBM traffic"}, set(), ["x y z"], None)
    assert scored["bad_markers"] == [3]
    assert scored["unsupported"] == 1  # HBM: the sentence cites no source that exists


# --- key points ------------------------------------------------------------------------------------

def test_a_key_point_is_covered_when_a_sentence_holds_most_of_its_content_stems(aq) -> None:
    point = "Shared memory capacity per SM is 228 KB on H100."
    assert aq.covered_points([point], ["On the H100, every SM has 228 KB of shared memory capacity."], None) == [True]


def test_a_key_point_is_not_covered_by_a_sentence_on_the_same_topic_with_other_facts(aq) -> None:
    point = "Shared memory capacity per SM is 228 KB on H100."
    assert aq.covered_points([point], ["The H100 adds thread block clusters."], None) == [False]


def test_a_paraphrase_with_other_words_is_covered_through_the_embedder(aq, tmp_path) -> None:
    from core.settings import Settings
    from index.embed import Embedder

    embed = Embedder(Settings(home=tmp_path)).encode_uncached
    point = "Static batching leaves the GPU underutilized until the last sequence in the batch finishes."
    answer = "With a fixed batch, the GPU sits partly idle while it waits for the longest request to complete."
    assert aq.lexical_share(point, answer) < aq.COVER_LEXICAL  # the stems alone would miss it
    assert aq.covered_points([point], [answer], embed) == [True]
    assert aq.covered_points([point], ["A batch is a group of prompts sent to the GPU together."], embed) == [False]


def test_an_empty_answer_covers_nothing(aq) -> None:
    assert aq.covered_points(["Tiling reduces HBM traffic."], [], None) == [False]


def test_the_score_of_an_answer_counts_cited_sentences_and_the_gold_source(aq) -> None:
    scored = aq.score_answer("Tiling cuts HBM traffic [2]. It stays exact.", {1: "other", 2: "Tiling cuts HBM traffic"},
                             {2}, ["Tiling cuts HBM traffic."], None)
    assert scored["cited_share"] == 0.5
    assert scored["gold_cited"] is True
    assert scored["covered"] == [True]
    assert scored["uncited"] == 1


# --- the evaluation set ----------------------------------------------------------------------------

def test_every_question_of_the_set_has_two_to_four_key_points_with_evidence(aq) -> None:
    rows = aq.read_set(aq.EVAL_SET, 0, 0)
    assert len(rows) >= 45
    for row in rows:
        assert row["kind"] == "open" and row["gold"].startswith("http") and row["resource_id"]
        assert 2 <= len(row["key_points"]) <= 4, row["id"]
        assert all(kp["point"] and kp["evidence"] for kp in row["key_points"]), row["id"]


def test_evidence_missing_from_its_page_is_reported_and_whitespace_or_escapes_do_not_matter(aq) -> None:
    rows = [{"id": "q", "resource_id": "r", "key_points": [
        {"point": "a", "evidence": "it achieves ~300 GFLOPs"}, {"point": "b", "evidence": "a sentence the page lacks"}]}]
    pages = {"r": "When run on an A6000 it achieves \\~300\nGFLOPs on large matrices."}
    assert aq.evidence_problems(rows, pages) == ["q: a sentence the page lacks"]
