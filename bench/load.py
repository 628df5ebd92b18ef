"""Load: the app on 127.0.0.1 (real corpus) under concurrent chat sessions through gradio_client.
Prints one JSON object: requests, errors, p50/p95/max latency, the app's peak RSS.

    .venv/bin/python bench/load.py [--sessions 20] [--turns 3] [--llm-sessions 4] [--llm-turns 1]

Phase 1: `--sessions` clients ask `--turns` questions each with the extractive backend, all at once.
Phase 2: `--llm-sessions` clients ask with the embedded LLM; the app runs one LLM answer at a time
(concurrency_limit=1), so the others wait in the queue. Bounded: every request has a timeout and
the whole run a deadline.
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

from common import QUESTIONS, ROOT, percentiles, real_corpus_settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def run_phase(url: str, questions: list[str], sessions: int, turns: int, backend: str, deadline_s: float) -> dict:
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    started = time.monotonic()

    def session(i: int) -> None:
        client = Client(url, verbose=False)
        for t in range(turns):
            if time.monotonic() - started > deadline_s:
                with lock:
                    errors.append("deadline")
                return
            question = questions[(i * turns + t) % len(questions)]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--llm-sessions", type=int, default=4)
    parser.add_argument("--llm-turns", type=int, default=1)
    parser.add_argument("--deadline-s", type=float, default=600)
    args = parser.parse_args()

    settings = real_corpus_settings()
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
        report = {"url": url, "extractive": run_phase(url, questions, args.sessions, args.turns, "extractive", args.deadline_s)}
        if args.llm_sessions:
            report["embedded"] = run_phase(url, questions, args.llm_sessions, args.llm_turns, "embedded", args.deadline_s)
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
