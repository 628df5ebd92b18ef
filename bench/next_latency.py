"""Latency of one "what should I read next?" answer (route + understand + plan + explain), printed as JSON.

Why: the planner answers in the chat box, and on the 2-core machine it shares the CPU with everything
else. Each generated learner message (bench/data/learner-messages-rewrites.jsonl) is answered by the planner front
the app uses (packaged embedder, fresh query cache per message so every message pays its own embeddings),
and, interleaved in the same run so machine load hits both alike, the baseline: one bare embedding of the
same message (what any answer, search included, pays first).

    .venv/bin/python bench/next_latency.py [--limit N] [--seeds 13 14] [--out docs/measurements/next_latency.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HERE = Path(__file__).resolve().parent
LEARNERS = HERE / "data" / "learner-messages-rewrites.jsonl"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def summary(seconds: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * percentile(seconds, 0.5), 1), "p95_ms": round(1000 * percentile(seconds, 0.95), 1),
            "max_ms": round(1000 * max(seconds), 1) if seconds else 0.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners-file", type=Path, default=LEARNERS)
    parser.add_argument("--seeds", type=int, nargs="*", default=[13, 14])
    parser.add_argument("--limit", type=int, default=0, help="first N messages only (0: all)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    import torch

    from assistant.planner import NextReads
    from core.settings import load_settings
    from index.embed import Embedder, EmbeddingCache
    from ingest.catalog import load_catalog

    settings = load_settings()
    knobs = settings.planner
    embedder = Embedder(settings, cache=EmbeddingCache(Path(":memory:")))
    front = NextReads(load_catalog(), embedder=embedder, route_weights=dict(knobs.route_weights),
                      route_intercept=knobs.route_intercept, route_threshold=knobs.route_threshold,
                      focus_threshold=knobs.focus_threshold)
    rows = [json.loads(line) for line in args.learners_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["seed"] in set(args.seeds)]
    if args.limit:
        rows = rows[:args.limit]
    front.answer("warm up: what should I read next?", set())  # the catalog's vectors, built once per process
    planner: list[float] = []
    baseline: list[float] = []
    routed = 0
    for row in rows:
        question = row["question"]
        embedder.forget_queries()
        forget = getattr(front.reader, "forget", None)  # absent in older planners (bench of old code)
        if forget is not None:
            forget()
        t0 = time.perf_counter()
        decision = front.decide(question)
        if decision.route == "next":
            front.answer(question, set(), k=5)
            routed += 1
        planner.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        embedder.encode_query_uncached(question)
        baseline.append(time.perf_counter() - t0)
    report: dict[str, Any] = {
        "_command": "bench/next_latency.py " + " ".join(sys.argv[1:]),
        "_measured": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
        "cpu_cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "messages": len(rows), "seeds": args.seeds, "routed_to_planner": routed,
        "what_next_answer": summary(planner),
        "baseline_one_embedding_of_the_message": summary(baseline),
    }
    text = json.dumps(report, indent=1)
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(args.out)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
