"""Reading and writing speed of the packaged GGUF per llama.cpp build and weight layout. Prints one JSON object.

    .venv/bin/python bench/llama_build.py [--build portable=/tmp/llportable] [--rounds 2] [--out FILE]

Each `--build LABEL=DIR` is a llama-cpp-python installed into DIR (`pip install --no-deps --target DIR WHEEL`);
the installed one is always measured, as `installed`. Every build is measured with the weights repacked
(`llm.weight_repack = true`, llama.cpp's default) and as stored (`false`), each in a fresh interpreter, through
the app's own `EmbeddedLLM` load: a prompt of 400 and of 900 tokens read in one call (prompt tokens/s), then 32
tokens decoded one at a time (tokens/s), `--rounds` times. Ratios are against the first build's repacked
layout, measured in the same run: these machines are noisy, so compare only within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import write_report  # noqa: E402

TEXT = ROOT / "docs" / "answers.md"  # ordinary English prose with code names, long enough for 900+ tokens
WRITTEN = 32


def measure(repack: bool, rounds: int, threads: int) -> dict:
    """One build and layout, in this interpreter."""
    from assistant.llm import EmbeddedLLM, assemble_packaged_gguf, llama_system_info
    from core.settings import LLMSettings, load_settings

    path = assemble_packaged_gguf(load_settings().model_cache)
    cfg = LLMSettings(weight_repack=repack, threads=threads, context_tokens=2048)
    started = time.perf_counter()
    model = EmbeddedLLM(path, cfg, None).llm
    load_s = time.perf_counter() - started
    tokens = model.tokenize(TEXT.read_text(encoding="utf-8").encode(), add_bos=True)
    reading: dict[int, list[float]] = {400: [], 900: []}
    writing: list[float] = []
    for r in range(rounds):
        for n in reading:
            start = r * 50
            model.reset()
            t = time.perf_counter()
            model.eval(tokens[start:start + n])
            reading[n].append(n / (time.perf_counter() - t))
            t = time.perf_counter()
            for i in range(WRITTEN):
                model.eval([tokens[start + n + i]])
            writing.append(WRITTEN / (time.perf_counter() - t))
    return {
        "system_info": llama_system_info().strip(),
        "load_s": round(load_s, 2),
        "read_400_tok_s": round(statistics.median(reading[400]), 1),
        "read_900_tok_s": round(statistics.median(reading[900]), 1),
        "write_tok_s": round(statistics.median(writing), 1),
    }


def run_one(label: str, directory: str | None, repack: bool, rounds: int, threads: int) -> dict:
    env = dict(os.environ)
    if directory:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (directory, env.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, __file__, "--measure", "--repack", str(int(repack)), "--rounds",
                          str(rounds), "--threads", str(threads)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return {"build": label, "weight_repack": repack, "error": (out.stderr.strip().splitlines() or ["?"])[-1],
                "returncode": out.returncode}
    return {"build": label, "weight_repack": repack, **json.loads(out.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repack", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(bool(args.repack), args.rounds, args.threads)))
        return
    builds: list[tuple[str, str | None]] = []
    for spec in args.build:
        label, _, directory = spec.partition("=")
        if not directory or not Path(directory, "llama_cpp").is_dir():
            parser.error(f"--build {spec}: no llama_cpp package in {directory or '(nothing)'}; install a wheel "
                         "there with 'pip install --no-deps --target DIR WHEEL'")
        builds.append((label, directory))
    builds.append(("installed", None))
    rows = [run_one(label, directory, repack, args.rounds, args.threads)
            for label, directory in builds for repack in (True, False)]
    base = next((r for r in rows if "error" not in r), None)
    for row in rows:
        if base is not None and "error" not in row:
            row["read_ratio"] = round(row["read_900_tok_s"] / base["read_900_tok_s"], 2)
            row["write_ratio"] = round(row["write_tok_s"] / base["write_tok_s"], 2)
    write_report({"threads": args.threads, "rounds": args.rounds, "cores": os.cpu_count(),
                  "baseline": f"{rows[0]['build']}, weights repacked", "rows": rows}, args.out)


if __name__ == "__main__":
    main()
