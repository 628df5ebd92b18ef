"""Answer latency: extractive p50/p95 (warm) and the embedded LLM's time to first token and tokens/s
on typical 3-source prompts, over the real corpus. Prints one JSON object.

    .venv/bin/python bench/answer.py [--questions N] [--llm-questions N] [--no-llm]

Targets: extractive p95 ≤ 150 ms warm; embedded first token ≤ 8 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time

from common import QUESTIONS, percentiles, peak_rss_mb, real_corpus_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--llm-questions", type=int, default=4)
    parser.add_argument("--no-llm", action="store_true")
    args = parser.parse_args()

    from assistant.chain import Assistant, Query
    from index.search import load_searcher

    settings = real_corpus_settings()
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    concept = [q["question"] for q in questions if q["kind"] in ("concept", "lookup")]
    assistant = Assistant(settings, load_searcher(settings))
    assistant.ask(Query(concept[0], backend="extractive"))  # warm: model, index, caches
    samples = []
    for question in (concept * 3)[: args.questions]:
        started = time.perf_counter()
        assistant.ask(Query(question, backend="extractive"))
        samples.append(time.perf_counter() - started)
    report: dict = {"extractive": percentiles(samples)}

    if not args.no_llm:
        from assistant.models import chat_model

        load_started = time.perf_counter()
        chat_model(settings)
        report["embedded_model_load_s"] = round(time.perf_counter() - load_started, 2)
        runs = []
        for question in concept[: args.llm_questions]:
            started = time.perf_counter()
            first = None
            tokens = 0
            final = None
            for event in assistant.stream(Query(question, backend="embedded")):
                if event.kind == "token":
                    tokens += 1
                    if first is None:
                        first = time.perf_counter() - started
                elif event.kind == "final":
                    final = event.answer
            total = time.perf_counter() - started
            gen_s = total - (first or total)
            runs.append({
                "question": question[:60],
                "first_token_s": round(first or total, 2),
                "total_s": round(total, 2),
                "tokens": tokens,
                "tokens_per_s": round(tokens / gen_s, 1) if gen_s > 0 else None,
                "kept_llm_answer": bool(final and not final.fallback and final.route == "search"),
            })
        report["embedded"] = {
            "runs": runs,
            "first_token_s_p50": sorted(r["first_token_s"] for r in runs)[len(runs) // 2],
            "first_token_s_max": max(r["first_token_s"] for r in runs),
            "tokens_per_s_median": sorted(r["tokens_per_s"] or 0 for r in runs)[len(runs) // 2],
        }
    report["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
