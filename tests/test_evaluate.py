"""The evaluation harness: metrics by hand on toy lists, and one run over every mode."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fixtures.index.corpus import build, make_settings, searcher

from core.errors import UserError
from index.evaluate import (
    ALL_MODES,
    PRODUCT_MODE,
    Question,
    load_questions,
    metrics_for,
    mrr_at,
    ndcg_at,
    recall_at,
    run_eval,
)
from index.records import OUTCOMES
from index.search import Searcher

RANKED = ["u1", "g1", "a1", "u2", "g2"]


def test_recall_counts_gold_found_capped_at_k() -> None:
    assert recall_at(RANKED, ["g1", "g2"], 1) == 0.0
    assert recall_at(RANKED, ["g1", "g2"], 2) == 0.5  # 1 of min(2 gold, k=2)
    assert recall_at(RANKED, ["g1", "g2"], 5) == 1.0
    assert recall_at(RANKED, ["g1"], 1) == 0.0 and recall_at(["g1"], ["g1", "g2"], 1) == 1.0


def test_mrr_is_the_reciprocal_rank_of_the_first_gold() -> None:
    assert mrr_at(RANKED, ["g2", "g1"]) == 0.5
    assert mrr_at(RANKED, ["a1"]) == pytest.approx(1 / 3)
    assert mrr_at(RANKED, ["missing"]) == 0.0


def test_ndcg_gives_accept_half_the_gain_of_gold() -> None:
    # gains by rank: 0, 1 (g1), 0.5 (a1), 0, 1 (g2); ideal order: 1, 1, 0.5
    dcg = 1 / math.log2(3) + 0.5 / math.log2(4) + 1 / math.log2(6)
    ideal = 1 + 1 / math.log2(3) + 0.5 / math.log2(4)
    assert ndcg_at(RANKED, ["g1", "g2"], ["a1"]) == pytest.approx(dcg / ideal)


def test_abstention_metrics_split_in_scope_from_out_of_scope() -> None:
    rows = [
        (Question("1", "q", gold=["g1"]), ["g1"], "answer"),
        (Question("2", "q", gold=["g1"]), ["x"], "out_of_scope"),
        (Question("3", "q"), ["x"], "out_of_scope"),
        (Question("4", "q"), ["x"], "weak"),
    ]
    m = metrics_for(rows)
    assert (m["n_in_scope"], m["n_out_of_scope"]) == (2, 2)
    assert (m["recall@1"], m["mrr@10"], m["abstention_accuracy"], m["false_abstention_rate"]) == (0.5, 0.5, 0.5, 0.5)


def test_the_confusion_matrix_counts_three_outcomes_for_in_and_out_of_scope() -> None:
    rows = [
        (Question("1", "q", gold=["g"]), [], "answer"),
        (Question("2", "q", gold=["g"]), [], "weak"),
        (Question("3", "q", gold=["g"]), [], "weak"),
        (Question("4", "q"), [], "out_of_scope"),
        (Question("5", "q"), [], "weak"),
    ]
    table = metrics_for(rows)["confusion"]
    assert set(table) == {"in_scope", "out_of_scope"}
    assert all(tuple(row) == OUTCOMES for row in table.values())
    assert table["in_scope"] == {"answer": 1, "weak": 2, "out_of_scope": 0}
    assert table["out_of_scope"] == {"answer": 0, "weak": 1, "out_of_scope": 1}


def test_a_malformed_question_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "ok"}\n{"question": "no id"}\n')
    with pytest.raises(UserError, match=r"q.jsonl:2: not a question record"):
        load_questions(path)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Searcher:
    settings = make_settings(tmp_path_factory.mktemp("home"))
    build(settings)
    return searcher(settings)


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    rows = [
        {"id": "q1", "kind": "lookup", "question": "grouped-query attention paper", "gold": ["https://example.org/papers/gqa"]},
        {"id": "q2", "kind": "outofscope", "question": "How do I fix N+1 query problems in the Django ORM?", "gold": []},
        {"id": "q3", "kind": "next", "question": "I read the NCCL repo, what next?", "read": ["https://github.com/example/nccl"],
         "gold": ["https://github.com/example/horovod"]},
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_every_mode_runs_in_one_invocation(index: Searcher, questions: Path) -> None:
    out = run_eval(questions, ALL_MODES, k=5, searcher=index)
    assert {(r["id"], r["mode"]) for r in out["results"]} == {(q, m) for q in ("q1", "q2", "q3") for m in ALL_MODES}
    assert set(out["metrics"]) == set(ALL_MODES)
    for result in out["results"]:
        assert len(result["ranked"]) == 5 and isinstance(result["abstained"], bool)
        if result["id"] == "q3":
            assert "https://github.com/example/nccl" not in result["ranked"]  # already read
    hybrid = out["metrics"]["hybrid+rerank"]
    assert hybrid["recall@1"] is not None and hybrid["abstention_accuracy"] == 1.0
    assert all(r["outcome"] in OUTCOMES and r["abstained"] == (r["outcome"] == "out_of_scope") for r in out["results"])
    assert out["metrics"]["langchain-faiss"]["abstention_accuracy"] == 0.0  # the stock baseline cannot refuse


def test_next_questions_go_to_the_planner_when_one_is_given(index: Searcher, questions: Path) -> None:
    calls = []

    def planner(question: str, read: list[str], k: int) -> list[str]:
        calls.append((question, read, k))
        return ["https://github.com/example/horovod"]

    out = run_eval(questions, ["hybrid"], k=5, searcher=index, planner=planner)
    assert calls == [("I read the NCCL repo, what next?", ["https://github.com/example/nccl"], 5)]
    q3 = next(r for r in out["results"] if r["id"] == "q3")
    assert q3["ranked"] == ["https://github.com/example/horovod"]
    assert out["metrics"]["hybrid"]["by_kind"]["next"]["mrr@10"] == 1.0


def test_an_unknown_mode_is_refused_before_any_work(index: Searcher, questions: Path) -> None:
    with pytest.raises(UserError, match="unknown mode"):
        run_eval(questions, ["bm25", "magic"], searcher=index)


def test_eval_reads_a_file_of_only_ids_and_questions(index: Searcher, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text('{"id": "a", "question": "ring all-reduce collective communication"}\n{"id": "b", "question": "paged KV cache"}\n')
    out = run_eval(path, k=3, searcher=index)
    assert [(r["id"], len(r["ranked"])) for r in out["results"]] == [("a", 3), ("b", 3)]
    metrics = out["metrics"][PRODUCT_MODE]
    assert (metrics["n_in_scope"], metrics["n_out_of_scope"], metrics["n_unlabelled"]) == (0, 0, 2)
    assert sum(metrics["outcomes_unlabelled"].values()) == 2 and metrics["recall@1"] is None


def test_eval_runs_only_the_products_mode_by_default(index: Searcher, questions: Path) -> None:
    out = run_eval(questions, k=5, searcher=index)
    assert PRODUCT_MODE == "hybrid+rerank"
    assert {r["mode"] for r in out["results"]} == {PRODUCT_MODE} and set(out["metrics"]) == {PRODUCT_MODE}
