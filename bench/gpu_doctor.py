"""Can this machine's llama.cpp GPU build share a process with numpy and torch? Prints one JSON object.

    python bench/gpu_doctor.py [--model FILE.gguf] [--timeout 90]

Why: on the H200 machine (llama-cpp-python 0.3.36 built with CUDA against the image's CUDA 13 toolkit, torch
2.11+cu130 from its own wheels), the chat model crashed with SIGSEGV while loading whenever numpy or torch had
been imported before llama_cpp, and `import llama_cpp, torch` crashed in torch's import; with llama_cpp
imported first the model loaded and answered. The app imports numpy and torch long before it loads the chat
model, so this decides whether the embedded model can run in the app's process on such a machine. Each case
runs in a fresh interpreter (a crash ends only that case): it imports the named modules in order, loads the
model with all layers on the GPU through the app's own `EmbeddedLLM` (or, in the last case, its
`SeparateProcessLLM`, the app's default on a GPU build), and generates a short grammar-constrained answer.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report

CASES: dict[str, list[str]] = {
    "llama_cpp first": ["llama_cpp"],
    "numpy, then llama_cpp": ["numpy", "llama_cpp"],
    "torch, then llama_cpp": ["torch", "llama_cpp"],
    "llama_cpp, then torch": ["llama_cpp", "torch"],
    "llama_cpp, then torch on the GPU (the app's order if llama_cpp came first)": ["llama_cpp", "torch", "torch.cuda"],
    "the app's way on a GPU build: numpy and torch on the GPU here, the model in its own process":
        ["numpy", "torch", "torch.cuda", "separate process"],
}

CASE = """
import importlib, json, sys, time
for name in [m for m in {modules!r} if m != "separate process"]:
    module = importlib.import_module(name)
    if name == "torch.cuda" and module.is_available():
        module.init()  # a real CUDA context in torch
print(json.dumps({{"step": "imported"}}), flush=True)
from pathlib import Path
from assistant import prompt
from assistant.llm_process import SeparateProcessLLM
from assistant.models import EmbeddedLLM
from core.settings import Settings
settings = Settings(llm={{"model_path": {model!r}, "gpu_layers": -1, "prompt_cache": False}})
started = time.perf_counter()
kind = SeparateProcessLLM if "separate process" in {modules!r} else EmbeddedLLM
model = kind(Path({model!r}), settings.llm, None)
model.warm()
print(json.dumps({{"step": "loaded", "seconds": round(time.perf_counter() - started, 2), "device": model.device_text()}}), flush=True)
evidence = prompt.render_evidence([prompt.EvidenceBlock(1, "FlashAttention", (
    "FlashAttention tiles attention so the full score matrix never reaches HBM.",))])
started = time.perf_counter()
text = "".join(model.stream(prompt.per_question_text(evidence, "What does FlashAttention avoid?"),
                            prompt.answer_grammar(1, 1), 32))
print(json.dumps({{"step": "answered", "seconds": round(time.perf_counter() - started, 2), "cited": "[1]" in text}}), flush=True)
"""


def run_case(modules: list[str], model: str, timeout: float) -> dict:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CASE.format(modules=modules, model=model)], cwd=ROOT, check=False,
                              capture_output=True, text=True, timeout=timeout)
        code, out = done.returncode, done.stdout
    except subprocess.TimeoutExpired as exc:
        code, out = None, exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
    steps = [json.loads(line) for line in out.splitlines() if line.startswith('{"step"')]
    outcome = ("ok" if code == 0 else "timed out" if code is None
               else f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
    return {"imports": modules, "outcome": outcome, "last_step": steps[-1]["step"] if steps else "none",
            "steps": steps, "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="GGUF file; default: the packaged model")
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()
    from assistant.models import gguf_path, gpu_offload_available
    from core.settings import Settings

    model = str(args.model or gguf_path(Settings()))
    report = {"gpu_offload_available": gpu_offload_available(), "model": Path(model).name,
              "cases": {name: run_case(modules, model, args.timeout) for name, modules in CASES.items()}}
    write_report(report, None)


if __name__ == "__main__":
    main()
