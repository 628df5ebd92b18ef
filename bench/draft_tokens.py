"""Writing speed with and without guessed tokens (`llm.draft_tokens`, prompt lookup decoding) on the app's own
answer prompts. Prints one JSON object.

    .venv/bin/python bench/draft_tokens.py [--home DIR] [--questions 16] [--folds 0 1 2 3] [--budget 450]
        [--drafts 0 2 3 4 6] [--out docs/measurements/draft_tokens.json]

Each question (synthetic, page-text ones from the given folds, a seeded sample) is searched and its evidence
picked as the app does, at a fixed budget, then the model writes the same prose-grammar answer once per draft
setting, in turn per question (so load on the machine hits every setting alike). Reported per setting: writing
tokens/s (tokens after the first over the time after the first, summed over questions), the ratio to
`--drafts`' first entry (the baseline, 0 = off), and how many answers differ from the baseline's (batched
arithmetic can flip a near tie; the answer is the same greedy answer otherwise).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from common import DEFAULT_HOME, ROOT, real_corpus_settings, write_report

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"


def sample_questions(n: int, folds: list[int], seed: int) -> list[str]:
    rows = [json.loads(line) for line in SYNTHETIC.read_text(encoding="utf-8").splitlines() if line.strip()]
    pool = [r["question"] for r in rows if r.get("fold") in folds and r["kind"] == "synthetic-passage"]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def prompts(settings, questions: list[str], budget: int) -> list[str]:  # noqa: ANN001 - Settings, imported lazily
    """The per-question prompt text the app would send for each question (evidence at `budget` tokens)."""
    from assistant import prompt
    from assistant.chain import Assistant
    from index.search import load_searcher

    assistant = Assistant(settings, load_searcher(settings))
    cfg = settings.llm
    texts = []
    for question in questions:
        hits = assistant.searcher.search(question, k=5)
        evidence = assistant.selector.select(question, hits[: cfg.evidence_resources], cfg, budget)
        if evidence.sources:
            texts.append(prompt.per_question_text(prompt.render_evidence(evidence.blocks()), question))
    return texts


def write(model, text: str, draft_tokens: int, max_tokens: int) -> tuple[list[str], float]:
    """The answer's pieces and the seconds after the first (writing; reading the prompt comes before it)."""
    from assistant import prompt

    model.cfg = model.cfg.model_copy(update={"draft_tokens": draft_tokens})
    model.warm()
    model.llm.n_tokens = len(model.prefix)  # every setting reads the same prompt after the same kept prefix
    pieces: list[str] = []
    started = time.perf_counter()
    first = None
    for piece in model.stream(text, prompt.prose_grammar(), max_tokens):
        if first is None:
            first = time.perf_counter() - started
        pieces.append(piece)
    return pieces, time.perf_counter() - started - (first or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=450, help="evidence tokens per prompt")
    parser.add_argument("--drafts", type=int, nargs="+", default=[0, 2, 3, 4, 6])
    parser.add_argument("--out")
    args = parser.parse_args()

    from assistant.llm import EmbeddedLLM, gguf_path

    settings = real_corpus_settings(args.home)
    texts = prompts(settings, sample_questions(args.questions, args.folds, args.seed), args.budget)
    model = EmbeddedLLM(gguf_path(settings), settings.llm, None)
    model.warm()
    totals = {d: {"tokens": 0, "writing_s": 0.0, "differs": 0} for d in args.drafts}
    differing = []
    for i, text in enumerate(texts):
        baseline = None
        for d in args.drafts:
            pieces, writing = write(model, text, d, settings.llm.max_tokens)
            row = totals[d]
            row["tokens"] += max(0, len(pieces) - 1)
            row["writing_s"] += writing
            answer = "".join(pieces)
            baseline = answer if baseline is None else baseline
            if answer != baseline:
                row["differs"] += 1
                differing.append({"draft_tokens": d, "baseline": baseline, "answer": answer})
        print(f"{i + 1}/{len(texts)}", file=sys.stderr, flush=True)
    base = totals[args.drafts[0]]
    base_rate = base["tokens"] / base["writing_s"] if base["writing_s"] else None
    report = {
        "questions": len(texts), "folds": args.folds, "budget": args.budget, "threads": model.llm.n_threads,
        "settings": {
            str(d): {
                "tokens": r["tokens"], "writing_s": round(r["writing_s"], 2),
                "tokens_per_s": round(r["tokens"] / r["writing_s"], 2) if r["writing_s"] else None,
                "ratio_to_baseline": round(r["tokens"] / r["writing_s"] / base_rate, 3)
                if r["writing_s"] and base_rate else None,
                "answers_differing_from_baseline": r["differs"],
            }
            for d, r in totals.items()
        },
        "differing": differing,
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
