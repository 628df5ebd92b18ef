"""The prompt's rules, worked example, evidence layout and answer grammar agree with each other."""

from __future__ import annotations

import re

import pytest

from assistant import prompt


def test_the_grammar_offers_only_the_markers_of_given_sources():
    grammar = prompt.answer_grammar(3)
    src = next(line for line in grammar.splitlines() if line.startswith("src ::="))
    assert re.findall(r'"(\d+)"', src) == ["1", "2", "3"]


def test_the_grammar_allows_at_most_the_configured_number_of_sentences():
    assert prompt.answer_grammar(2, max_sentences=2).splitlines()[0] == 'root ::= sent (" " sent)?'


def test_the_grammar_parses_in_llama_cpp():
    from llama_cpp import LlamaGrammar

    assert LlamaGrammar.from_string(prompt.answer_grammar(6), verbose=False) is not None


def test_a_grammar_needs_a_source():
    with pytest.raises(ValueError):
        prompt.answer_grammar(0)


def test_the_worked_example_obeys_the_answer_form():
    sentences = re.split(r"(?<=\.)\s+(?=[A-Z])", prompt.EXAMPLE_ANSWER)
    assert sentences and all(prompt.ANSWER_SENTENCE.fullmatch(s) for s in sentences)


def test_the_rules_offer_no_escape_phrase():
    # Whether the sources answer is decided by verification after generation, never by a reply phrase.
    assert not re.search(r"reply (exactly|only)|if the (sources|evidence) do(es)? not", prompt.RULES, re.IGNORECASE)


def test_evidence_is_numbered_and_page_markers_and_line_breaks_are_removed():
    text = prompt.render_evidence([
        prompt.EvidenceBlock(1, "FlashAttention", ("It tiles attention [12] through\nSRAM.",)),
        prompt.EvidenceBlock(2, "vLLM", ("PagedAttention uses blocks.",)),
    ])
    assert text == "[1] FlashAttention\n- It tiles attention through SRAM.\n[2] vLLM\n- PagedAttention uses blocks."


def test_the_fixed_part_comes_first_and_the_question_last():
    msgs = prompt.messages()
    assert msgs[0]["content"] == prompt.RULES
    assert msgs[-1]["content"].endswith(prompt.EVIDENCE_HEAD + prompt.SPLIT)
    filled = prompt.messages("[1] T\n- s.", "why?")
    assert filled[-1]["content"] == prompt.EVIDENCE_HEAD + prompt.per_question_text("[1] T\n- s.", "why?")
