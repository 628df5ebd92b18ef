"""A large synthetic index build end to end, each stage timed: make N synthetic ~160-word chunks, embed them
(the index stage's Embedder: `embed.device`, the GPU path where CUDA is), write them to the embedding cache,
build the HNSW index on the CPU (the app's `VectorIndex`, `index.hnsw_*` settings) and save it. Prints JSON.

    python bench/gpu_build.py [--n 1000000] [--model DIR] [--out F]

The HNSW build is fed in slices with a progress line each, so a run cut short still shows its rate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report


def synthetic_chunks(n: int, words_per_chunk: int = 160, seed: int = 0) -> list[str]:
    """Chunks of the guide's own vocabulary (bundled catalog titles and notes), drawn with numpy: fast at 1M."""
    catalog = json.loads((ROOT / "ingest" / "data" / "catalog.json").read_text(encoding="utf-8"))
    vocab = np.array(sorted({w for r in catalog["resources"] for w in f"{r['title']} {r['note']}".split() if w.isascii()}))
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for start in range(0, n, 100_000):
        words = vocab[rng.integers(0, len(vocab), size=(min(100_000, n - start), words_per_chunk))]
        out.extend(" ".join(row) for row in words.tolist())
    return out


def stage(report: dict, name: str, started: float, **extra) -> float:
    now = time.perf_counter()
    report["stages"][name] = {"seconds": round(now - started, 2), **extra}
    print(json.dumps({name: report["stages"][name]}), file=sys.stderr, flush=True)
    return now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--model", default=None)
    parser.add_argument("--slice", type=int, default=100_000, help="vectors added to HNSW per progress line")
    parser.add_argument("--no-hnsw", action="store_true", help="stop after the embedding cache (no FAISS needed)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    import torch

    from core.settings import Settings
    from index.embed import Embedder, EmbeddingCache

    faiss = None
    if not args.no_hnsw:
        import faiss

    report: dict = {"chunks": args.n, "machine": {
        "cpu_threads": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
        "faiss": faiss.__version__ if faiss else None, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None},
        "stages": {}}
    total = time.perf_counter()
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), embed={"model_path": args.model})
        report["settings"] = {"embed_device": settings.embed.device, "gpu_batch_size": settings.embed.gpu_batch_size,
                              "hnsw_m": settings.index.hnsw_m, "hnsw_ef_construction": settings.index.hnsw_ef_construction}
        t = time.perf_counter()
        texts = synthetic_chunks(args.n)
        t = stage(report, "make_chunks", t)
        embedder = Embedder(settings)
        embedder.encode_uncached(texts[:2048])  # load the model, as a running app has
        t = stage(report, "load_model", t)
        vectors = embedder.encode_uncached(texts)
        t = stage(report, "embed", t, chunks_per_s=round(args.n / (time.perf_counter() - t), 1),
                  device=str(embedder.model.device))
        keys = [EmbeddingCache.key(embedder.model_id, x) for x in texts]
        embedder.cache.put_many(dict(zip(keys, vectors, strict=True)))
        t = stage(report, "cache_write", t)
        if args.no_hnsw:
            report["total_seconds"] = round(time.perf_counter() - total, 2)
            return write_report(report, args.out)
        from index.vectors import HNSW, VectorIndex, faiss_threads

        ids = np.arange(args.n, dtype=np.int64)
        index = VectorIndex.new(vectors.shape[1], HNSW, settings.index)
        with faiss_threads(os.cpu_count() or 1):
            for start in range(0, args.n, args.slice):
                index.add(ids[start : start + args.slice], vectors[start : start + args.slice])
                print(json.dumps({"hnsw_added": index.ntotal, "elapsed_s": round(time.perf_counter() - t, 1)}),
                      file=sys.stderr, flush=True)
        t = stage(report, "hnsw_build", t, threads=os.cpu_count())
        index.save(Path(home) / "vectors.faiss")
        t = stage(report, "hnsw_save", t, bytes=(Path(home) / "vectors.faiss").stat().st_size)
        # the graph answers: the first 1000 chunks' own vectors find themselves
        with faiss_threads(1):
            hits = sum(int(index.search(vectors[i], 1)[1][0] == i) for i in range(1000))
        report["self_recall_at_1"] = hits / 1000
    report["total_seconds"] = round(time.perf_counter() - total, 2)
    write_report(report, args.out)




if __name__ == "__main__":
    main()
