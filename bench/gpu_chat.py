"""Chat model speed, GPU vs CPU: first token and tokens/s of the packaged GGUF through the app's own
`EmbeddedLLM` (llama.cpp, `llm.gpu_layers`). Prints one JSON object.

    python bench/gpu_chat.py run --label cpu --gpu-layers 0 --threads 2 --out cpu.json
    python bench/gpu_chat.py run --label gpu --gpu-layers -1 --out gpu.json      # where a CUDA build is
    python bench/gpu_chat.py merge cpu.json gpu.json --out docs/measurements/gpu_chat.json

Three measurements per question, each after the fixed prompt prefix is evaluated (as the app does at start):
* `answer`: the app's answer path (grammar-constrained, cited sentences, `llm.max_tokens`);
* `free`: the same prompt without the grammar (the model's own stopping point);
* `decode`: `--decode-tokens` tokens generated regardless of end-of-turn, for a steady decode rate;
* with `--separate`, `answer_separate_process`: the answer path through the model in a process of its own
  (`llm.separate_process`, the app's default on a GPU build), after the in-process runs.
First token = from the call until the first text piece (evaluating the question and evidence included);
tokens/s = tokens after the first / time after the first. Questions come from the synthetic set
(bench/data/synthetic-questions.jsonl), evidence from the bundled catalog's titles and notes.
"""

from __future__ import annotations

import contextlib

with contextlib.suppress(ImportError):  # before numpy: a CUDA llama.cpp loaded after it crashed (assistant/llm_process.py)
    import llama_cpp  # noqa: F401

import argparse
import json
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report

_WORD = re.compile(r"[a-z0-9]+")


def questions(n: int) -> list[str]:
    """The first `n` synthetic questions, one per resource (a fixed, reproducible sample)."""
    seen, out = set(), []
    for line in (ROOT / "bench" / "data" / "synthetic-questions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["resource_id"] not in seen:
            seen.add(row["resource_id"])
            out.append(row["question"])
        if len(out) == n:
            break
    return out


def evidence_for(question: str, k: int = 4) -> tuple[str, int]:
    """The catalog entries sharing the most words with the question, as the prompt's numbered sources."""
    from assistant import prompt

    catalog = json.loads((ROOT / "ingest" / "data" / "catalog.json").read_text(encoding="utf-8"))["resources"]
    words = set(_WORD.findall(question.lower()))
    ranked = sorted(catalog, key=lambda r: -len(words & set(_WORD.findall(f"{r['title']} {r['note']}".lower()))))
    blocks = [prompt.EvidenceBlock(i + 1, r["title"], (r["note"],)) for i, r in enumerate(ranked[:k])]
    return prompt.render_evidence(blocks), len(blocks)


def timed(pieces) -> dict:
    """First-piece latency and the steady rate after it, over an iterator of generated pieces."""
    started = time.perf_counter()
    first = last = None
    count = 0
    for _ in pieces:
        now = time.perf_counter()
        if first is None:
            first = now
        last = now
        count += 1
    if first is None:
        return {"tokens": 0, "first_token_s": None, "tokens_per_s": None, "total_s": round(time.perf_counter() - started, 3)}
    rate = (count - 1) / (last - first) if count > 1 and last > first else None
    return {"tokens": count, "first_token_s": round(first - started, 4),
            "tokens_per_s": round(rate, 1) if rate else None, "total_s": round(last - started, 3)}


def decode_pieces(model, text: str, n: int):
    """`n` greedy tokens after the fixed prefix + text, ignoring end-of-turn (one yield per token)."""
    body = model.llm.tokenize(text.encode(), add_bos=False, special=False)
    model.warm()  # the same prefix state the answer path uses (warm takes the lock itself: not inside it)
    with model.lock:
        for produced, _token in enumerate(model.llm.generate(model.prefix + body + model.tail, temp=0.0, top_k=1, repeat_penalty=1.0)):
            yield _token
            if produced + 1 >= n:
                break


def run(args: argparse.Namespace) -> dict:
    from assistant import prompt
    from assistant.llm import (
        EmbeddedLLM,
        describe_device,
        gguf_path,
        gpu_offload_available,
    )
    from core.settings import Settings

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), llm={"model_path": args.model, "gpu_layers": args.gpu_layers,
                                                   "threads": args.threads, "prompt_cache": False})
        started = time.perf_counter()
        model = EmbeddedLLM(gguf_path(settings), settings.llm, None)
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        model.warm()
        prefix_s = time.perf_counter() - started
        separate = None
        if args.separate:  # the app's path on a GPU build: the same model in a process of its own
            from assistant.llm_process import SeparateProcessLLM

            separate = SeparateProcessLLM(gguf_path(settings), settings.llm, None)
            separate.warm()
        rows = []
        for q in questions(args.questions):
            evidence, n_sources = evidence_for(q)
            text = prompt.per_question_text(evidence, q)
            grammar = prompt.answer_grammar(n_sources, settings.llm.answer_sentences)
            row = {"question": q,
                   "answer": timed(model.stream(text, grammar, settings.llm.max_tokens)),
                   "free": timed(model.stream(text, None, args.decode_tokens)),
                   "decode": timed(decode_pieces(model, text, args.decode_tokens))}
            if separate is not None:
                row["answer_separate_process"] = timed(separate.stream(text, grammar, settings.llm.max_tokens))
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
        if separate is not None:
            separate.close()
        import llama_cpp

        def median(mode: str, key: str) -> float | None:
            vals = sorted(r[mode][key] for r in rows if r[mode][key] is not None)
            return vals[len(vals) // 2] if vals else None

        return {
            "label": args.label,
            "machine": {"python": platform.python_version(), "llama_cpp_python": llama_cpp.__version__,
                        "gpu_offload_available": gpu_offload_available(), "cpu": platform.processor() or platform.machine()},
            "settings": {"gpu_layers": args.gpu_layers, "threads": args.threads, "resolved_gpu_layers": model.gpu_layers,
                         "n_gpu_layers_param": int(model.llm.model_params.n_gpu_layers), "device": model.device_text(),
                         "status_line": describe_device(settings), "max_tokens": settings.llm.max_tokens},
            "model": Path(gguf_path(settings)).name,
            "load_s": round(load_s, 3), "prefix_tokens": len(model.prefix), "prefix_eval_s": round(prefix_s, 3),
            "median": {mode: {"first_token_s": median(mode, "first_token_s"), "tokens_per_s": median(mode, "tokens_per_s")}
                       for mode in ("answer", "free", "decode", "answer_separate_process") if mode in rows[0]},
            "questions": rows,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--label", required=True)
    r.add_argument("--model", default=None, help="GGUF file; default: the packaged model")
    r.add_argument("--gpu-layers", type=int, default=None, help="llm.gpu_layers (default: the setting's auto)")
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--questions", type=int, default=5)
    r.add_argument("--decode-tokens", type=int, default=200)
    r.add_argument("--separate", action="store_true",
                   help="also time the answer through the model in a process of its own (llm.separate_process)")
    r.add_argument("--out", default=None)
    m = sub.add_parser("merge", help="one report from runs on different machines")
    m.add_argument("files", nargs="+")
    m.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.cmd == "run":
        report = run(args)
    else:
        runs = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.files]
        report = {"runs": {r["label"]: r for r in runs},
                  "note": "each run made by `bench/gpu_chat.py run` on its own machine, same script, GGUF and questions"}
        labels = [r["label"] for r in runs]
        if len(runs) == 2:
            a, b = runs
            report["speedup"] = {mode: {
                "first_token": round(a["median"][mode]["first_token_s"] / b["median"][mode]["first_token_s"], 1),
                "tokens_per_s": round(b["median"][mode]["tokens_per_s"] / a["median"][mode]["tokens_per_s"], 1),
            } for mode in ("answer", "free", "decode")}
            report["speedup_of"] = f"{labels[1]} over {labels[0]}"
    write_report(report, args.out)


if __name__ == "__main__":
    main()
