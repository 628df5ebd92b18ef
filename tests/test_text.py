"""core/text.py: the one tokenizer every stage uses (BM25, fields, query parsing, sentence scoring, planner)."""

from __future__ import annotations

from bm25s.stopwords import STOPWORDS_EN_PLUS

import assistant.sentences as sentence_text
from assistant import reading
from core.text import STOP_WORDS, stem, terms, tokenize, words
from index import bm25, fields, query


def test_inflections_of_one_verb_share_a_stem() -> None:
    assert stem("fused") == stem("fusing") == "fuse"
    assert len(set(tokenize("launches launching launched launch"))) == 1


def test_plural_nouns_meet_their_singular() -> None:
    assert tokenize("kernels warps") == tokenize("kernel warp")


def test_an_inflected_word_meets_its_base_spelled_with_a_final_e_or_y() -> None:
    assert stem("caching") == stem("cached") == stem("cache")
    assert stem("studies") == stem("study")
    assert stem("running") == stem("run")


def test_a_verb_meets_its_noun_in_ation() -> None:
    assert stem("optimizing") == stem("optimization") == stem("optimize")
    assert stem("quantized") == stem("quantization")


def test_a_plural_of_a_derived_word_meets_its_singular() -> None:
    assert stem("attentions") == stem("attention")


def test_suffixes_outside_the_list_are_kept_where_snowball_alone_would_strip_them() -> None:
    assert stem("performance") != stem("performing")
    assert stem("cooperative") != stem("cooper")


def test_a_fold_snowball_disagrees_with_is_not_made() -> None:
    assert stem("fusion") != stem("fused")  # Snowball: fusion / fuse
    assert stem("process") == "process"


def test_identifiers_with_digits_and_short_words_are_not_stemmed() -> None:
    assert tokenize("E4M3 H100 tcgen05 ops") == ["e4m3", "h100", "tcgen05", "ops"]


def test_an_acronym_plural_is_the_acronym() -> None:
    assert tokenize("GPUs and TPUs") == ["gpu", "tpu"]


def test_camel_case_names_yield_the_whole_name_and_its_parts() -> None:
    assert words("FlashAttention") == ["flashattention", "flash", "attention"]


def test_hyphenated_words_yield_the_joined_form_and_each_part() -> None:
    assert words("all-reduce") == ["allreduce", "reduce"]  # "all" is a stop word


def test_stop_words_are_the_general_english_list() -> None:
    assert set(STOPWORDS_EN_PLUS) <= STOP_WORDS
    assert words("what is the best way to do it") == ["best", "way"]


def test_a_negated_modal_brings_its_bare_form_into_the_stop_words() -> None:
    assert {"could", "would", "might", "must"} <= STOP_WORDS


def test_terms_are_the_distinct_stems() -> None:
    assert terms("kernel kernels Kernel") == {"kernel"}


def test_every_stage_tokenizes_with_the_core_function() -> None:
    assert bm25.tokenize is tokenize
    assert fields.tokenize is tokenize
    assert query.tokenize is tokenize
    assert sentence_text.terms("fused kernels") == tokenize("fused kernels")
    assert reading.stem("fusing") == stem("fusing")
    assert STOP_WORDS <= reading.STOP
