"""Load: the app on 127.0.0.1 (real corpus) under concurrent chat sessions through gradio_client.
Prints one JSON object: requests, errors, p50/p95/max latency, the app's peak RSS.

    .venv/bin/python bench/load.py [--sessions 20] [--turns 3] [--llm-sessions 4] [--llm-turns 1]
    .venv/bin/python bench/load.py --mixed [--sessions 20] [--turns 3] [--llm-sessions 2] [--home DATA_DIR]

Phase 1 (the baseline): `--sessions` clients ask `--turns` questions each with the extractive backend, all
at once. Phase 2: `--llm-sessions` clients ask with the embedded LLM; the app generates one answer at a time
(a lock around llama.cpp), so they wait for each other. With `--mixed`, phase 2 is instead both at the same
time: the LLM clients keep asking (at least `--llm-turns` each) until the extractive clients are done, so the
extractive latencies show whether anything but generation waits behind the LLM ("mixed" in the JSON).
Bounded: every request has a timeout and the whole run a deadline. Questions: our synthetic set.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import ROOT, percentiles, real_corpus_settings

QUESTIONS = ROOT / "bench" / "data" / "synthetic-questions.jsonl"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def run_phase(url: str, questions: list[str], sessions: int, turns: int, backend: str, deadline_s: float,
              until: threading.Event | None = None, offset: int = 0) -> dict:
    """`sessions` clients asking `turns` questions each; with `until`, each goes on asking until it is set."""
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    started = time.monotonic()

    ready = threading.Barrier(sessions, timeout=deadline_s)

    def session(i: int) -> None:
        client = Client(url, verbose=False)
        ready.wait()  # every client connected first: latencies measure answers, not 20 config downloads
        t = 0
        while t < turns or (until is not None and not until.is_set()):
            t += 1
            if time.monotonic() - started > deadline_s:
                with lock:
                    errors.append("deadline")
                return
            question = questions[(offset + i * 97 + t) % len(questions)]
            t0 = time.perf_counter()
            try:
                result = client.predict(question, backend, None, "", "", False, 3, api_name="/ask")
                ok = isinstance(result, dict) and "text" in result
            except Exception as exc:  # noqa: BLE001 - every failure is counted, none may pass silently
                ok, result = False, str(exc)
            with lock:
                latencies.append(time.perf_counter() - t0)
                if not ok:
                    errors.append(str(result)[:200])

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=deadline_s)
    return {"backend": backend, "sessions": sessions, "requests": len(latencies), "errors": len(errors),
            "error_samples": errors[:3], "wall_s": round(time.monotonic() - started, 2), **percentiles(latencies)}


def run_mixed(url: str, questions: list[str], args: argparse.Namespace) -> dict:
    """The LLM clients start first and keep a generation in flight; once their first answer is under way the
    extractive clients run; when those finish, the LLM clients stop after their current question."""
    done = threading.Event()
    out: dict = {}

    def llm() -> None:
        out["embedded"] = run_phase(url, questions, args.llm_sessions, args.llm_turns, "embedded", args.deadline_s,
                                    until=done, offset=1000)

    llm_thread = threading.Thread(target=llm)
    llm_thread.start()
    time.sleep(3.0)  # the LLM requests are queued and generating before the extractive ones arrive
    try:
        out["extractive"] = run_phase(url, questions, args.sessions, args.turns, "extractive", args.deadline_s)
    finally:
        done.set()
        llm_thread.join(timeout=args.deadline_s)
    keys = ("sessions", "requests", "errors", "error_samples", "wall_s", "p50_ms", "p95_ms", "max_ms")
    return {name: {k: out[name][k] for k in keys if k in out[name]} for name in ("extractive", "embedded") if name in out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--llm-sessions", type=int, default=4)
    parser.add_argument("--llm-turns", type=int, default=1)
    parser.add_argument("--deadline-s", type=float, default=600)
    parser.add_argument("--mixed", action="store_true", help="LLM and extractive chats at the same time")
    parser.add_argument("--home", type=Path, help="an ingested data dir (default: bench's own, built once)")
    args = parser.parse_args()

    settings = real_corpus_settings(args.home) if args.home else real_corpus_settings()
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    port = free_port()
    env = {**os.environ, "GPUGUIDE_HOME": str(settings.home), "GRADIO_ANALYTICS_ENABLED": "False"}
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gpuguide"), "--set", f"crawl.warcs={json.dumps([str(w) for w in settings.crawl.warcs])}",
         "serve", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        import httpx

        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise SystemExit("the app did not come up in 180 s")
        report: dict = {"url": url, "cores": len(os.sched_getaffinity(0)), "load_average_before": os.getloadavg()}
        report["extractive"] = run_phase(url, questions, args.sessions, args.turns, "extractive", args.deadline_s)
        if args.mixed and args.llm_sessions:
            report["mixed"] = run_mixed(url, questions, args)
        elif args.llm_sessions:
            report["embedded"] = run_phase(url, questions, args.llm_sessions, args.llm_turns, "embedded", args.deadline_s)
        report["load_average_after"] = os.getloadavg()
        report["app_peak_rss_mb"] = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    sys.exit(main())
