"""`gpuguide doctor`: can this machine's llama.cpp GPU build share a process with numpy and torch?

Why: on the H200 machine (llama-cpp-python 0.3.36 built with CUDA against the image's CUDA 13 toolkit, torch
2.11+cu130 from its own wheels), the chat model crashed with SIGSEGV while loading whenever numpy or torch had
been imported before llama_cpp, and `import llama_cpp, torch` crashed in torch's import; with llama_cpp
imported first the model loaded and answered (docs/benchmarks.md). The app imports numpy and torch long before
it loads the chat model, so this decides whether the embedded model can run in the app's process on such a
machine (`llm.separate_process`). Each case runs in a fresh interpreter, so a crash ends only that case: it
imports the named modules in order, loads the model with all layers on the GPU through the app's own
`EmbeddedLLM` (or, in the last case, its `SeparateProcessLLM`, the app's default on a GPU build), and generates
a short grammar-constrained answer.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core.settings import Settings

HELP = "check the GPU path: does llama.cpp's GPU build load and answer beside numpy and torch?"

IN_OWN_PROCESS = "separate process"  # the pseudo-module that makes a case use SeparateProcessLLM
APPS_WAY = "the app's way on a GPU build: numpy and torch on the GPU here, the model in its own process"
CASES: dict[str, list[str]] = {
    "llama_cpp first": ["llama_cpp"],
    "numpy, then llama_cpp": ["numpy", "llama_cpp"],
    "torch, then llama_cpp": ["torch", "llama_cpp"],
    "llama_cpp, then torch": ["llama_cpp", "torch"],
    "llama_cpp, then torch on the GPU (the app's order if llama_cpp came first)": ["llama_cpp", "torch", "torch.cuda"],
    APPS_WAY: ["numpy", "torch", "torch.cuda", IN_OWN_PROCESS],
}

CASE = """
import importlib, json, sys, time
for name in [m for m in {modules!r} if m != {own!r}]:
    module = importlib.import_module(name)
    if name == "torch.cuda" and module.is_available():
        module.init()  # a real CUDA context in torch
print(json.dumps({{"step": "imported"}}), flush=True)
from pathlib import Path
from assistant import prompt
from assistant.llm_process import SeparateProcessLLM
from assistant.llm import EmbeddedLLM
from core.settings import Settings
settings = Settings(llm={{"model_path": {model!r}, "gpu_layers": -1, "prompt_cache": False}})
started = time.perf_counter()
kind = SeparateProcessLLM if {own!r} in {modules!r} else EmbeddedLLM
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


def run_case(modules: list[str], model: str, timeout_s: float) -> dict[str, Any]:
    """One case in a fresh interpreter: its outcome ("ok", "timed out", "killed by SIGSEGV", "exit 1") and the
    last step it reached ("none", "imported", "loaded", "answered")."""
    started = time.perf_counter()
    code_text = CASE.format(modules=modules, model=model, own=IN_OWN_PROCESS)
    try:
        done = subprocess.run([sys.executable, "-c", code_text], check=False, capture_output=True, text=True,
                              timeout=timeout_s)
        code, out = done.returncode, done.stdout
    except subprocess.TimeoutExpired as exc:
        code, out = None, exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
    steps = [json.loads(line) for line in out.splitlines() if line.startswith('{"step"')]
    outcome = ("ok" if code == 0 else "timed out" if code is None
               else f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
    return {"imports": modules, "outcome": outcome, "last_step": steps[-1]["step"] if steps else "none",
            "steps": steps, "seconds": round(time.perf_counter() - started, 1)}


def verdict(report: dict[str, Any]) -> str:
    """One line for the user: what the cases mean for `llm.separate_process` and `llm.gpu_layers`."""
    if not report["gpu_offload_available"] and not report["cases"]:
        return ("llama-cpp-python here is a CPU build (or sees no GPU): the model runs on the CPU; "
                "`make install-gpu` builds the GPU path")
    ok = {name for name, case in report["cases"].items() if case["outcome"] == "ok"}
    if not report["cases"]:
        return "no case was run"
    if ok == set(report["cases"]):
        return "every case loaded the model and answered: the model may run in the app's process or in its own"
    if APPS_WAY in ok:
        return ("the model answers in a process of its own (the default on a GPU build) but not in every shared "
                "process: keep llm.separate_process unset or true")
    if APPS_WAY in report["cases"]:
        return ("the app's way failed (" + report["cases"][APPS_WAY]["outcome"] + "): set llm.gpu_layers = 0 "
                "to run the model on the CPU, or rebuild the GPU path (make gpu-build)")
    return f"{len(ok)} of {len(report['cases'])} cases answered"


def gpu_report(settings: Settings, model: str | None = None, timeout_s: float = 90,
               run_anyway: bool = False, cases: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The doctor's findings as one JSON-able object; the cases are run only on a GPU build (or when asked)."""
    from assistant.llm import gguf_path, gpu_offload_available, packaged_gguf_file

    gpu = gpu_offload_available()
    if model or gpu or run_anyway:
        path = str(model or gguf_path(settings))  # assembles the packaged model if it is not in the cache yet
    else:  # nothing will load it: name it without assembling 1.1 GB
        path = settings.llm.model_path or str(packaged_gguf_file(settings.model_cache))
    chosen = cases if cases is not None else CASES
    report: dict[str, Any] = {"gpu_offload_available": gpu, "model": Path(path).name, "cases": {}}
    if gpu or run_anyway:
        report["cases"] = {name: run_case(modules, path, timeout_s) for name, modules in chosen.items()}
    report["verdict"] = verdict(report)
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="GGUF file; default: the packaged model")
    parser.add_argument("--timeout", type=float, default=90, help="seconds each case may take (default 90)")
    parser.add_argument("--all", dest="run_anyway", action="store_true",
                        help="run the cases on a CPU build too (they then show only that the model loads)")
    parser.add_argument("--json", action="store_true", help="print the findings as one JSON object")


def command(args: argparse.Namespace, settings: Settings) -> int:
    """The CLI sub-command: 0 when the app's way works (or there is no GPU path to check), else 1."""
    report = gpu_report(settings, args.model, args.timeout, args.run_anyway)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"GPU offload in llama-cpp-python: {'yes' if report['gpu_offload_available'] else 'no'}")
        print(f"model: {report['model']}")
        for name, case in report["cases"].items():
            print(f"  {case['outcome']:>18}  (last step: {case['last_step']}, {case['seconds']} s)  {name}")
        print(report["verdict"])
    apps_way = report["cases"].get(APPS_WAY)
    return 1 if apps_way is not None and apps_way["outcome"] != "ok" else 0
