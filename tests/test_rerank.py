"""The default reranker: field evidence (title, acronyms, authors, typos) and the query's own constraints."""

from __future__ import annotations

import pytest
from fixtures.index.corpus import load_corpus

from core.records import Resource
from core.settings import Settings
from index.aliases import mine_aliases
from index.fields import FieldIndex
from index.query import parse_query
from index.records import ResourceHit
from index.rerank import FieldReranker, RerankWeights, make_reranker


@pytest.fixture(scope="module")
def catalog() -> list[Resource]:
    return load_corpus()[1]


@pytest.fixture(scope="module")
def reranker(catalog: list[Resource]) -> FieldReranker:
    return FieldReranker(FieldIndex(catalog))


def tied(catalog: list[Resource]) -> list[ResourceHit]:
    """Every resource with the same first-stage score, in catalog order."""
    return [ResourceHit(resource=r, score=1.0) for r in catalog]


def order(hits: list[ResourceHit]) -> list[str]:
    return [h.resource.id for h in hits]


def test_the_default_reranker_is_the_field_reranker(tmp_path, catalog: list[Resource]) -> None:
    assert isinstance(make_reranker(Settings(home=tmp_path), FieldIndex(catalog)), FieldReranker)


def test_an_acronym_in_the_title_lifts_the_resource(reranker: FieldReranker, catalog: list[Resource]) -> None:
    assert order(reranker.rerank("how does GQA save memory?", tied(catalog)))[0] == "gqa"


def test_an_identifier_in_the_note_lifts_the_resource_when_weighted(catalog: list[Resource]) -> None:
    # The tuned default weight is 0 (tools/tune_retrieval.py); the evidence itself still works when weighted.
    reranker = FieldReranker(FieldIndex(catalog), RerankWeights(title=0.0, identifiers=0.1, named=0.0))
    assert order(reranker.rerank("what does TMA do", tied(catalog)))[0] == "hopper-tma"


def test_a_misspelt_title_still_matches(reranker: FieldReranker, catalog: list[Resource]) -> None:
    assert order(reranker.rerank("lern cutlas the hard way", tied(catalog)))[0] == "leimao-cutlass"


def test_evidence_reorders_but_a_strong_first_stage_lead_survives(
    reranker: FieldReranker, catalog: list[Resource]
) -> None:
    hits = [ResourceHit(resource=r, score=10.0 if r.id == "vllm" else 1.0) for r in catalog]
    assert order(reranker.rerank("GQA", hits))[0] == "vllm"


def test_papers_only_puts_papers_first_and_keeps_the_rest(reranker: FieldReranker, catalog: list[Resource]) -> None:
    hits = reranker.rerank("papers only: how are LLM-written kernels benchmarked?", tied(catalog))
    kinds = [h.resource.kind for h in hits]
    assert kinds[:3] == ["paper"] * 3 and "paper" not in kinds[3:]
    assert len(hits) == len(catalog)
    assert hits[0].resource.id == "kernelbench"


def test_excluded_kinds_go_last(reranker: FieldReranker, catalog: list[Resource]) -> None:
    hits = reranker.rerank("ring all-reduce, no repos please", tied(catalog))
    kinds = [h.resource.kind for h in hits]
    assert kinds.index("repo") == len(kinds) - 3  # the three repos, at the end


def test_anything_by_an_author_only_puts_their_work_first(reranker: FieldReranker, catalog: list[Resource]) -> None:
    hits = reranker.rerank("Anything by Lei Mao? Only his stuff, please.", tied(catalog))
    assert order(hits)[0] == "leimao-cutlass"


def test_query_constraints_are_parsed_from_plain_wording() -> None:
    intent = parse_query("Code repos only, no papers or blog posts: inference engines")
    assert (intent.kinds_only, intent.kinds_excluded) == ({"repo"}, {"paper", "blog"})
    assert parse_query("papers only, no repos or model cards").kinds_excluded == {"repo", "model"}
    assert parse_query("Anything by Lei Mao? Only his stuff").names_only


def test_a_short_form_defined_in_the_corpus_expands_the_query() -> None:
    aliases = mine_aliases(["Grouped-query attention (GQA) shares one key-value head across a group of heads."])
    assert "gqa" in parse_query("converting to grouped-query attention", aliases).expansions


def test_a_cross_encoder_folder_replaces_the_default_and_keeps_the_constraints(
    tmp_path, catalog: list[Resource]
) -> None:
    from index.embed import packaged_model_path
    from index.rerank import CrossEncoderReranker

    # MiniLM with an untrained classification head: enough to exercise the interface, not the quality.
    settings = Settings(home=tmp_path, index={"rerank_model_path": str(packaged_model_path())})
    reranker = make_reranker(settings, FieldIndex(catalog))
    hits = reranker.rerank("papers only: attention", tied(catalog))
    assert isinstance(reranker, CrossEncoderReranker)
    assert sorted(order(hits)) == sorted(r.id for r in catalog)
    assert [h.resource.kind for h in hits][:3] == ["paper"] * 3
