"""Embedding throughput on CPU vs GPU: the index stage's Embedder (`embed.device`) over a synthetic corpus
of ~160-word chunks: a batch sweep at 20k chunks, then 200k; the previous GPU path (sentence-transformers
`encode`, fp32) as the baseline in the same run; and the GPU vectors' cosine to the CPU's. Prints one JSON object.

    python bench/gpu_embed.py [--sizes 20000,200000] [--batches 128,256,512,1024,2048] [--tokenize auto,0] [--model DIR] [--out F]

Run it where a GPU is: without CUDA it measures the CPU only. `--model` points at any local
sentence-transformers folder (default: the packaged MiniLM).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report

if TYPE_CHECKING:
    from core.settings import Settings
    from index.gpu_tokenizer import FastTokenizer


def synthetic_chunks(n: int, words_per_chunk: int = 160, seed: int = 0) -> list[str]:
    """Chunks made of the guide's own vocabulary (titles and notes of the bundled catalog)."""
    catalog = json.loads((ROOT / "ingest" / "data" / "catalog.json").read_text(encoding="utf-8"))
    vocab = sorted({w for r in catalog["resources"] for w in f"{r['title']} {r['note']}".split() if w.isascii()})
    rng = random.Random(seed)
    return [" ".join(rng.choices(vocab, k=words_per_chunk)) for _ in range(n)]


def bench_settings(home: Path, device: str, batch: int, model: str | None, processes: int | None) -> Settings:
    from core.settings import Settings

    return Settings(home=home, embed={"device": device, "batch_size": batch, "gpu_batch_size": batch,
                                      "model_path": model, "gpu_tokenize_processes": processes})


def resolved_workers(n: int, model: str | None, processes: int | None) -> int:
    """The worker processes a way of tokenizing comes to at n texts, so a sweep can skip ways that coincide
    (below `embed.gpu_processes_from`, the default is threads, the same as 0)."""
    from index.embed import Embedder

    with tempfile.TemporaryDirectory() as home:
        return Embedder(bench_settings(Path(home), "cuda", 2048, model, processes)).tokenize_processes(n)


def measure(texts: list[str], device: str, batch: int, model: str | None, keep: int = 0,
            processes: int | None = None) -> tuple[dict, np.ndarray]:
    """Chunks/s of the index stage's Embedder (`encode_uncached`, the cache bypassed) at one batch size and way of
    tokenizing (`processes`: None = the setting's default, 0 = threads); returns the first `keep` vectors for the
    agreement check."""
    from index.embed import Embedder

    with tempfile.TemporaryDirectory() as home:
        embedder = Embedder(bench_settings(Path(home), device, batch, model, processes))
        workers = embedder.tokenize_processes(len(texts))
        embedder.encode_uncached(texts[: min(len(texts), 2 * batch)])  # warm-up: load, kernels, allocator
        started = time.perf_counter()
        vectors = embedder.encode_uncached(texts)  # returns host numpy: the GPU work is finished when it returns
        seconds = time.perf_counter() - started
    row = {"device": device, "path": "pipelined fp16" if device == "cuda" else "encode fp32", "batch_size": batch,
           "tokenize": f"{workers} processes" if device == "cuda" and workers >= 2 else "threads",
           "chunks": len(texts), "seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 1),
           "dim": int(vectors.shape[1])}
    print(json.dumps(row), file=sys.stderr, flush=True)  # progress, in case the run is cut short
    return row, vectors[:keep]


def measure_baseline(texts: list[str], batch: int, model: str | None) -> dict:
    """The path before this change, in the same run: sentence-transformers `encode`, fp32, on CUDA."""
    from core.settings import Settings
    from index.embed import load_model, resolve_model_path

    path = resolve_model_path(Settings(embed={"model_path": model}))
    st = load_model(path, "cuda", False)
    st.encode(texts[: 2 * batch], batch_size=batch, normalize_embeddings=True, show_progress_bar=False)
    started = time.perf_counter()
    st.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    seconds = time.perf_counter() - started
    row = {"device": "cuda", "path": "encode fp32 (before)", "batch_size": batch, "chunks": len(texts),
           "seconds": round(seconds, 2), "chunks_per_s": round(len(texts) / seconds, 1)}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def tokenize_in_workers_alone(fast: FastTokenizer, texts: list[str], batch: int = 512, rounds: int = 4) -> dict:
    """The CPU's tokenizing ceiling with no GPU work beside it: texts to tensors in one worker process per core
    but one, as the pipeline runs them from `embed.gpu_processes_from` texts (the workers started first).
    Whole rounds of batches, so no worker idles at the end of the measure."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(2, (os.cpu_count() or 1) - 1)
    texts = texts[: rounds * workers * batch]
    batches = [texts[i : i + batch] for i in range(0, len(texts), batch)]
    with fast.processes(workers) as tokenize, ThreadPoolExecutor(workers) as pool:
        list(pool.map(tokenize, batches[:workers]))
        started = time.perf_counter()
        list(pool.map(tokenize, batches))
        seconds = time.perf_counter() - started
    return {"tokenize_workers": workers, "tokenize_in_workers_alone_chunks_per_s": round(len(texts) / seconds)}


def measure_ceilings(texts: list[str], batch: int, model: str | None) -> dict:
    """What bounds the pipeline: the fp16 forward pass alone on batches already on the GPU, the Rust
    tokenizer alone (one batch call over all cores, then the app's conversion to tensors on one thread), and
    tokenizing in worker processes alone."""
    import torch

    from core.settings import Settings
    from index.embed import load_model, resolve_model_path
    from index.gpu_tokenizer import FastTokenizer

    st = load_model(resolve_model_path(Settings(embed={"model_path": model})), "cuda", True)
    fast = FastTokenizer.for_model(st)
    assert fast is not None, "this model has no fast tokenizer"
    sample = texts[: 10 * batch]
    started = time.perf_counter()
    batches = [fast(sample[i : i + batch]) for i in range(0, len(sample), batch)]
    tokenize_s = time.perf_counter() - started
    on_gpu = [{k: v.cuda() for k, v in b.items() if isinstance(v, torch.Tensor)} for b in batches]
    with torch.inference_mode():
        st(dict(on_gpu[0]))
        torch.cuda.synchronize()
        started = time.perf_counter()
        for b in on_gpu:
            st(dict(b))
        torch.cuda.synchronize()
        forward_s = time.perf_counter() - started
    row = {"batch_size": batch, "chunks": len(sample),
           "forward_alone_chunks_per_s": round(len(sample) / forward_s),
           "tokenize_to_tensors_one_thread_chunks_per_s": round(len(sample) / tokenize_s),
           **tokenize_in_workers_alone(fast, texts)}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="20000,200000", help="corpus sizes embedded on the GPU")
    parser.add_argument("--batches", default="128,256,512,1024,2048", help="batch sweep at the smallest size")
    parser.add_argument("--big-batches", default="1024,2048", help="batch sizes at the larger sizes")
    parser.add_argument("--tokenize", default="auto,0",
                        help="ways of tokenizing at each size (ways that come to the same worker count run once): auto = the setting's default, N = N worker processes, 0 = threads")
    parser.add_argument("--cpu-n", type=int, default=1_000, help="chunks embedded on the CPU (baseline, agreement)")
    parser.add_argument("--cpu-batches", default="64")
    parser.add_argument("--baseline-n", type=int, default=20_000, help="chunks for the old GPU path (0: skip)")
    parser.add_argument("--model", default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    import torch

    sizes = [int(x) for x in args.sizes.split(",")]
    texts = synthetic_chunks(max(sizes + [args.cpu_n]))
    report: dict = {
        "machine": {"cpu_threads": torch.get_num_threads(), "python": platform.python_version(), "torch": torch.__version__,
                    "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None},
        "corpus": {"chunks": max(sizes), "words_per_chunk": 160},
    }
    cpu_rows = [measure(texts[: args.cpu_n], "cpu", int(b), args.model, keep=args.cpu_n) for b in args.cpu_batches.split(",")]
    report["cpu"] = [r for r, _ in cpu_rows]
    if torch.cuda.is_available():
        if args.baseline_n:
            report["cuda_before"] = measure_baseline(texts[: args.baseline_n], 256, args.model)
        rows = []
        asked = [None if w == "auto" else int(w) for w in args.tokenize.split(",")]
        for i, n in enumerate(sizes):
            by_workers = {resolved_workers(n, args.model, way): way for way in reversed(asked)}
            ways = list(reversed(by_workers.values()))  # first-named way of each distinct worker count
            for b in (args.batches if i == 0 else args.big_batches).split(","):
                for way in ways:
                    row, vecs = measure(texts[:n], "cuda", int(b), args.model, keep=args.cpu_n, processes=way)
                    rows.append(row)
        report["cuda"] = rows
        report["ceilings"] = measure_ceilings(texts, 2048, args.model)
        cos = (cpu_rows[0][1] * vecs).sum(axis=1)
        report["agreement_with_cpu"] = {"chunks": len(cos), "min_cosine": round(float(cos.min()), 6),
                                        "mean_cosine": round(float(cos.mean()), 6)}
        best_cpu = max(r["chunks_per_s"] for r in report["cpu"])
        for n in sizes:
            best = max(r["chunks_per_s"] for r in rows if r["chunks"] == n)
            report.setdefault("best_chunks_per_s", {})[str(n)] = best
        report["gpu_over_cpu"] = round(max(r["chunks_per_s"] for r in rows) / best_cpu, 1)
        report["auto_device"] = __import__("index.embed", fromlist=["resolve_device"]).resolve_device("auto")
    write_report(report, args.out)


if __name__ == "__main__":
    main()
