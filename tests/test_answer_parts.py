"""The assistant's building blocks that need no index: sentence tools, extractive answers, follow-ups."""

from __future__ import annotations

from fixtures.index.corpus import load_corpus

from assistant.evidence import Evidence, EvidenceSentence, EvidenceSource
from assistant.extractive import extractive_answer
from assistant.conversation import Turn, standalone_question
from assistant.sentences import relevant_sentences, sentences
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


def test_relevant_sentences_keep_the_best_in_original_order():
    trimmed = relevant_sentences("why avoid writing the attention matrix to HBM", PASSAGE, limit=1)
    assert trimmed == "It avoids writing the attention matrix to HBM by recomputing it in the backward pass."


def evidence_of(*sources: list[tuple[str, float]]) -> Evidence:
    """Evidence with source n+1 holding the given (sentence, relevance) pairs, on fixture resources."""
    resources = load_corpus()[1]
    return Evidence("q", [
        EvidenceSource(n, ResourceHit(resources[n - 1], 1.0),
                       [EvidenceSentence(text, n - 1, (0, i), rel) for i, (text, rel) in enumerate(sents)])
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
