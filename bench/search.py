"""Search benchmark: prints one JSON object.

* real corpus (the shared WARC ingested into bench/common's data dir): index build time cold (empty embedding
  cache, the model encodes every chunk) and warm (every embedding cached), each in a fresh process with its
  peak RSS; an unchanged re-index; BM25 load-from-disk vs rebuild-from-SQLite; warm single-query latency
  p50/p95 per mode over the dev questions (query embedding included, its LRU cleared before every query);
* scale: synthetic normalised 384-d vectors at 100k and 1M, exact (flat) vs HNSW: build time, memory, latency
  p50/p95 with one FAISS thread, and HNSW recall@10 against exact search for several efSearch values.
  Two distributions: `uniform` (isotropic, as asked: the worst case, nearest neighbours are barely nearer than
  anything else) and `structured` (a power-law spectrum like real MiniLM embeddings of the corpus: ~75 % of the
  variance in 32 of 384 directions).

    .venv/bin/python bench/search.py [--max-n 1000000] [--sizes 100000,1000000] [--data uniform,structured]
                                     [--hnsw-budget-s 900] [--skip-real] [--skip-scale] [--home DIR]
                                     [--latency-only]

Latency per mode is measured for the configured ranking and, interleaved query by query in the same run, for
the baseline ranking without typo correction, alias expansion and passage fusion.

Targets: real-corpus hybrid p95 ≤ 25 ms on 2 cores (rerank excluded); 1M HNSW p95 ≤ 20 ms at recall@10 ≥ 0.95.
An HNSW build whose estimated time (from the previous size) exceeds --hnsw-budget-s is skipped and says so.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import LIST, QUESTIONS, percentiles, real_corpus_settings  # noqa: E402

DIM = 384
N_QUERIES = 200
EF_SWEEP = (64, 128, 256, 512)


def rss_mb() -> float:
    """Current resident set size (the peak is in getrusage; this one can go down)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --- real corpus -------------------------------------------------------------------------------


def _build_child(home: str, cache_file: str, queue: Any) -> None:
    """One index build in its own process, so its time and peak RSS are its own."""
    from index.build import build_index
    from ingest.catalog import parse_source
    from core.settings import Settings
    from ingest.store import ChunkStore

    source = Settings(home=Path(os.environ["BENCH_REAL_HOME"]))
    chunks = ChunkStore(source.store_file).chunks()
    resources = parse_source(str(LIST)).resources
    settings = Settings(home=Path(home), embed={"cache_file": cache_file})
    started = time.perf_counter()
    report = build_index(chunks, resources, settings)
    queue.put({"seconds": round(time.perf_counter() - started, 2), "peak_rss_mb": peak_rss_mb(),
               "chunks": report.chunks, "resources": report.resources, "encoded": report.encoded,
               "index_type": report.index_type})


def _timed_build(home: Path, cache_file: Path) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_build_child, args=(str(home), str(cache_file), queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def latency_only(home: Path | None) -> dict[str, Any]:
    """Warm latency on an existing data dir, no builds (`--latency-only`)."""
    from index.search import load_searcher

    settings = real_corpus_settings(home) if home else real_corpus_settings()
    return {"latency": _latencies(load_searcher(settings))}


def real_corpus(home: Path | None = None) -> dict[str, Any]:
    settings = real_corpus_settings(home) if home else real_corpus_settings()
    os.environ["BENCH_REAL_HOME"] = str(settings.home)
    work = Path(tempfile.mkdtemp(prefix="gpuguide-bench-"))
    try:
        cache = work / "embeddings.sqlite3"
        cold = _timed_build(work / "cold", cache)
        warm = _timed_build(work / "warm", cache)
        from index.build import build_index
        from index.bm25 import BM25_DIR
        from index.search import load_searcher
        from ingest.catalog import parse_source
        from core.settings import Settings
        from ingest.store import ChunkStore

        home = Settings(home=work / "warm", embed={"cache_file": str(cache)})
        chunks = ChunkStore(settings.store_file).chunks()
        started = time.perf_counter()
        unchanged = build_index(chunks, parse_source(str(LIST)).resources, home)
        noop_s = time.perf_counter() - started

        started = time.perf_counter()
        searcher = load_searcher(home)
        load_s = time.perf_counter() - started
        bm25 = _bm25_persistence(home.index_dir / BM25_DIR, [c.indexed_text for c in searcher.chunks])
        latency = _latencies(searcher)
        return {
            "chunks": cold["chunks"], "resources": cold["resources"], "index_type": cold["index_type"],
            "build_cold": {k: cold[k] for k in ("seconds", "peak_rss_mb", "encoded")},
            "build_warm_cache": {k: warm[k] for k in ("seconds", "peak_rss_mb", "encoded")},
            "reindex_unchanged_s": round(noop_s, 3), "reindex_unchanged_encoded": unchanged.encoded,
            "load_searcher_s": round(load_s, 3), "bm25": bm25, "latency": latency,
            "search_process_peak_rss_mb": peak_rss_mb(),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _bm25_persistence(directory: Path, texts: list[str]) -> dict[str, Any]:
    """Which is faster at load time for this corpus: bm25s's saved JSON/.npy files or a rebuild from text."""
    from index.bm25 import BM25Index

    loads, builds = [], []
    for _ in range(5):
        started = time.perf_counter()
        BM25Index.load(directory, len(texts))
        loads.append(time.perf_counter() - started)
        started = time.perf_counter()
        BM25Index.build(texts)
        builds.append(time.perf_counter() - started)
    return {"load_saved_ms": round(1000 * min(loads), 2), "rebuild_from_text_ms": round(1000 * min(builds), 2)}


# The ranking before typo correction, alias expansion and passage fusion: the same-run baseline.
BASELINE_RANKING = {"typo_correction": False, "expansion_weight": 0.0, "dense_expansion": False,
                    "fusion_passages": 1, "fusion_decay": 0.0}


def _interleaved(searcher: Any, questions: list[str], configs: dict[str, dict[str, Any]], mode: str,
                 cached_query: bool) -> dict[str, list[float]]:
    """Seconds per search for each ranking config, interleaved query by query so all see the same CPU load.
    With `cached_query` the query vector is computed before the clock starts (the ranking alone)."""
    cfg = searcher.settings.index
    samples: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(3):
        for q in questions:
            for name, values in configs.items():
                for key, value in values.items():
                    setattr(cfg, key, value)
                searcher.embedder.forget_queries()
                if cached_query:
                    searcher.embedder.embed_query(q)  # into the embedder's query cache
                searcher.clear_caches()
                started = time.perf_counter()
                searcher.search(q, k=10, mode=mode)
                samples[name].append(time.perf_counter() - started)
    for key, value in configs["configured"].items():
        setattr(cfg, key, value)
    return samples


def _latencies(searcher: Any) -> dict[str, Any]:
    """p50/p95 per mode for the configured ranking and, interleaved query by query so both see the same CPU
    load, for `BASELINE_RANKING`. The query embedding and the typo/alias step are recomputed every query."""
    from index.evaluate import load_questions
    from index.records import MODES

    questions = [q.question for q in load_questions(QUESTIONS)]
    cfg = searcher.settings.index
    configs = {"configured": {k: getattr(cfg, k) for k in BASELINE_RANKING}, "baseline": BASELINE_RANKING}
    out: dict[str, Any] = {"baseline_ranking": BASELINE_RANKING}
    for mode in MODES:
        for q in questions[:5]:  # warm-up: model, caches, allocator
            searcher.search(q, k=10, mode=mode)
        samples = _interleaved(searcher, questions, configs, mode, cached_query=False)
        out[mode] = percentiles(samples["configured"])
        out[f"{mode} (baseline ranking)"] = percentiles(samples["baseline"])
    # The ranking alone (query vector already cached): what this code adds on top of the model's forward pass,
    # and far less sensitive to other processes on the machine than the model's matrix products.
    mode = "hybrid+rerank"
    cached = _interleaved(searcher, questions, configs, mode, cached_query=True)
    out[f"{mode}, query vector cached"] = percentiles(cached["configured"])
    out[f"{mode}, query vector cached (baseline ranking)"] = percentiles(cached["baseline"])
    started = time.perf_counter()
    for q in questions:
        searcher.embedder.forget_queries()
        searcher.embedder.embed_query(q)
    out["query_embedding_mean_ms"] = round(1000 * (time.perf_counter() - started) / len(questions), 2)
    return out


# --- scale -------------------------------------------------------------------------------------


def _vectors(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    scale = np.ones(DIM, dtype=np.float32)
    if kind == "structured":
        scale = (np.arange(1, DIM + 1, dtype=np.float32) ** -0.6).astype(np.float32)  # variance ∝ i^-1.2
    for start in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - start), DIM), dtype=np.float32) * scale
        out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _search_latency(index: Any, queries: np.ndarray, k: int = 10) -> tuple[dict[str, float], np.ndarray]:
    found, samples = [], []
    for q in queries:
        started = time.perf_counter()
        _, ids = index.search(q, k, threads=1)
        samples.append(time.perf_counter() - started)
        found.append(np.pad(ids, (0, k - len(ids)), constant_values=-1))
    return percentiles(samples), np.array(found)


def scale_run(kind: str, n: int, settings: Any, hnsw_budget_s: float, hnsw_rate: dict[str, float]) -> dict[str, Any]:
    import faiss

    from index.vectors import FLAT, HNSW, VectorIndex

    x = _vectors(kind, n, seed=1)
    queries = _vectors(kind, N_QUERIES, seed=2)
    ids = np.arange(n, dtype=np.int64)
    result: dict[str, Any] = {"data": kind, "n": n, "dim": DIM}

    before = rss_mb()
    started = time.perf_counter()
    flat = VectorIndex.new(DIM, FLAT, settings)
    flat.add(ids, x)
    result["flat"] = {"build_s": round(time.perf_counter() - started, 2), "rss_delta_mb": round(rss_mb() - before, 1),
                      "bytes_per_vector": DIM * 4 + 8}
    result["flat"]["latency"], _ = _search_latency(flat, queries)
    _, truth = flat.index.search(queries, 10)  # exact top 10, batched (all threads)
    del flat

    estimate = hnsw_rate.get(kind, 0.0) * n * 1.15  # per-vector cost grows slowly (log n)
    if estimate > hnsw_budget_s:
        result["hnsw"] = {"skipped": f"estimated build {estimate:.0f}s > --hnsw-budget-s {hnsw_budget_s:.0f}s"}
        return result
    before = rss_mb()
    started = time.perf_counter()
    hnsw = VectorIndex.new(DIM, HNSW, settings)
    hnsw.add(ids, x)
    build_s = time.perf_counter() - started
    hnsw_rate[kind] = build_s / n
    base = faiss.downcast_index(hnsw.index.index)
    result["hnsw"] = {
        "M": settings.hnsw_m, "ef_construction": settings.hnsw_ef_construction, "build_s": round(build_s, 1),
        "build_threads": faiss.omp_get_max_threads(), "rss_delta_mb": round(rss_mb() - before, 1), "by_ef_search": {},
    }
    for ef in sorted({*EF_SWEEP, settings.hnsw_ef_search}):
        base.hnsw.efSearch = ef
        latency, found = _search_latency(hnsw, queries)
        recall = float(np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)]))
        result["hnsw"]["by_ef_search"][str(ef)] = {**latency, "recall@10": round(recall, 4)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--data", default="uniform,structured")
    parser.add_argument("--hnsw-budget-s", type=float, default=900.0)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--home", type=Path, default=None, help="existing data dir with the ingested archive")
    parser.add_argument("--latency-only", action="store_true", help="real corpus: warm latency only, no builds")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from core.settings import IndexSettings

    out: dict[str, Any] = {"cpus": os.cpu_count(), "search_threads": 1}
    if not args.skip_real:
        out["real_corpus"] = latency_only(args.home) if args.latency_only else real_corpus(args.home)
    if not args.skip_scale:
        settings = IndexSettings()
        rates: dict[str, float] = {}
        sizes = sorted(n for n in (int(s) for s in args.sizes.split(",")) if n <= args.max_n)
        out["scale"] = [scale_run(kind, n, settings, args.hnsw_budget_s, rates)
                        for kind in args.data.split(",") for n in sizes]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
