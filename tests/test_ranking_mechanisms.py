"""The ranking mechanisms that replace hand-written lists: stemming, mined short/long forms, typo correction,
platform hosts from URLs, passage fusion — each on small fixtures, then end to end on the fixture index."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from fixtures.index.corpus import build, load_corpus, make_settings, searcher

from core.records import Resource
from core.text import TOKENIZER_VERSION as TEXT_VERSION
from core.text import tokenize
from index.aliases import ALIASES_FILE, AliasTable, mine_aliases
from index.bm25 import TOKENIZER_VERSION
from index.fields import FieldIndex
from index.hybrid import aggregate
from index.records import IndexLoadError
from index.search import Searcher
from index.typos import TypoCorrector, count_words, load_words, save_words
from ingest.catalog import infer_kind

PAGE = (Path(__file__).parent / "fixtures" / "ranking" / "acronyms.md").read_text(encoding="utf-8")
TITLES = ["FlashAttention-2: Faster Attention with Better Parallelism", "ThunderKittens-3 Notes"]


@pytest.fixture(scope="module")
def aliases() -> AliasTable:
    return mine_aliases([PAGE, *TITLES], TITLES)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    settings = make_settings(tmp_path_factory.mktemp("home"))
    build(settings)
    return searcher(settings)


# --- stemming -----------------------------------------------------------------------------------------


def test_the_index_tokenizer_folds_inflections_onto_one_token() -> None:
    assert len(set(tokenize("launches launching launched launch"))) == 1
    assert tokenize("kernels")[0] == tokenize("kernel")[0]
    assert tokenize("quantized")[0] == tokenize("quantize")[0]


def test_the_bm25_index_records_the_shared_tokenizer_version() -> None:
    assert TOKENIZER_VERSION.endswith(TEXT_VERSION)


# --- short and long forms -------------------------------------------------------------------------------


def test_a_definition_with_the_short_form_in_parentheses_is_mined(aliases: AliasTable) -> None:
    assert aliases.pairs["tma"] == ["tensor memory accelerator"]
    assert aliases.pairs["dsmem"] == ["distributed shared memory"]


def test_a_definition_with_the_long_form_in_parentheses_is_mined(aliases: AliasTable) -> None:
    assert aliases.pairs["wgmma"] == ["warpgroup matrix multiply-accumulate"]


def test_parentheses_that_define_nothing_are_ignored(aliases: AliasTable) -> None:
    assert set(aliases.pairs) == {"tma", "dsmem", "wgmma", "cat", "fa2"}


def test_a_versioned_title_name_gives_its_initials_when_the_corpus_uses_them(aliases: AliasTable) -> None:
    assert aliases.pairs["fa2"] == ["flashattention-2"]
    assert "tk3" not in aliases.pairs  # no page writes "TK3"


def test_a_short_form_in_the_query_expands_to_its_long_form(aliases: AliasTable) -> None:
    assert aliases.expand("what does the TMA do?") == ["tensor memory accelerator"]
    assert aliases.expand("is fa2 faster?") == ["flashattention-2"]


def test_a_long_form_in_the_query_expands_to_its_short_form(aliases: AliasTable) -> None:
    assert aliases.expand("how does the tensor memory accelerator move tiles") == ["tma"]


def test_a_short_form_that_is_an_ordinary_word_counts_only_in_capitals(aliases: AliasTable) -> None:
    assert aliases.expand("my cat sits on the GPU", common_words={"cat"}) == []
    assert aliases.expand("what is the CAT", common_words={"cat"}) == ["compute allocation table"]


def test_the_alias_table_round_trips_through_json_and_a_bad_file_is_one_line(tmp_path, aliases) -> None:
    aliases.save(tmp_path)
    assert AliasTable.load(tmp_path).pairs == aliases.pairs
    (tmp_path / ALIASES_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(IndexLoadError, match="corrupt.*rebuild"):
        AliasTable.load(tmp_path)


# --- typo correction ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corrector() -> TypoCorrector:
    counts = count_words([PAGE, PAGE, "memory coalescing memory coalescing"])
    return TypoCorrector(counts, english={"banana"})


def test_misspelt_words_are_rewritten_into_the_corpus_spelling(corrector: TypoCorrector) -> None:
    text, fixes = corrector.correct("memroy coalesing with the accelarator")
    assert text == "memory coalescing with the accelerator"
    assert fixes == {"memroy": "memory", "coalesing": "coalescing", "accelarator": "accelerator"}


def test_english_words_acronyms_and_short_words_are_left_alone(corrector: TypoCorrector) -> None:
    assert corrector.correct("banana TMAA tilz") == ("banana TMAA tilz", {})


def test_a_word_far_from_every_corpus_word_is_left_alone(corrector: TypoCorrector) -> None:
    assert corrector.correct("qualcomm") == ("qualcomm", {})


def test_word_counts_round_trip_through_json_and_a_missing_file_names_the_fix(tmp_path) -> None:
    save_words(Counter({"memory": 3}), tmp_path)
    assert load_words(tmp_path) == Counter({"memory": 3})
    with pytest.raises(IndexLoadError, match="missing.*rebuild"):
        load_words(tmp_path / "nowhere")


# --- catalog names and kinds ----------------------------------------------------------------------------


def _resource(rid: str, url: str, authors: str = "") -> Resource:
    return Resource(id=rid, title=rid, url=url, authors=authors, note="", topic="t", section="s", tier=1, kind="blog",
                    position=0, list_anchor="s")


def test_a_site_hosting_several_owners_is_a_platform_and_its_owners_are_the_names() -> None:
    fields = FieldIndex([
        _resource("a", "https://alice.blogsite.dev/post-one"),
        _resource("b", "https://bob.blogsite.dev/post-two"),
        _resource("c", "https://developer.acme.com/blog/x", authors="ACME"),
        _resource("d", "https://docs.acme.com/guide/y"),
    ])
    assert fields.names["alice"] == {0} and fields.names["bob"] == {1}
    assert "blogsite" not in fields.names
    assert fields.names["acme"] == {2, 3}  # the authors name the site: a publisher, not a platform
    assert "developer" not in fields.names and "docs" not in fields.names


def test_a_one_plain_word_path_is_a_landing_page_and_a_slug_is_a_post() -> None:
    assert infer_kind("https://www.example.com/widgets", "Widgets") == "site"
    assert infer_kind("https://www.example.com/widgets-in-depth", "Widgets in depth") == "blog"


# --- passage fusion -------------------------------------------------------------------------------------


def test_one_passage_fusion_is_the_best_passage() -> None:
    groups = np.array([0, 0, 1])
    assert aggregate(np.array([0, 1, 2]), np.array([0.5, 0.4, 0.6]), groups) == {0: 0.5, 1: 0.6}


def test_several_good_passages_outweigh_one_slightly_better_passage() -> None:
    groups = np.array([0, 0, 0, 1])
    rows, scores = np.array([0, 1, 2, 3]), np.array([0.5, 0.4, 0.3, 0.6])
    fused = aggregate(rows, scores, groups, passages=2, decay=0.5)
    assert fused == pytest.approx({0: 0.5 + 0.5 * 0.4, 1: 0.6})
    assert max(fused, key=fused.get) == 0


# --- end to end on the fixture index --------------------------------------------------------------------


def test_the_index_holds_the_mined_short_forms(index: Searcher) -> None:
    assert index.aliases.pairs["tma"] == ["tensor memory accelerator"]


def test_a_search_corrects_typos_before_retrieval(index: Searcher) -> None:
    assert index.retrieval_query("lern cutlas the hard way").text == "lern cutlass the hard way"  # 4 letters: kept
    assert index.search("lern cutlas the hard way", k=1)[0].resource.id == "leimao-cutlass"


def test_a_search_expands_a_short_form_into_bm25_tokens(index: Searcher) -> None:
    rq = index.retrieval_query("what does TMA do")
    assert set(tokenize("tensor memory accelerator")) <= set(rq.expansion_tokens)


def test_the_fixture_catalog_still_loads_its_names() -> None:
    fields = FieldIndex(load_corpus()[1])
    assert fields.names["lei mao"] == {4}
