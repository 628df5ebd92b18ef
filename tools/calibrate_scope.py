"""Fit the scope model and choose its thresholds on our own questions, by grouped cross-validation.

Why: "out of scope" is the one refusal, and refusing a learner whose question the guide covers is worse than a
weak answer. The model and thresholds are chosen only on data we wrote or generated — the synthetic in-scope
questions (bench/data/synthetic-questions.jsonl, folds grouped by resource) and our out-of-scope questions
(bench/data/out-of-scope-questions.jsonl, folds grouped by field) — and judged on held-out folds. The dev set
is scored once with the final model, as a report (`dev_set`), never to choose anything.

    .venv/bin/python tools/calibrate_scope.py [--home DIR] [--write-fitted] > docs/measurements/scope_calibration.json

Per fold: a class-balanced, L2-regularised logistic model over the scope features (index/scope.py) is fitted
on the other four folds, then the thresholds are chosen on those same four folds:

* `abstain_threshold`: the highest probability that refuses at most `--max-refused` of the training folds'
  in-scope questions (halfway between neighbouring probabilities);
* `abstain_threshold` is also kept no higher than needed to refuse `--oos-refused` of the training folds'
  out-of-scope questions: synthetic questions are easier than real ones, so the refusal line stays as low as
  the out-of-scope target allows;
* `weak_threshold`: the probability below which `--weak-oos` of the training folds' out-of-scope questions fall
  (so an out-of-scope question that is not refused is still marked weak), and at least the `--weak-in` least
  sure in-scope questions (their top hit is right less often), capped at `--max-weak` of the in-scope ones.

The held-out fold is then judged with that fold's model and thresholds; the confusion matrix adds up every
fold's held-out questions. The shipped model is fitted on all folds with the same rules (`final`); with
`--write-fitted` its weights and thresholds go into core/data/fitted.json, which core/settings.py reads as the
`index.*` defaults (run tools/tune_retrieval.py first: the features are read from the product's search).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: bench.common
from bench.common import QUESTIONS, ROOT, real_corpus_settings  # noqa: E402

from core.logistic import fit_logistic as core_fit_logistic
from core.logistic import logistic_array
from index.scope import SCOPE_FEATURES

log = logging.getLogger("calibrate_scope")

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
OUT_OF_SCOPE = ROOT / "bench" / "data" / "out-of-scope-questions.jsonl"
# Natural wording: the planner's hand-written "search" routing examples (another helper's file).
WRITTEN = ROOT / "bench" / "data" / "next-questions.jsonl"
# Hand-labelled: the routing examples among them that ask about something outside the guide.
WRITTEN_OUT_OF_SCOPE = {"s36", "s37", "s38", "s39", "s40", "cs10", "ks09"}
FOLDS = 5
LATENCY_N = 60  # questions timed for the latency comparison
PREVIOUS_THRESHOLD = 0.46  # the threshold this model replaces (it was set on the dev set); a baseline only
L2_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)  # ridge penalties on standardised weights, chosen by CV
OUTCOMES = ("answer", "weak", "out_of_scope")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def collect(searcher: Any, questions: list[dict[str, Any]], k: int = 10) -> list[dict[str, Any]]:
    """Scope features and the gold's rank for each question, searched the way the product searches."""
    from core.urls import url_key

    rows = []
    for q in questions:
        in_scope = not q["source"].endswith("outofscope")
        hits = searcher.search(q["question"], k=k)
        features = searcher.scope_features(q["question"], hits)
        gold = {url_key(g) for g in q.get("gold") or []}
        ranks = [i for i, h in enumerate(hits, start=1) if url_key(h.url) in gold]
        rows.append({
            "id": q["id"], "in_scope": in_scope, "fold": int(q["fold"]), "kind": q.get("kind", ""), "source": q["source"],
            "features": features.values(), "gold_rank": ranks[0] if ranks else None,
        })
    return rows


def matrix(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([[r["features"][f] for f in SCOPE_FEATURES] for r in rows], dtype=np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Class-balanced logistic regression (the product's one fit, core/logistic.py); raw-scale weights and
    intercept, so the settings hold plain log-odds weights per feature."""
    return core_fit_logistic(x, y, l2, balanced=True)


def probabilities(x: np.ndarray, weights: np.ndarray, intercept: float) -> np.ndarray:
    return logistic_array(x @ weights + intercept)


def choose_l2(rows: list[dict[str, Any]]) -> tuple[float, dict[str, float]]:
    """The ridge penalty with the lowest class-balanced log-loss on held-out folds."""
    x, y = matrix(rows), np.array([r["in_scope"] for r in rows], dtype=np.float64)
    folds = np.array([r["fold"] for r in rows])
    losses = {}
    for l2 in L2_GRID:
        per_fold = []
        for fold in range(FOLDS):
            test, train = folds == fold, folds != fold
            if not test.any():
                continue
            weights, intercept = fit_logistic(x[train], y[train], l2)
            p = np.clip(probabilities(x[test], weights, intercept), 1e-6, 1 - 1e-6)
            yt = y[test]
            per_fold.append(0.5 * -np.log(p[yt == 1]).mean() + 0.5 * -np.log(1 - p[yt == 0]).mean())
        losses[str(l2)] = round(float(np.mean(per_fold)), 4)
    best = min(L2_GRID, key=lambda l2: losses[str(l2)])
    return best, losses


def midpoint_below(values: np.ndarray, allowed: int) -> float:
    """A threshold with at most `allowed` of `values` strictly below it: halfway between the allowed-th and
    the next value, so it is not fitted to one question."""
    v = np.sort(values)
    if allowed >= len(v):
        return float(v[-1]) + 1e-6
    low = float(v[allowed - 1]) if allowed > 0 else 0.0
    return (low + float(v[allowed])) / 2


def choose_thresholds(
    p_in: np.ndarray, p_out: np.ndarray, args: argparse.Namespace
) -> tuple[float, float]:
    """(abstain, weak) on training probabilities of in-scope (`p_in`) and out-of-scope (`p_out`) questions."""
    abstain = midpoint_below(p_in, math.floor(args.max_refused * len(p_in)))
    abstain = min(abstain, midpoint_below(p_out, math.ceil(args.oos_refused * len(p_out))))
    weak = max(
        float(np.quantile(p_out, args.weak_oos)) if len(p_out) else abstain,
        midpoint_below(p_in, math.floor(args.weak_in * len(p_in))),
    )
    weak = min(weak, midpoint_below(p_in, math.floor(args.max_weak * len(p_in))))
    return abstain, max(weak, abstain)


def outcome(p: float, abstain: float, weak: float) -> str:
    return "out_of_scope" if p < abstain else "weak" if p < weak else "answer"


def confusion(rows: list[dict[str, Any]], outcomes: list[str]) -> dict[str, Any]:
    """3 outcomes × in/out of scope, with the rates the targets are stated in."""
    table = {side: {o: 0 for o in OUTCOMES} for side in ("in_scope", "out_of_scope")}
    for row, o in zip(rows, outcomes, strict=True):
        table["in_scope" if row["in_scope"] else "out_of_scope"][o] += 1
    n_in, n_out = sum(table["in_scope"].values()), sum(table["out_of_scope"].values())
    return {
        **table,
        "in_scope_refused_rate": round(table["in_scope"]["out_of_scope"] / n_in, 4) if n_in else None,
        "out_of_scope_refused_rate": round(table["out_of_scope"]["out_of_scope"] / n_out, 4) if n_out else None,
        "out_of_scope_refused_or_weak_rate": round(
            (table["out_of_scope"]["out_of_scope"] + table["out_of_scope"]["weak"]) / n_out, 4
        ) if n_out else None,
    }


def auc(p_in: np.ndarray, p_out: np.ndarray) -> float:
    """Probability that an in-scope question scores above an out-of-scope one (ties count half)."""
    if not len(p_in) or not len(p_out):
        return float("nan")
    greater = (p_in[:, None] > p_out[None, :]).mean()
    ties = (p_in[:, None] == p_out[None, :]).mean()
    return round(float(greater + 0.5 * ties), 4)


def cross_validate(rows: list[dict[str, Any]], features: list[str], args: argparse.Namespace) -> dict[str, Any]:
    columns = [SCOPE_FEATURES.index(f) for f in features]
    x, y = matrix(rows)[:, columns], np.array([r["in_scope"] for r in rows], dtype=np.float64)
    folds = np.array([r["fold"] for r in rows])
    held_p = np.zeros(len(rows))
    outcomes = [""] * len(rows)
    per_fold = []
    for fold in range(FOLDS):
        test, train = folds == fold, folds != fold
        if not test.any():
            continue
        weights, intercept = fit_logistic(x[train], y[train], args.l2)
        p_train = probabilities(x[train], weights, intercept)
        abstain, weak = choose_thresholds(p_train[y[train] == 1], p_train[y[train] == 0], args)
        held_p[test] = probabilities(x[test], weights, intercept)
        for i in np.flatnonzero(test):
            outcomes[i] = outcome(held_p[i], abstain, weak)
        per_fold.append({"fold": fold, "n_test": int(test.sum()), "abstain_threshold": round(abstain, 4),
                         "weak_threshold": round(weak, 4)})
    return {
        "features": features,
        "held_out_auc": auc(held_p[y == 1], held_p[y == 0]),
        "held_out_confusion": confusion(rows, outcomes),
        "folds": per_fold,
        "_outcomes": outcomes,
    }


def final_model(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    x, y = matrix(rows), np.array([r["in_scope"] for r in rows], dtype=np.float64)
    weights, intercept = fit_logistic(x, y, args.l2)
    p = probabilities(x, weights, intercept)
    abstain, weak = choose_thresholds(p[y == 1], p[y == 0], args)
    return {
        "scope_weights": {f: round(float(w), 4) for f, w in zip(SCOPE_FEATURES, weights, strict=True)},
        "scope_intercept": round(intercept, 4),
        "abstain_threshold": round(abstain, 4),
        "weak_threshold": round(weak, 4),
    }


def dev_report(searcher: Any, model: dict[str, Any]) -> dict[str, Any] | None:
    """The dev set judged by the final model: a report, chosen nothing."""
    if not QUESTIONS.exists():
        return None
    from index.scope import scope_probability

    questions = [q for q in read_jsonl(QUESTIONS) if q.get("kind") != "next"]
    rows, outcomes = [], []
    for q in questions:
        hits = searcher.search(q["question"], k=10)
        p = scope_probability(searcher.scope_features(q["question"], hits), model["scope_weights"], model["scope_intercept"])
        rows.append({"in_scope": bool(q.get("gold"))})
        outcomes.append(outcome(p, model["abstain_threshold"], model["weak_threshold"]))
    return {"label": "dev set (report only; nothing was chosen on it)", "n": len(rows), "confusion": confusion(rows, outcomes)}


def latency(searcher: Any, questions: list[str]) -> dict[str, Any]:
    """What judging the outcome adds to a search: search alone vs. the outcome after it (new queries each time,
    the query embedding shared as in the product), same questions, same run."""
    from bench.common import percentiles

    searcher.clear_caches()
    search_s, outcome_s = [], []
    for q in questions:
        searcher.embedder.forget_queries()
        started = time.perf_counter()
        hits = searcher.search(q, k=10)
        search_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        searcher.outcome(q, hits)
        outcome_s.append(time.perf_counter() - started)
    return {"search": percentiles(search_s), "outcome_after_search": percentiles(outcome_s)}


def previous_confidence(features: dict[str, float]) -> float:
    """The rule this model replaces, for comparison on the same questions (best cosine read from the dense list)."""
    return features["cos_top"] + 0.2 * features["strong"] - 0.1 * min(features["unknown"], 2)


def load_calibration_questions() -> list[dict[str, Any]]:
    """Our three sources, each question tagged with its source and fold (grouped: resource, field, question)."""
    out = [{**q, "source": "synthetic"} for q in read_jsonl(SYNTHETIC) if q.get("gold")]
    out += [{**q, "source": "outofscope"} for q in read_jsonl(OUT_OF_SCOPE)]
    if WRITTEN.exists():
        out += [
            {**q, "source": "written-outofscope" if q["id"] in WRITTEN_OUT_OF_SCOPE else "written",
             "fold": int(hashlib.sha1(q["id"].encode()).hexdigest(), 16) % FOLDS}
            for q in read_jsonl(WRITTEN) if q.get("kind") == "search"
        ]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, help="data dir with the real corpus indexed (default: bench's)")
    parser.add_argument("--rows", type=Path, help="reuse (or write) the per-question features here (JSON)")
    parser.add_argument("--max-refused", type=float, default=0.02, help="in-scope share the abstain threshold may refuse (training folds)")
    parser.add_argument("--oos-refused", type=float, default=0.9, help="out-of-scope share the abstain threshold aims to refuse (training folds)")
    parser.add_argument("--weak-oos", type=float, default=0.95, help="out-of-scope share the weak threshold sits above")
    parser.add_argument("--weak-in", type=float, default=0.05, help="in-scope share (the least sure) the weak threshold marks weak at least")
    parser.add_argument("--max-weak", type=float, default=0.2, help="in-scope share the weak threshold may mark weak")
    parser.add_argument("--l2", type=float, help="ridge penalty on standardised weights (default: chosen by CV log-loss)")
    parser.add_argument("--write-fitted", action="store_true",
                        help="write the final model into core/data/fitted.json (the settings defaults)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    settings = real_corpus_settings(args.home) if args.home else real_corpus_settings()
    from index.search import load_searcher

    searcher = load_searcher(settings)
    questions = load_calibration_questions()
    started = time.perf_counter()
    if args.rows and args.rows.exists():
        rows = json.loads(args.rows.read_text(encoding="utf-8"))
    else:
        rows = collect(searcher, questions)
        if args.rows:
            args.rows.write_text(json.dumps(rows), encoding="utf-8")
    log.info("features for %d questions in %.1fs", len(rows), time.perf_counter() - started)
    report = calibrate(rows, args)
    report["dev_set"] = dev_report(searcher, report["final"])
    report["latency"] = latency(searcher, [q["question"] for q in questions[:: max(1, len(questions) // LATENCY_N)]])
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.write_fitted:
        from core.settings import write_fitted

        n = report["data"]["n"]
        write_fitted("scope", report["final"], "tools/calibrate_scope.py --write-fitted (grouped 5-fold CV; "
                     + ", ".join(f"{k} {v}" for k, v in n.items()) + ")")
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


def calibrate(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Held-out folds for the full model and for the best-cosine-only model (reported per source: the written
    questions show how natural wording fares), then the final fit on every fold."""
    losses = None
    if args.l2 is None:
        args.l2, losses = choose_l2(rows)
    full = cross_validate(rows, list(SCOPE_FEATURES), args)
    cosine_only = cross_validate(rows, ["cos_top"], args)
    outcomes = full.pop("_outcomes")
    cosine_only.pop("_outcomes")
    sources = sorted({r["source"] for r in rows})
    by_source = {
        source: confusion(
            [r for r in rows if r["source"] == source],
            [o for r, o in zip(rows, outcomes, strict=True) if r["source"] == source],
        )
        for source in sources
    }
    previous = [
        "out_of_scope" if previous_confidence(r["features"]) < PREVIOUS_THRESHOLD else "answer" for r in rows
    ]
    return {
        "data": {
            "files": {
                "synthetic": str(SYNTHETIC.relative_to(ROOT)), "outofscope": str(OUT_OF_SCOPE.relative_to(ROOT)),
                "written": f"{WRITTEN.relative_to(ROOT)} (kind 'search'; hand-labelled off-topic ones out of scope)",
            },
            "n": {source: sum(r["source"] == source for r in rows) for source in sources},
            "folds": FOLDS,
        },
        "rules": {k: getattr(args, k) for k in ("max_refused", "oos_refused", "weak_oos", "weak_in", "max_weak", "l2")},
        "l2_held_out_log_loss": losses,
        "held_out": full,
        "held_out_by_source": by_source,
        "held_out_written_not_answered": [
            {"id": r["id"], "outcome": o} for r, o in zip(rows, outcomes, strict=True)
            if r["source"].startswith("written") and (o != "out_of_scope") != r["in_scope"] or (r["source"] == "written" and o == "weak")
        ],
        "held_out_cosine_only": cosine_only,
        "previous_rule": {
            "rule": "refuse when best cosine + 0.2 x field match - 0.1 x unknown words (max 2) < 0.46 (set on the dev set)",
            "confusion": confusion(rows, previous),
        },
        "held_out_in_scope_refused_with_gold_in_top10": sum(
            1 for r, o in zip(rows, outcomes, strict=True)
            if r["in_scope"] and o == "out_of_scope" and r["gold_rank"] is not None
        ),
        "final": final_model(rows, args),
    }


if __name__ == "__main__":
    sys.exit(main())
