"""Growing the synthetic tuning set: old questions keep their folds, new resources fill the smallest folds."""

from __future__ import annotations

from tools.synth_questions import assign_folds


def _q(resource: str, fold: int | None = None) -> dict:
    record = {"resource_id": resource}
    if fold is not None:
        record["fold"] = fold
    return record


def test_all_questions_about_one_resource_share_a_fold() -> None:
    records = [_q("a"), _q("b"), _q("a"), _q("c"), _q("a")]
    assign_folds(records, folds=2)
    assert len({r["fold"] for r in records if r["resource_id"] == "a"}) == 1


def test_a_grown_set_keeps_the_old_folds_and_fills_the_smallest_fold() -> None:
    existing = [_q("old1", 0), _q("old1", 0), _q("old1", 0), _q("old2", 1)]
    new = [_q("new"), _q("old2")]
    assign_folds(new, folds=3, existing=existing)
    assert new[1]["fold"] == 1  # a resource already in the set stays where it was
    assert new[0]["fold"] == 2  # fold 2 held no questions
    assert [r["fold"] for r in existing] == [0, 0, 0, 1]
