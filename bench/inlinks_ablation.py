"""Do inlinks find resources known only by their card? Simulated card-only resources, with and without; JSON.

Why: the resources whose page the shared archive lacks are few and have few questions, so card-only is
simulated: every resource that has page text and is linked from some other crawled page loses its page text
(its chunks and its own outgoing links), as if the crawl had failed. The index is then rebuilt from the stored
chunks once per variant into a scratch data dir (embeddings come from the bench home's cache) and the synthetic
questions whose gold is such a resource (they were written from its passages and card, so they are harder
than card questions) plus those of the real card-only resources are searched through `gpuguide eval`'s product
mode. Nothing is fitted here: the variants are fixed settings, scored per fold.

    .venv/bin/python bench/inlinks_ablation.py [--home DIR] [--scratch DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import DEFAULT_HOME, LIST, ROOT, real_corpus_settings, write_report

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
VARIANTS = {"card alone": (0, 0), "inlinks": (8, 0), "neighbours": (0, 1), "inlinks + neighbours": (8, 1)}


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _scores(searcher: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """success@5 and MRR@10 of the product's mode, overall and per fold."""
    from core.urls import url_key
    from index.evaluate import run_eval

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        f.write("".join(json.dumps({"id": q["id"], "question": q["question"], "gold": q["gold"]}) + "\n" for q in questions))
    try:
        results = run_eval(f.name, searcher=searcher)["results"]
    finally:
        Path(f.name).unlink()
    fold = {q["id"]: int(q["fold"]) for q in questions}
    gold = {q["id"]: {url_key(g) for g in q["gold"]} for q in questions}
    per: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        keys = [url_key(u) for u in r["ranked"][:10]]
        rank = next((i for i, k in enumerate(keys, start=1) if k in gold[r["id"]]), None)
        score = (float(rank is not None and rank <= 5), 1.0 / rank if rank else 0.0)
        per["all"].append(score)
        per[f"fold {fold[r['id']]}"].append(score)
    return {
        name: {"n": len(s), "success@5": round(sum(a for a, _ in s) / len(s), 4), "mrr@10": round(sum(b for _, b in s) / len(s), 4)}
        for name, s in sorted(per.items())
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "gpuguide-inlinks-ablation")
    parser.add_argument("--questions", type=Path, default=SYNTHETIC)
    parser.add_argument("--out")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from core.settings import load_settings
    from core.urls import url_key
    from index.build import build_index
    from index.search import load_searcher
    from ingest.cards import card_chunks
    from ingest.catalog import parse_source
    from ingest.inlinks import card_enrichment, inlink_lines, load_links
    from ingest.store import ChunkStore

    settings = real_corpus_settings(args.home)
    resources = parse_source(str(LIST)).resources
    chunks = ChunkStore(settings.store_file).chunks()
    pages = load_links(settings.inlinks_file)
    with_page = {c.resource_id for c in chunks if c.source_kind != "card"}
    real_card_only = {r.id for r in resources} - with_page
    # Simulated: linked from another page; then drop those pages' own links and keep those still linked.
    dropped = set(inlink_lines(pages, resources, with_page, 1))
    kept_pages = {u: p for u, p in pages.items() if p.get("resource_id") not in dropped}
    dropped = set(inlink_lines(kept_pages, resources, dropped, 1))
    kept_pages = {u: p for u, p in pages.items() if p.get("resource_id") not in dropped}
    card_only = real_card_only | dropped
    body = [c for c in chunks if c.source_kind != "card" and c.resource_id not in dropped]
    url_of = {r.id: url_key(r.url) for r in resources}
    questions = _read(args.questions)
    simulated = [q for q in questions if any(url_key(g) == url_of.get(rid) for g in q["gold"] for rid in dropped)]
    real = [q for q in questions if any(url_key(g) == url_of.get(rid) for g in q["gold"] for rid in real_card_only)]
    report: dict[str, Any] = {
        "home": str(args.home), "simulated_card_only_resources": len(dropped), "real_card_only_resources": len(real_card_only),
        "questions": {"simulated": len(simulated), "real_card_only": len(real)}, "variants": {},
    }
    for name, (inlinks, neighbours) in VARIANTS.items():
        scratch = args.scratch / name.replace(" ", "").replace("+", "-")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        shutil.copy(settings.home / "embeddings.sqlite3", scratch / "embeddings.sqlite3")
        sim = load_settings(home=scratch)
        enrichment = card_enrichment(kept_pages, resources, card_only, inlinks, neighbours)
        build_index(body + card_chunks(resources, enrichment), resources, sim)
        searcher = load_searcher(sim)
        report["variants"][name] = {
            "card_inlinks": inlinks, "card_neighbours": neighbours, "enriched_cards": len(enrichment),
            "simulated": _scores(searcher, simulated), "real_card_only": _scores(searcher, real),
        }
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
