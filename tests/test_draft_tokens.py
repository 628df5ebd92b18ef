"""Guessed tokens (`llm.draft_tokens`, prompt lookup decoding): the guess is what followed the same phrase earlier
in the prompt, and reading guesses in the batch leaves the greedy answer as it was (checked on the packaged model
over the answer's first sentence: batched arithmetic moves logits by about 0.1, so a near tie later on, such as
ending the answer or adding a sentence, can go either way, as it can between two prompt batch sizes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixtures.llm import tokens_until_end

from assistant import prompt
from assistant.llm import EmbeddedLLM, assemble_packaged_gguf, greedy_under_grammar, lookup_draft
from core.settings import Settings

MODELS_DIR = Path(os.environ["GPUGUIDE_MODEL_CACHE"])  # the one shared model cache (tests/conftest.py)


def test_the_guess_is_what_followed_the_last_three_tokens_earlier():
    context = [1, 2, 3, 4, 5, 6, 9, 2, 3, 4]
    assert lookup_draft(context, 2) == [5, 6]


def test_the_latest_earlier_occurrence_wins():
    context = [7, 8, 9, 1, 0, 7, 8, 9, 2, 0, 7, 8, 9]
    assert lookup_draft(context, 1) == [2]


def test_two_tokens_are_matched_when_three_never_recur():
    context = [5, 2, 3, 4, 9, 2, 3]
    assert lookup_draft(context, 3) == [4, 9, 2]


def test_a_single_recurring_token_is_no_guess():
    assert lookup_draft([4, 1, 2, 3, 4], 3) == []


def test_the_guess_stops_at_the_end_of_the_context():
    context = [1, 2, 3, 1, 2, 3]
    assert lookup_draft(context, 8) == [1, 2, 3]


def test_no_guess_is_asked_for_when_the_size_is_zero():
    assert lookup_draft([1, 2, 1, 2], 0) == []


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> EmbeddedLLM:
    home = tmp_path_factory.mktemp("draft")
    settings = Settings(home=home, llm={"prompt_cache": False})
    return EmbeddedLLM(assemble_packaged_gguf(MODELS_DIR), settings.llm, None)


def quoting_prompt(model: EmbeddedLLM) -> list[int]:
    evidence = prompt.render_evidence([
        prompt.EvidenceBlock(1, "FlashAttention", (
            "FlashAttention tiles the attention computation so the full score matrix is never written to HBM; "
            "each block of queries is loaded into SRAM once and the softmax is rescaled as new blocks arrive.",)),
        prompt.EvidenceBlock(2, "vLLM", ("PagedAttention stores the key-value cache in fixed-size blocks.",)),
    ])
    body = model.llm.tokenize(prompt.per_question_text(evidence, "How does FlashAttention avoid HBM writes?").encode(),
                              add_bos=False, special=False)
    return model.prefix + body + model.tail


def first_tokens(model: EmbeddedLLM, tokens: list[int], grammar: str | None, draft_tokens: int, n: int = 24) -> list[int]:
    model.llm.reset()  # each run reads the whole prompt: no state carried between the runs compared
    return tokens_until_end(model, greedy_under_grammar(model.llm, tokens, grammar, draft_tokens), n)


def test_guessed_tokens_leave_the_answer_under_the_grammar_unchanged(model):
    tokens = quoting_prompt(model)
    reference = first_tokens(model, tokens, prompt.prose_grammar(), 0)
    assert len(reference) == 24
    assert first_tokens(model, tokens, prompt.prose_grammar(), 4) == reference


def test_guessed_tokens_leave_the_unconstrained_answer_unchanged(model):
    tokens = quoting_prompt(model)
    assert first_tokens(model, tokens, None, 4) == first_tokens(model, tokens, None, 0)


def test_a_second_answer_after_guesses_starts_from_a_consistent_state(model):
    """The kept state after a run with guesses (rows read but not kept included) must serve the next prompt
    that shares its start exactly as a fresh read would."""
    tokens = quoting_prompt(model)
    first_tokens(model, tokens, prompt.prose_grammar(), 4)
    steps = greedy_under_grammar(model.llm, tokens, prompt.prose_grammar(), 4)  # no reset: reuses the state
    again = [next(steps) for _ in range(24)]
    steps.close()
    assert again == first_tokens(model, tokens, prompt.prose_grammar(), 0)
