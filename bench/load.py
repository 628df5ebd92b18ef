"""Load: the app on 127.0.0.1 (real corpus) under concurrent chat sessions through its HTTP API (httpx;
`--client gradio` for gradio_client). Prints one JSON object: requests, errors, p50/p95/max latency, CPU
seconds of the app and of this load generator per phase, the app's peak RSS.

    .venv/bin/python bench/load.py [--sessions 20] [--turns 3] [--llm-sessions 4] [--llm-turns 1]
    .venv/bin/python bench/load.py --mixed [--sessions 20] [--turns 3] [--llm-sessions 2] [--home DATA_DIR]

Phase 1 (the baseline): `--sessions` clients ask `--turns` questions each with the extractive backend, all
at once. Phase 2: `--llm-sessions` clients ask with the embedded LLM; the app generates one answer at a time
(a lock around llama.cpp), so they wait for each other. With `--mixed`, phase 2 is instead both at the same
time: the LLM clients keep asking (at least `--llm-turns` each) until the extractive clients are done, so the
extractive latencies show whether anything but generation waits behind the LLM ("mixed" in the JSON).
Before the timed phases every extractive question is asked once, untimed (`--cold` skips it), so both see a
warm server. Bounded: every request has a timeout and the whole run a deadline. Questions: our synthetic set.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from common import ROOT, percentiles, real_corpus_settings

QUESTIONS = ROOT / "bench" / "data" / "synthetic-questions.jsonl"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_s(pid: int | None = None) -> float:
    """CPU seconds used so far by the app (`pid`) or by this load generator (its client threads)."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(pid: int, phase: Callable[[], dict]) -> dict:
    """Run a phase and add the CPU seconds the app and the clients spent on it."""
    app0, client0 = cpu_s(pid), cpu_s()
    out = phase()
    out["app_cpu_s"], out["client_cpu_s"] = round(cpu_s(pid) - app0, 2), round(cpu_s() - client0, 2)
    return out


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


class RawClient:
    """The app's HTTP API without gradio_client (POST /gradio_api/call/ask, then read its event stream): the
    same request the app serves, at a fraction of the load generator's CPU, so the app is what is measured."""

    def __init__(self, url: str) -> None:
        import httpx

        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=600)

    def predict(self, *data: object, api_name: str) -> object:
        name = api_name.strip("/")
        event = self.http.post(f"{self.url}/gradio_api/call/{name}", json={"data": list(data)})
        event.raise_for_status()
        kind = ""
        with self.http.stream("GET", f"{self.url}/gradio_api/call/{name}/{event.json()['event_id']}") as stream:
            for line in stream.iter_lines():
                if line.startswith("event:"):
                    kind = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and kind in ("complete", "error"):
                    payload = json.loads(line.split(":", 1)[1])
                    if kind == "error":
                        raise RuntimeError(str(payload)[:200])
                    return payload[0]
        raise RuntimeError("the event stream ended without a result")


CLIENT = {"kind": "raw"}  # --client


def run_phase(url: str, questions: list[str], sessions: int, turns: int, backend: str, deadline_s: float,
              until: threading.Event | None = None, offset: int = 0, spread: int | None = None,
              client: str | None = None) -> dict:
    """`sessions` clients asking `turns` questions each; with `until`, each goes on asking until it is set."""
    from gradio_client import Client as GradioClient

    Client = RawClient if (client or CLIENT["kind"]) == "raw" else GradioClient

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    started = time.monotonic()

    ready = threading.Barrier(sessions, timeout=deadline_s)

    def session(i: int) -> None:
        client = Client(url) if Client is RawClient else Client(url, verbose=False)
        ready.wait()  # every client connected first: latencies measure answers, not 20 config downloads
        t = 0
        while t < turns or (until is not None and not until.is_set()):
            t += 1
            if time.monotonic() - started > deadline_s:
                with lock:
                    errors.append("deadline")
                return
            # session i's turn t; the warm-up's one session walks the same questions (`spread` = their turns)
            j, u = (i, t) if spread is None else divmod(t - 1, spread)
            question = questions[(offset + j * 97 + u + (0 if spread is None else 1)) % len(questions)]
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
    parser.add_argument("--cold", action="store_true", help="no untimed warm-up pass over the questions")
    parser.add_argument("--client", choices=["raw", "gradio"], default="raw",
                        help="raw: the HTTP API with httpx (light); gradio: gradio_client (heavier on this side)")
    args = parser.parse_args()

    CLIENT["kind"] = args.client
    settings = real_corpus_settings(args.home) if args.home else real_corpus_settings()
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    port = free_port()
    env = {**os.environ, "GPUGUIDE_HOME": str(settings.home), "GRADIO_ANALYTICS_ENABLED": "False"}
    log_file = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - the app's log, read if it does not come up
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gpuguide"), "--set", f"crawl.warcs={json.dumps([str(w) for w in settings.crawl.warcs])}",
         "serve", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=log_file, text=True,
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
            log_file.seek(0)
            raise SystemExit("the app did not come up in 180 s:\n" + "".join(log_file.readlines()[-15:]))
        report: dict = {"url": url, "client": args.client, "cores": len(os.sched_getaffinity(0)), "load_average_before": os.getloadavg()}
        if not args.cold:  # every extractive question once, untimed: both timed phases see a warm server
            report["warm_up_s"] = run_phase(url, questions, 1, args.sessions * args.turns, "extractive",
                                            args.deadline_s, spread=args.turns)["wall_s"]
        report["extractive"] = timed(server.pid, lambda: run_phase(url, questions, args.sessions, args.turns,
                                                                    "extractive", args.deadline_s))
        if args.mixed and args.llm_sessions:
            report["mixed"] = timed(server.pid, lambda: run_mixed(url, questions, args))
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
