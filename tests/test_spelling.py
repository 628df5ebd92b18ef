"""Typos and run-together names mended against the catalog's own words; full titles kept whole."""

from __future__ import annotations

from assistant.spelling import MENDED_CACHE, Speller, quote_titles
from core.records import Resource


def _r(title: str, authors: str = "") -> Resource:
    return Resource(id=title.lower().replace(" ", "-"), title=title, url="https://example.org/x", authors=authors,
                    note="", topic="Storage Engines", section="Indexes", tier=1, kind="blog", position=0,
                    list_anchor="")


CATALOG = [_r("KernelLLM"), _r("Chips and Cheese: RDNA 4"), _r("Memory Coalescing and Bank Conflicts"),
           _r("How to Optimize a Lock Manager", authors="Boehm")]
ENGLISH = {"i", "read", "and", "the", "what", "next", "paper", "papers", "memory", "bank", "chips", "cheese"}


def test_a_swapped_pair_of_letters_in_a_name_is_mended() -> None:
    assert Speller(CATALOG, ENGLISH).mend("i read kerenlllm and chips and chesee") == "i read kernelllm and chips and cheese"


def test_an_ordinary_word_and_its_inflections_are_left_alone() -> None:
    assert Speller(CATALOG, ENGLISH).mend("the paper, the papers") == "the paper, the papers"


def test_a_word_two_edits_from_every_name_is_left_as_written() -> None:
    assert Speller(CATALOG, ENGLISH).mend("i read kreenllml") == "i read kreenllml"


def test_a_typo_of_a_word_the_rules_look_for_is_mended_too() -> None:
    speller = Speller(CATALOG, ENGLISH, rule_words={"section", "anything"})
    assert speller.mend("i read the indexes setcion, anythng next?") == "i read the indexes section, anything next?"


def test_the_rules_words_are_not_mended_to_without_an_english_word_list() -> None:
    assert Speller(CATALOG, None, rule_words={"whole"}).mend("while reading") == "while reading"


def test_a_run_together_title_is_split_into_its_words() -> None:
    assert Speller(CATALOG, ENGLISH).mend("I read CoalescingBankConflicts") == "I read Coalescing Bank Conflicts"


def test_a_full_title_is_quoted_so_its_words_are_not_the_learners_question() -> None:
    text = "I read how to optimize a lock manager and KernelLLM."
    assert quote_titles(text, CATALOG) == "I read “how to optimize a lock manager” and KernelLLM."


def test_a_title_already_in_quotes_is_not_quoted_again() -> None:
    text = 'I read "How to Optimize a Lock Manager".'
    assert quote_titles(text, CATALOG) == text


def test_the_memory_of_unknown_words_stays_bounded() -> None:
    speller = Speller(CATALOG, ENGLISH)
    def letters(i: int) -> str:  # distinct letter-only words: digits would end the word
        return "zz" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(4))

    speller.mend(" ".join(letters(i) for i in range(MENDED_CACHE + 10)))
    assert len({letters(i) for i in range(MENDED_CACHE + 10)}) == MENDED_CACHE + 10
    assert len(speller._mended) <= MENDED_CACHE
