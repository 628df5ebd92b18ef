"""Summaries and self-checks on the real corpus: how long each way of making them takes and how much of the
model's output survives the source check, against the extractive way in the same run.

    .venv/bin/python bench/digest.py --home DATA_DIR [--sample 3] [--seed 0] [--kinds summary self-check]

Resources are a seeded sample of those with extracted prose. For each: the extracted digest (no model) and the
generated one (packaged model + verifier), each made fresh (the cache is bypassed), timed in this process after
one warm-up (the embedder and the model load once). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project before bench/ (bench/ingest.py)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="an ingested, indexed data dir")
    parser.add_argument("--sample", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", nargs="*", default=["summary", "self-check"], choices=["summary", "self-check"])
    args = parser.parse_args()

    from assistant.digest import GENERATED, DigestMaker, candidates, page_chunks
    from assistant.readtime import stored_chunks
    from core.settings import load_settings
    from index.embed import Embedder
    from ingest.catalog import current_catalog

    settings = load_settings(home=args.home)
    resources = current_catalog(settings)
    chunks = stored_chunks(settings)
    embedder = Embedder(settings)
    by_id: dict[str, list[Any]] = {}
    for chunk in chunks:
        by_id.setdefault(chunk.resource_id, []).append(chunk)
    usable = sorted(r.id for r in resources if len(candidates(page_chunks(by_id.get(r.id, [])))) >= 6)
    sample = random.Random(args.seed).sample(usable, min(args.sample, len(usable)))

    def maker(backend: str) -> DigestMaker:
        cfg = settings.model_copy(update={"learning": settings.learning.model_copy(update={"digest_backend": backend})})
        return DigestMaker(cfg, resources, chunks, embedder)

    extractive, embedded = maker("extractive"), maker("embedded")
    embedded.digest(sample[0], "summary", refresh=True)  # warm-up: model load, prompt prefix, first embeddings
    rows = []
    for rid in sample:
        for kind in args.kinds:
            for name, m in (("extracted", extractive), ("generated", embedded)):
                started = time.perf_counter()
                d = m.digest(rid, kind, refresh=True)
                seconds = time.perf_counter() - started
                rows.append({"resource": rid, "kind": kind, "way": name, "mode": d.mode, "seconds": round(seconds, 2),
                             "items": len(d.points) + len(d.questions), "dropped": d.dropped,
                             "model_kept": d.mode == GENERATED})
    summary: dict[str, Any] = {}
    for kind in args.kinds:
        for way in ("extracted", "generated"):
            sel = [r for r in rows if r["kind"] == kind and r["way"] == way]
            if not sel:
                continue
            entry = {"n": len(sel), "seconds_p50": round(statistics.median(r["seconds"] for r in sel), 2),
                     "seconds_max": max(r["seconds"] for r in sel), "items": sum(r["items"] for r in sel)}
            if way == "generated":
                kept = sum(r["items"] for r in sel if r["model_kept"])
                entry |= {"model_items_kept": kept, "model_items_dropped": sum(r["dropped"] for r in sel),
                          "fell_back_to_extracted": sum(1 for r in sel if not r["model_kept"])}
            summary[f"{kind}/{way}"] = entry
    print(json.dumps({"home": str(args.home), "sample": sample, "summary": summary, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
