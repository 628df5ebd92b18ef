"""`gpuguide eval` (index.evaluate.run_eval, the product's mode) per fold of our own questions; prints JSON.

Why: the tuning scripts report held-out folds of their own fast paths; this runs the product's real search and
scope outcome over the same folds, so a change can be judged the way `gpuguide eval` judges it. The in-scope
questions are split by whether their gold resource has page text in the index or only its catalog card.
The dev set is run once, as a report (never used to choose anything).

    .venv/bin/python bench/eval_folds.py [--home DIR] [--questions FILE] [--out-of-scope FILE] [--skip-dev]
                                         [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import DEFAULT_HOME, QUESTIONS, ROOT, real_corpus_settings, write_report

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
OUT_OF_SCOPE = ROOT / "bench" / "data" / "out-of-scope-questions.jsonl"
KEPT = ("mrr@10", "recall@1", "recall@5", "false_abstention_rate", "abstention_accuracy", "confusion", "n_in_scope")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _eval(rows: list[dict[str, Any]], searcher: Any) -> dict[str, Any]:
    """run_eval over these question records (written to a scratch JSONL file, as the CLI reads them)."""
    from index.evaluate import PRODUCT_MODE, run_eval

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        f.write("".join(json.dumps({k: r[k] for k in ("id", "question", "gold", "kind") if k in r}) + "\n" for r in rows))
    try:
        report = run_eval(f.name, searcher=searcher)
    finally:
        Path(f.name).unlink()
    metrics = report["metrics"][PRODUCT_MODE]
    return {k: metrics[k] for k in KEPT if k in metrics} | _counts(report["results"], rows)


def _counts(results: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """success@5 (any gold URL in the top 5) and refusals counted, in scope and out (the issue's 'n of N')."""
    from core.urls import url_key

    gold = {r["id"]: {url_key(g) for g in r.get("gold") or []} for r in rows}
    oos = {r["id"] for r in rows if not r.get("gold")}
    hits = [any(url_key(u) in gold[x["id"]] for u in x["ranked"][:5]) for x in results if x["id"] not in oos]
    refused_in = sum(1 for x in results if x["id"] not in oos and x["outcome"] == "out_of_scope")
    refused_out = sum(1 for x in results if x["id"] in oos and x["outcome"] == "out_of_scope")
    return {"success@5": round(sum(hits) / len(hits), 4) if hits else None, "refused_in_scope": f"{refused_in}/{len(rows) - len(oos)}", "refused_out_of_scope": f"{refused_out}/{len(oos)}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--questions", type=Path, default=SYNTHETIC)
    parser.add_argument("--out-of-scope", type=Path, default=OUT_OF_SCOPE)
    parser.add_argument("--skip-dev", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from core.urls import url_key
    from index.search import load_searcher

    searcher = load_searcher(real_corpus_settings(args.home))
    with_pages = {url_key(c.url) for c in searcher.chunks if c.source_kind != "card"}
    questions = _read(args.questions) + _read(args.out_of_scope)
    folds: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        folds[int(q["fold"])].append(q)
    in_scope = [q for q in questions if q.get("gold")]
    report: dict[str, Any] = {
        "home": str(args.home), "chunks": len(searcher.chunks), "questions": str(args.questions.name),
        "by_fold": {str(f): _eval(rows, searcher) for f, rows in sorted(folds.items())},
        "all": _eval(questions, searcher),
        "gold_has_page": _eval([q for q in in_scope if any(url_key(g) in with_pages for g in q["gold"])], searcher),
        "gold_card_only": _eval([q for q in in_scope if not any(url_key(g) in with_pages for g in q["gold"])], searcher),
    }
    if not args.skip_dev:
        dev = _read(QUESTIONS)
        report["dev_set_report_only"] = _eval(dev, searcher) | {
            "gold_card_only": _eval(
                [q for q in dev if q.get("gold") and not any(url_key(g) in with_pages for g in q["gold"])], searcher
            ),
        }
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
