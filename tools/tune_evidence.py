"""Choose the evidence-selection knobs (`llm.evidence_*`) on synthetic questions, never on the dev set.

Proxy, no LLM needed: for a question written from a passage, is a sentence of that passage among the picked
evidence (`source`)? `recall`: what share of that passage's sentences is picked (an answer that covers the
question's points needs the passage around the fact, not one line of it)? `gold`: is the question's resource
among the numbered sources at all? `--objective` says which the search maximises (default `recall`). Questions written
from a catalog card are left out: cards are not evidence (assistant/evidence.py). Candidates, their
embeddings and overlaps are computed once per question; each setting then only reruns the pick
(`passages_by_mmr`, the product's own function). Coordinate search, two rounds, over folds other than
`--holdout`; the chosen setting is then scored on the held-out fold. Prints JSON.

    .venv/bin/python tools/tune_evidence.py [--home DIR] [--questions 200] [--holdout 4] [--objective recall]
"""

from __future__ import annotations

import sys

import argparse
import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: bench.common
from bench.common import DEFAULT_HOME, ROOT, real_corpus_settings  # noqa: E402

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
GRID: dict[str, list[Any]] = {
    "resources": [2, 3, 4, 5],
    "neighbours": [True, False],
    "lexical_weight": [0, 0.15, 0.3, 0.5, 0.8, 1.2],
    "rank_weight": [0, 0.05, 0.1, 0.2, 0.3],
    "passage_weight": [0, 0.1, 0.3, 0.5, 0.7, 1.0],
    "mmr_lambda": [0.5, 0.65, 0.75, 0.85, 1.0],
    "relevance_span": [0.15, 0.25, 0.35, 0.5, 1.0],
    "context_span": [0.0, 0.06, 0.12, 0.2, 0.35, 0.6, 1.0],
}


def prepare(questions: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    from assistant.evidence import EvidenceSelector, estimate_tokens, lexical_overlap, passage_match
    from index.search import load_searcher

    settings = real_corpus_settings(home)
    searcher = load_searcher(settings)
    selector = EvidenceSelector(searcher)
    out = []
    for q in questions:
        hits = searcher.search(q["question"], k=5)
        pool = selector.candidates(hits, neighbours=True)
        direct = {(c.chunk_id, c.text) for c in selector.candidates(hits, neighbours=False)}
        vecs = searcher.embedder.embed_documents([c.text for c in pool])
        out.append({
            "q": q, "pool": pool, "ids": [h.resource.id for h in hits], "vecs": vecs,
            "cos": vecs @ searcher.embedder.embed_query(q["question"]),
            "lex": lexical_overlap(q["question"], [c.text for c in pool]),
            "rank": np.array([c.resource_rank for c in pool]),
            "passage": passage_match(hits, pool),
            "neighbour": np.array([(c.chunk_id, c.text) not in direct for c in pool]),
            "cost": [estimate_tokens(c.text) for c in pool],
            "title_cost": [estimate_tokens(h.resource.title) + 2 for h in hits],
        })
    return out


def score(data: list[dict[str, Any]], p: dict[str, Any], budget: int,
          closest: list[float] | None = None) -> tuple[float, float, float]:
    """(share with a sentence of the question's own passage picked, share with its resource among the sources,
    mean share of the own passage's sentences picked); `closest` collects each question's best picked cosine
    (how near answerable questions' evidence comes)."""
    from assistant.evidence import passages_by_mmr

    source = gold = 0
    recall = 0.0
    cfg = SimpleNamespace(evidence_mmr_lambda=p["mmr_lambda"], evidence_relevance_span=p["relevance_span"],
                          evidence_max_sentences=40, evidence_context_span=p["context_span"])
    for d in data:
        allowed = (d["rank"] < p["resources"]) & (True if p["neighbours"] else ~d["neighbour"])
        idx = np.flatnonzero(allowed)
        if not len(idx):
            continue
        rel = d["cos"][idx] + p["lexical_weight"] * d["lex"][idx] + p["rank_weight"] / (1 + d["rank"][idx])
        rel = rel + p["passage_weight"] * d["passage"][idx]
        sub = [d["pool"][i] for i in idx]
        picked = passages_by_mmr(sub, rel, d["vecs"][idx], [d["cost"][i] for i in idx], d["title_cost"], cfg, budget)
        chosen = [sub[i] for i in picked]
        if closest is not None and picked:
            closest.append(float(d["cos"][idx][picked].max()))
        q = d["q"]
        gold += any(d["ids"][c.resource_rank] == q["resource_id"] for c in chosen)
        source += any(c.chunk_id == q["source_chunk"] for c in chosen)
        own = sum(c.chunk_id == q["source_chunk"] for c in d["pool"])
        recall += sum(c.chunk_id == q["source_chunk"] for c in chosen) / own if own else 0.0
    n = len(data)
    return round(source / n, 3), round(gold / n, 3), round(recall / n, 3)


OBJECTIVES = {"source": 0, "gold": 1, "recall": 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--holdout", type=int, default=4)
    parser.add_argument("--budget", type=int, default=None, help="default: llm.evidence_tokens")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--objective", choices=sorted(OBJECTIVES), default="recall")
    args = parser.parse_args()
    goal = OBJECTIVES[args.objective]

    every = [json.loads(line) for line in SYNTHETIC.read_text().splitlines() if line.strip()]
    every = [q for q in every if q["kind"] == "synthetic-passage"]
    pool = [q for q in every if q.get("fold") != args.holdout]
    random.Random(args.seed).shuffle(pool)
    data = prepare(pool[: args.questions], args.home)
    held = [q for q in every if q.get("fold") == args.holdout]
    random.Random(args.seed).shuffle(held)
    held_data = prepare(held[: args.questions // 2], args.home)

    from core.settings import LLMSettings

    defaults = LLMSettings()
    args.budget = args.budget or defaults.evidence_tokens
    p = {key: getattr(defaults, f"evidence_{key}") for key in GRID}
    report: dict[str, Any] = {"questions": len(data), "holdout_fold": args.holdout, "budget": args.budget,
                              "objective": args.objective, "scores": ["source", "gold", "recall"],
                              "start": [dict(p), score(data, p, args.budget)],
                              "start_holdout": score(held_data, p, args.budget)}
    steps = []
    for _ in range(2):
        for key, values in GRID.items():
            results = [(score(data, {**p, key: v}, args.budget), v) for v in values]
            best = max(results, key=lambda r: (r[0][goal], sum(r[0]), r[1] == p[key]))[1]
            steps.append({"knob": key, "results": {str(v): s for s, v in results}, "chosen": best})
            p[key] = best
    report["steps"] = steps
    report["chosen"] = [p, score(data, p, args.budget)]
    report["holdout"] = {"questions": len(held_data), "chosen": score(held_data, p, args.budget)}
    report["budgets_holdout"] = {b: score(held_data, p, b) for b in (120, 170, 220, 300, 450, 700, 1000, 1400)}
    closest: list[float] = []
    score(held_data, p, args.budget, closest)
    report["closest_cosine_holdout_percentiles"] = {
        q: round(float(np.percentile(closest, q)), 3) for q in (1, 2, 5, 10, 25, 50)} if closest else {}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
