"""Embedding throughput on CPU vs GPU: the index stage's Embedder (`embed.device`) over a synthetic corpus
of ~160-word chunks, batch sizes 64–1024. Prints one JSON object.

    python bench/gpu_embed.py [--n 200000] [--cpu-n 4000] [--batches 64,128,256,512,1024] [--model DIR]

Run it where a GPU is: without CUDA it measures the CPU only. `--model` points at any local
sentence-transformers folder (default: the packaged MiniLM).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def synthetic_chunks(n: int, words_per_chunk: int = 160, seed: int = 0) -> list[str]:
    """Chunks made of the guide's own vocabulary (titles and notes of the bundled catalog)."""
    catalog = json.loads((ROOT / "ingest" / "data" / "catalog.json").read_text(encoding="utf-8"))
    vocab = sorted({w for r in catalog["resources"] for w in f"{r['title']} {r['note']}".split() if w.isascii()})
    rng = random.Random(seed)
    return [" ".join(rng.choices(vocab, k=words_per_chunk)) for _ in range(n)]


def measure(texts: list[str], device: str, batch: int, model: str | None) -> dict:
    from index.embed import Embedder
    from core.settings import Settings

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), embed={"device": device, "batch_size": batch, "model_path": model})
        embedder = Embedder(settings)
        embedder._encode(texts[: min(len(texts), 2 * batch)])  # warm-up: load, kernels, allocator
        if device == "cuda":
            import torch

            torch.cuda.synchronize()
        started = time.perf_counter()
        vectors = embedder._encode(texts)
        if device == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
    row = {"device": device, "batch_size": batch, "chunks": len(texts), "seconds": round(seconds, 2),
           "chunks_per_s": round(len(texts) / seconds, 1), "dim": int(vectors.shape[1])}
    print(json.dumps(row), file=sys.stderr, flush=True)  # progress, in case the run is cut short
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200_000, help="chunks embedded on the GPU per batch size")
    parser.add_argument("--cpu-n", type=int, default=4_000, help="chunks embedded on the CPU per batch size")
    parser.add_argument("--batches", default="64,128,256,512,1024")
    parser.add_argument("--cpu-batches", default="64,256,1024")
    parser.add_argument("--model", default=None)
    args = parser.parse_args()

    import torch

    texts = synthetic_chunks(args.n)
    report: dict = {
        "machine": {"cpu_threads": torch.get_num_threads(), "python": platform.python_version(), "torch": torch.__version__,
                    "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None},
        "corpus": {"chunks": args.n, "words_per_chunk": 160},
        "cpu": [measure(texts[: args.cpu_n], "cpu", int(b), args.model) for b in args.cpu_batches.split(",")],
    }
    if torch.cuda.is_available():
        report["cuda"] = [measure(texts, "cuda", int(b), args.model) for b in args.batches.split(",")]
        best_cpu = max(r["chunks_per_s"] for r in report["cpu"])
        best_gpu = max(r["chunks_per_s"] for r in report["cuda"])
        report["gpu_over_cpu"] = round(best_gpu / best_cpu, 1)
        report["auto_device"] = __import__("index.embed", fromlist=["resolve_device"]).resolve_device("auto")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
