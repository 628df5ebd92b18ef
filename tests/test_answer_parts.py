"""The assistant's building blocks that need no index: sentence tools, extractive answers, follow-ups."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fixtures.index.corpus import load_corpus

from assistant.evidence import Evidence, EvidenceSentence, EvidenceSource
from assistant.extractive import extractive_answer
from assistant.conversation import Turn, standalone_question
from assistant.prompt import render_evidence
from assistant.sentences import (
    is_sentence_start,
    plain_math,
    points_ahead,
    relevant_sentences,
    sentences,
    starts_new_sentence,
)
from index.records import ResourceHit

PASSAGE = (
    "## Method\n\nFlashAttention is IO-aware, e.g. it tiles the softmax so blocks fit in SRAM. "
    "It avoids writing the attention matrix to HBM by recomputing it in the backward pass. "
    "The paper also covers block-sparse attention.\n\n```cuda\n__global__ void k() {}\n```\n"
)


def test_sentences_skip_code_and_headings_and_keep_abbreviations_together():
    assert sentences(PASSAGE) == [
        "FlashAttention is IO-aware, e.g. it tiles the softmax so blocks fit in SRAM.",
        "It avoids writing the attention matrix to HBM by recomputing it in the backward pass.",
        "The paper also covers block-sparse attention.",
    ]


def test_simple_inline_tex_reads_as_plain_text():
    assert plain_math("up to 1.1$\\times$ faster, $O(n)$ memory") == "up to 1.1× faster, O(n) memory"


def test_a_formula_and_an_escaped_dollar_stay_as_written():
    assert plain_math("the ratio $\\frac{a}{b}$ costs \\$2") == "the ratio $\\frac{a}{b}$ costs \\$2"


def test_a_table_row_is_a_sentence_under_its_column_names():
    table = ("| Pass | Description |\n|---|---|\n| Coalesce loads | Merge neighbouring loads into one wide transaction |\n\n"
             "| GPU | Memory | SMs |\n|:--|--:|--:|\n| H100 SXM5 | 80 GB | 132 |\n")
    assert sentences(table) == ["Coalesce loads: Merge neighbouring loads into one wide transaction.",
                                "H100 SXM5: Memory 80 GB; SMs 132."]


def test_a_table_without_a_header_rule_is_left_out():
    assert sentences("| a flattened | row of cells |\n| another | row of cells here |") == []


def test_relevant_sentences_keep_the_best_in_original_order():
    trimmed = relevant_sentences("why avoid writing the attention matrix to HBM", PASSAGE, limit=1)
    assert trimmed == "It avoids writing the attention matrix to HBM by recomputing it in the backward pass."


def streamed_first_sentence(text: str, pieces: list[str]) -> str:
    """What a one-sentence stream shows: the pieces up to the one that opens a second sentence."""
    shown = ""
    for piece in pieces:
        if starts_new_sentence(text + shown, piece):
            break
        shown += piece
    return shown


def test_a_streamed_sentence_ends_where_the_next_one_opens():
    pieces = ["It", " tiles", " the", " softmax", " in", " SRAM", ".", " The", " paper", " says", " more", "."]
    assert streamed_first_sentence("", pieces) == "It tiles the softmax in SRAM."


def test_a_streamed_abbreviation_does_not_end_the_sentence():
    pieces = ["It", " uses", " tiles", ",", " e", ".g", ".", " Blocks", " of", " SRAM", "."]
    assert streamed_first_sentence("", pieces) == "It uses tiles, e.g. Blocks of SRAM."


def test_a_streamed_decimal_number_does_not_end_the_sentence():
    pieces = ["The", " kernel", " runs", " at", " 1", ".", "5", " ms", " per", " step", ".", " It", " is"]
    assert streamed_first_sentence("", pieces) == "The kernel runs at 1.5 ms per step."


def test_a_streamed_sentence_after_a_marker_ends_at_its_full_stop():
    pieces = [" SRAM", " [", "1", "].", " Then", " it"]
    assert streamed_first_sentence("FlashAttention keeps the tiles in", pieces) == " SRAM [1]."


def test_a_lone_word_or_an_unfinished_clause_is_no_sentence_to_go_on_from():
    assert not is_sentence_start("pwned")
    assert not is_sentence_start("FlashAttention tiles the softmax through")
    assert is_sentence_start("FlashAttention tiles the softmax through SRAM [1].")


def evidence_of(*sources: list[tuple[str, float]]) -> Evidence:
    """Evidence with source n+1 holding the given (sentence, relevance) pairs, neighbours on the page, on
    fixture resources."""
    resources = load_corpus()[1]
    return Evidence("q", [
        EvidenceSource(n, ResourceHit(resources[n - 1], 1.0),
                       [EvidenceSentence(text, n - 1, (0, i), rel, position=i) for i, (text, rel) in enumerate(sents)])
        for n, sents in enumerate(sources, start=1)
    ])


def test_extractive_answer_quotes_the_most_relevant_evidence_first_each_with_its_source():
    evidence = evidence_of(
        [("It avoids writing the attention matrix to HBM by recomputing it.", 0.9), ("The paper has 12 pages.", 0.1)],
        [("PagedAttention stores the KV cache in fixed-size blocks.", 0.5)],
    )
    assert extractive_answer(evidence, max_sentences=2) == (
        "“It avoids writing the attention matrix to HBM by recomputing it” [1]. "
        "“PagedAttention stores the KV cache in fixed-size blocks” [2]."
    )


def test_extractive_answer_takes_at_most_two_sentences_from_one_source():
    evidence = evidence_of([(f"Sentence number {i} about tiles.", 1.0 - i / 10) for i in range(4)])
    assert extractive_answer(evidence).count("[1]") == 2


def test_extractive_answer_never_quotes_a_sentence_announcing_what_followed_it_on_its_page():
    evidence = evidence_of([("The formula below gives the size of the KV cache.", 0.9),
                            ("The KV cache grows with batch size and sequence length.", 0.5)])
    assert extractive_answer(evidence) == "“The KV cache grows with batch size and sequence length” [1]."


@pytest.mark.parametrize("sentence", [
    "Let us now present a snippet of warp-specialization code [2].",
    "Below is the performance comparison on different GPUs [3].",
    "The table below lists the formats [1].",
    "Here is the comparison of the two kernels [1].",
    "The results are as follows:",
    "Triton is described in the following publication [2].",
])
def test_a_sentence_that_announces_what_came_next_on_its_page_points_ahead(sentence):
    assert points_ahead(sentence)


@pytest.mark.parametrize("sentence", [
    "Performance falls below the ridge point when arithmetic intensity is low [1].",
    "The kernel stays below 50% of peak [1].",
    "Triton is described in the following publication: Triton, an intermediate language [2].",
    "Here is how it works: the kernel tiles the matrix in shared memory [1].",
])
def test_below_as_a_comparison_or_a_list_given_after_a_colon_says_something(sentence):
    assert not points_ahead(sentence)


def test_extractive_answer_is_empty_without_evidence():
    assert extractive_answer(Evidence("anything")) == ""


HISTORY = [Turn("which papers cover FlashAttention?", "which papers cover FlashAttention?", ["FlashAttention", "FlashAttention-2"])]


def test_a_question_without_history_stands_alone():
    assert standalone_question("what is WGMMA?", []) == "what is WGMMA?"


def test_an_ordinal_follow_up_names_the_cited_resource():
    assert standalone_question("and the second one?", HISTORY).startswith("FlashAttention-2")


def test_what_about_extends_the_previous_question():
    assert standalone_question("what about on AMD?", HISTORY) == "which papers cover FlashAttention: what about on AMD?"


def test_a_short_pronoun_question_carries_the_previous_question():
    assert "FlashAttention" in standalone_question("does it work on Hopper?", HISTORY)


def test_an_unrelated_full_question_is_left_alone():
    assert standalone_question("How do CUDA graphs reduce launch overhead?", HISTORY) == "How do CUDA graphs reduce launch overhead?"


def test_the_evidence_shows_each_sources_best_passage_first():
    evidence = evidence_of([("Tiles fit in SRAM.", 0.2), ("Unrelated filler sentence.", 0.0),
                            ("The online softmax avoids HBM writes.", 0.9)])
    far = evidence.sources[0].sentences[2]
    evidence.sources[0].sentences[2] = replace(far, position=5)  # not next to the others: a passage of its own
    assert evidence.blocks()[0].sentences == ("The online softmax avoids HBM writes.",
                                            "Tiles fit in SRAM. Unrelated filler sentence.")


def test_the_lead_evidence_is_the_start_of_the_whole_evidence_within_its_budget():
    evidence = evidence_of([(f"Sentence {i} says something about tiles in shared memory.", 1.0 - i / 10)
                            for i in range(6)], [("PagedAttention stores the KV cache in blocks.", 0.5)])
    lead = evidence.lead(30)
    assert render_evidence(evidence.blocks()).startswith(render_evidence(lead))
    assert len(lead) == 1 and 1 <= len(sentences(lead[0].sentences[0])) < 6


def test_the_lead_evidence_holds_one_sentence_even_when_the_budget_is_smaller():
    evidence = evidence_of([("A long sentence about warp scheduling and register pressure on the SM.", 1.0)])
    assert evidence.lead(1)[0].sentences == ("A long sentence about warp scheduling and register pressure on the SM.",)


def test_a_lead_budget_past_the_first_source_goes_on_into_the_next_one():
    evidence = evidence_of([("Tiles of the inputs fit in SRAM.", 0.9)],
                           [("PagedAttention stores the KV cache in blocks.", 0.5), ("Blocks are 16 tokens.", 0.1)])
    lead = evidence.lead(54)  # titles 17 + 10, sentences 10 + 14: the third (6 more) does not fit
    assert [(b.n, b.sentences) for b in lead] == [(1, ("Tiles of the inputs fit in SRAM.",)),
                                                  (2, ("PagedAttention stores the KV cache in blocks.",))]
    assert render_evidence(evidence.blocks()).startswith(render_evidence(lead))
