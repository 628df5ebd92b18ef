"""Hybrid retrieval: RRF fusion, filters before ranking, and one hit per resource with its passages."""

from __future__ import annotations

import pytest
from fixtures.index.corpus import build, make_settings, searcher

from core.errors import UserError
from index.hybrid import rrf
from index.records import MODES
from index.search import Searcher


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    settings = make_settings(tmp_path_factory.mktemp("home"), passages_per_resource=2)
    build(settings)
    return searcher(settings)


def test_rrf_adds_weighted_reciprocal_ranks() -> None:
    fused = rrf([(["a", "b", "c"], 1.0), (["c", "b"], 1.0)], k=1)
    # a: 1/2; b: 1/3 + 1/3; c: 1/4 + 1/2
    assert fused == pytest.approx({"a": 0.5, "b": 2 / 3, "c": 0.75})
    assert sorted(fused, key=lambda key: -fused[key]) == ["c", "b", "a"]


def test_rrf_weights_scale_each_ranking_and_zero_drops_it() -> None:
    assert rrf([(["a", "b"], 2.0), (["b", "a"], 1.0)], k=0) == pytest.approx({"a": 2.5, "b": 2.0})
    assert rrf([(["a"], 1.0), (["b"], 0.0)], k=0) == {"a": 1.0}


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_finds_the_obvious_resource(index: Searcher, mode: str) -> None:
    hits = index.search("ring all-reduce collective communication library", k=3, mode=mode)
    assert "https://github.com/example/nccl" in [h.url for h in hits]


def test_an_unknown_mode_is_a_user_error(index: Searcher) -> None:
    with pytest.raises(UserError, match="unknown search mode"):
        index.search("tma", mode="fuzzy")


def test_a_kind_filter_restricts_candidates_before_ranking(index: Searcher) -> None:
    # Unfiltered, the top 3 hold no repo, so filtering a top 3 afterwards would return nothing.
    query = "online softmax over the attention matrix"
    assert "repo" not in {h.resource.kind for h in index.search(query, k=3, mode="hybrid")}
    hits = index.search(query, k=2, mode="hybrid", kind="repo")
    assert len(hits) == 2 and {h.resource.kind for h in hits} == {"repo"}


def test_tier_and_topic_filters_apply_to_every_mode(index: Searcher) -> None:
    for mode in MODES:
        hits = index.search("attention", k=10, mode=mode, tier=1, topic="attention")
        assert [h.resource.id for h in hits] == ["flashattention"]


def test_read_resources_are_excluded_by_url_or_by_id(index: Searcher) -> None:
    read = {"https://github.com/example/nccl/", "horovod"}
    hits = index.search("ring all-reduce", k=10, mode="hybrid", exclude_read=read)
    assert {"nccl", "horovod"}.isdisjoint(h.resource.id for h in hits)


def test_hits_are_one_per_resource_with_its_own_best_passages(index: Searcher) -> None:
    hits = index.search("attention key value heads", k=10, mode="hybrid")
    ids = [h.resource.id for h in hits]
    assert len(ids) == len(set(ids))
    for hit in hits:
        assert 1 <= len(hit.passages) <= 2
        assert all(chunk.resource_id == hit.resource.id for chunk, _ in hit.passages)
        scores = [score for _, score in hit.passages]
        assert scores == sorted(scores, reverse=True)


def test_resources_come_back_as_catalog_records(index: Searcher) -> None:
    hit = index.search("Learn CUTLASS the Hard Way", k=1, mode="hybrid")[0]
    assert (hit.resource.authors, hit.resource.list_anchor, hit.resource.tier) == ("Lei Mao", "#cutlass--cute", 2)


def test_an_empty_query_returns_nothing(index: Searcher) -> None:
    assert index.search("   ", mode="hybrid") == []


def test_out_of_scope_questions_abstain_and_in_scope_ones_do_not(index: Searcher) -> None:
    assert index.abstains(index.search("How do I fix N+1 query problems in the Django ORM?", k=5))
    assert not index.abstains(index.search("How does the ring all-reduce in NCCL use bandwidth?", k=5))


def test_the_ranking_and_scope_defaults_are_the_fitted_files_values() -> None:
    """No fitted number is copied by hand: the fitting scripts write core/data/fitted.json, settings read it."""
    import json

    from core.settings import FITTED_FILE, IndexSettings

    defaults = IndexSettings()
    for section in json.loads(FITTED_FILE.read_text(encoding="utf-8")).values():
        for name, value in section["index"].items():
            assert getattr(defaults, name) == value, name


def test_writing_one_fitted_section_keeps_the_other(tmp_path) -> None:  # noqa: ANN001 - pytest's tmp_path
    import json

    from core.settings import _load_fitted, write_fitted

    path = tmp_path / "fitted.json"
    write_fitted("retrieval", {"rrf_k": 5}, "tuner", path)
    write_fitted("scope", {"weak_threshold": 0.5}, "calibrator", path)
    write_fitted("retrieval", {"rrf_k": 7}, "tuner", path)
    assert _load_fitted(path) == {"rrf_k": 7, "weak_threshold": 0.5}
    assert json.loads(path.read_text())["scope"]["written_by"] == "calibrator"


def test_vectorised_rrf_matches_the_dict_version_in_scores_and_order() -> None:
    import numpy as np

    from index.hybrid import rrf_rows

    dense, sparse = [5, 3, 9, 1], [3, 7, 5]
    rows, scores = rrf_rows([(np.array(dense), 1.0), (np.array(sparse), 1.5)], k=2)
    expected = rrf([(dense, 1.0), (sparse, 1.5)], k=2)
    assert rows.tolist() == list(expected)  # first appearance: the dense list, then BM25's new rows
    assert scores.tolist() == list(expected.values())


def test_best_passage_per_resource_keeps_first_seen_order_and_drops_unknown_rows() -> None:
    import numpy as np

    from index.hybrid import best_per_group

    groups = np.array([1, 0, 1, -1, 2])
    assert list(best_per_group(np.array([2, 1, 0, 3, 4]), np.array([0.2, 0.5, 0.9, 5.0, 0.1]), groups).items()) == [
        (1, 0.9), (0, 0.5), (2, 0.1)]
