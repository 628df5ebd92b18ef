"""Follow-up questions on the real list: is the resource a follow-up is about among the top 3 of its search?

    .venv/bin/python bench/conversation.py [--home DATA_DIR] [--questions bench/data/followup-conversations.jsonl]

Each line of the question file is a two-turn conversation we wrote from the catalog's titles (none from the
dev set): `first`, `followup`, `kind` (version, pronoun, and-x, what-about, source-ref, new-topic) and `gold`
(resource ids the follow-up is about) or `gold_ref` (the number of the first answer's source it points at).
Three ways of searching the follow-up, in the same run: as asked (no conversation), the two questions
concatenated (the usual baseline), and the chain's resolution (assistant/conversation.py: standalone question
plus ordering by the conversation). Prints one JSON object: success@3 per mode and per kind, the resolution's
latency, and every row. The measurement is kept as docs/measurements/followups.json (its name from
when this script was bench/followups.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from common import ROOT, percentiles, real_corpus_settings

QUESTIONS = ROOT / "bench" / "data" / "followup-conversations.jsonl"
K = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, help="an ingested and indexed data dir (default: bench's)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    args = parser.parse_args()

    from assistant.chain import Assistant, Query
    from assistant.conversation import Turn
    from core.settings import Settings
    from index.search import load_searcher

    settings = Settings(home=args.home) if args.home else real_corpus_settings()
    searcher = load_searcher(settings)
    assistant = Assistant(settings, searcher)
    assistant.vocabulary  # built once, outside the timings  # noqa: B018
    rows: list[dict[str, Any]] = []
    resolve_s: list[float] = []
    for line in args.questions.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        first = assistant.ask(Query(item["first"], backend="extractive"))
        turn = Turn(first.question, first.standalone_question, [c.title for c in first.citations],
                    [c.resource_id for c in first.citations])
        if "gold_ref" in item:
            n = int(item["gold_ref"])
            gold = {first.citations[n - 1].resource_id} if n <= len(first.citations) else set()
        else:
            gold = set(item["gold"])
        started = time.perf_counter()
        standalone, resolved_hits = assistant.search_as_asked(Query(item["followup"], history=[turn]))
        resolve_s.append(time.perf_counter() - started)
        ranked = {
            "as_asked": [h.resource.id for h in searcher.search(item["followup"], k=K)],
            "concatenated": [h.resource.id for h in searcher.search(f"{item['first']} {item['followup']}", k=K)],
            "resolved": [h.resource.id for h in resolved_hits[:K]],
        }
        rows.append({"id": item["id"], "kind": item["kind"], "followup": item["followup"], "standalone": standalone,
                     "gold": sorted(gold), **{f"{m}_top{K}": ids for m, ids in ranked.items()},
                     **{f"{m}_hit": bool(gold & set(ids)) for m, ids in ranked.items()}})

    modes = ("as_asked", "concatenated", "resolved")
    kinds = sorted({r["kind"] for r in rows})
    report = {
        "questions": str(args.questions.relative_to(ROOT) if args.questions.is_relative_to(ROOT) else args.questions),
        "n": len(rows),
        f"success_at_{K}": {m: round(statistics.mean(r[f"{m}_hit"] for r in rows), 3) for m in modes},
        "by_kind": {k: {"n": sum(r["kind"] == k for r in rows),
                        **{m: sum(r[f"{m}_hit"] for r in rows if r["kind"] == k) for m in modes}} for k in kinds},
        "resolved_search_s": percentiles(resolve_s),
        "rows": rows,
    }
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
