"""Abstention: three outcomes judged over the whole result list; only a question the guide lacks is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.index.corpus import build, make_settings, searcher

from assistant.cli import main
from index.records import OUTCOMES
from index.search import Searcher

OUT_OF_SCOPE = [
    "How do I fix N+1 query problems in the Django ORM?",
    "Why did my sourdough starter stop rising?",
    "Can my landlord keep my security deposit for normal wear and tear?",
]
IN_SCOPE = [
    "How does the ring all-reduce in NCCL use bandwidth?",
    "How does FlashAttention avoid writing the attention matrix to memory?",
    "grouped-query attention paper",
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    build(make_settings(home))
    return home


@pytest.fixture(scope="module")
def index(home: Path) -> Searcher:
    return searcher(make_settings(home))


@pytest.mark.parametrize("question", OUT_OF_SCOPE)
def test_a_question_on_a_topic_the_guide_lacks_is_out_of_scope(index: Searcher, question: str) -> None:
    assert index.outcome(question, index.search(question, k=5)) == "out_of_scope"


@pytest.mark.parametrize("question", IN_SCOPE)
def test_a_question_the_guide_covers_is_not_refused(index: Searcher, question: str) -> None:
    assert index.outcome(question, index.search(question, k=5)) != "out_of_scope"


def test_the_outcome_is_one_of_three_and_follows_the_two_thresholds(home: Path) -> None:
    question = IN_SCOPE[0]
    plain = searcher(make_settings(home))
    probability = plain.scope_probability(question, plain.search(question, k=5))
    assert OUTCOMES == ("answer", "weak", "out_of_scope")
    weak = searcher(make_settings(home, abstain_threshold=probability / 2, weak_threshold=(1 + probability) / 2))
    assert weak.outcome(question, weak.search(question, k=5)) == "weak"
    answer = searcher(make_settings(home, abstain_threshold=probability / 2, weak_threshold=probability / 2))
    assert answer.outcome(question, answer.search(question, k=5)) == "answer"


def test_abstains_is_out_of_scope_and_hits_remember_their_query(index: Searcher) -> None:
    for question in (OUT_OF_SCOPE[0], IN_SCOPE[0]):
        hits = index.search(question, k=5)
        assert index.abstains(hits) == index.abstains(hits, question) == (index.outcome(question, hits) == "out_of_scope")
        assert index.outcome(None, hits) == index.outcome(question, hits)


def test_a_filter_that_hides_the_best_resource_does_not_make_the_question_out_of_scope(index: Searcher) -> None:
    question = IN_SCOPE[0]
    hits = index.search(question, k=5, kind="paper")  # NCCL is a repo: filtered away
    assert "nccl" not in [h.resource.id for h in hits]
    assert index.outcome(question, hits) != "out_of_scope"


def test_scope_evidence_sees_words_the_corpus_lacks_and_passages_that_cover_the_question(index: Searcher) -> None:
    lacking = index.scope_features(OUT_OF_SCOPE[0], [])
    covered = index.scope_features(IN_SCOPE[0], [])
    assert lacking.unknown >= 1 and lacking.known_share < 1.0
    assert covered.unknown == 0 and covered.passage_cover > lacking.passage_cover
    assert covered.cos_top > lacking.cos_top


def test_guide_cover_weighs_the_questions_words_the_guides_own_entries_use(index: Searcher) -> None:
    listed = index.scope_features(IN_SCOPE[0], [])
    unlisted = index.scope_features(OUT_OF_SCOPE[1], [])
    assert unlisted.guide_cover == 0.0 < 0.5 < listed.guide_cover <= 1.0


def test_search_never_refuses_it_labels_a_weak_match(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    assert main(["search", OUT_OF_SCOPE[0], "--k", "3"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("weak match:") and "\n1. " in text and "\n3. " in text
    assert main(["search", OUT_OF_SCOPE[0], "--k", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "out_of_scope" and len(data["hits"]) == 3


def test_search_prints_no_weak_label_for_a_covered_question(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    assert main(["search", "--json", IN_SCOPE[0]]) == 0
    outcome = json.loads(capsys.readouterr().out)["outcome"]
    assert main(["search", IN_SCOPE[0]]) == 0
    assert capsys.readouterr().out.startswith("weak match:") == (outcome != "answer")


def test_eval_command_defaults_to_the_products_mode_and_reports_outcomes(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "in", "question": IN_SCOPE[0], "gold": ["https://github.com/example/nccl"]}) + "\n"
        + json.dumps({"id": "out", "question": OUT_OF_SCOPE[0], "kind": "outofscope"}) + "\n"
    )
    assert main(["eval", "--questions", str(questions), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {r["mode"] for r in report["results"]} == {"hybrid+rerank"}
    assert set(report["results"][0]) >= {"id", "mode", "ranked", "abstained", "outcome"}
    confusion = report["metrics"]["hybrid+rerank"]["confusion"]
    assert sum(confusion["in_scope"].values()) == 1 and confusion["out_of_scope"]["out_of_scope"] == 1
    assert main(["eval", "--questions", str(questions), "--mode", "bm25", "--mode", "dense"]) == 0
    text = capsys.readouterr().out
    assert "outcomes (bm25)" in text and "outcomes (dense)" in text and "hybrid+rerank" not in text


def test_the_default_scope_model_weighs_every_feature_and_its_thresholds_are_ordered() -> None:
    from core.settings import Settings
    from index.scope import SCOPE_FEATURES

    cfg = Settings().index
    assert set(cfg.scope_weights) == set(SCOPE_FEATURES)
    assert 0 < cfg.abstain_threshold <= cfg.weak_threshold < 1


def test_hits_without_a_known_query_are_shown_as_weak_never_refused(index: Searcher) -> None:
    hits = index.search(OUT_OF_SCOPE[0], k=3)
    for hit in hits:
        hit.query = ""
    assert index.outcome(None, hits) == "weak" and not index.abstains(hits)
    assert index.outcome(OUT_OF_SCOPE[0], []) == "out_of_scope"  # nothing to show
