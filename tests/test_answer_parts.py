"""The assistant's building blocks that need no index: sentence tools, extractive answers, follow-ups."""

from __future__ import annotations

from assistant.extractive import SourceText, extractive_answer
from assistant.followup import Turn, standalone_question
from assistant.text import relevant_sentences, sentences

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


def test_relevant_sentences_keep_the_best_in_original_order():
    trimmed = relevant_sentences("why avoid writing the attention matrix to HBM", PASSAGE, limit=1)
    assert trimmed == "It avoids writing the attention matrix to HBM by recomputing it in the backward pass."


def test_extractive_answer_cites_every_sentence_with_its_source_number():
    sources = [
        SourceText(1, "FlashAttention", (PASSAGE,)),
        SourceText(2, "PagedAttention", ("PagedAttention stores the KV cache in fixed-size blocks like virtual memory pages.",)),
    ]
    answer = extractive_answer("how does FlashAttention avoid writing the attention matrix to HBM?", sources)
    assert "attention matrix to HBM" in answer
    for sentence in answer.split("]"):
        if sentence.strip(" ."):
            assert sentence.rstrip().endswith(("[1", "[2"))


def test_extractive_answer_takes_at_most_two_sentences_from_one_source():
    answer = extractive_answer("FlashAttention attention HBM softmax SRAM", [SourceText(1, "FA", (PASSAGE,))])
    assert answer.count("[1]") == 2


def test_extractive_answer_is_empty_without_sources():
    assert extractive_answer("anything", []) == ""


HISTORY = [Turn("which papers cover FlashAttention?", "which papers cover FlashAttention?", ["FlashAttention", "FlashAttention-2"])]


def test_a_question_without_history_stands_alone():
    assert standalone_question("what is WGMMA?", []) == "what is WGMMA?"


def test_an_ordinal_follow_up_names_the_cited_resource():
    assert standalone_question("and the second one?", HISTORY).startswith("FlashAttention-2")


def test_what_about_extends_the_previous_question():
    assert standalone_question("what about on AMD?", HISTORY) == "which papers cover FlashAttention? on AMD".replace("? ", " ")


def test_a_short_pronoun_question_carries_the_previous_question():
    assert "FlashAttention" in standalone_question("does it work on Hopper?", HISTORY)


def test_an_unrelated_full_question_is_left_alone():
    assert standalone_question("How do CUDA graphs reduce launch overhead?", HISTORY) == "How do CUDA graphs reduce launch overhead?"
