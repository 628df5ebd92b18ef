"""Choose the support thresholds of free-written answers (`llm.verify_min_cosine`, `llm.verify_min_lexical`) on
claims whose truth is known by construction, never on a question set's answers.

Why: the chat's answers are written freely and attributed after generation (assistant/verify.py `attribute`),
so the thresholds decide which of the model's own sentences a learner sees. For a seeded sample of synthetic
questions (bench/data/synthetic-questions.jsonl, passage questions only), the product selects its evidence;
then the packaged model, through the product's own prompt, restates

* one sentence of that evidence (a **supported** claim: its fact is in the evidence), and
* one sentence of a resource retrieved for the question but left out of the evidence (an **unsupported**
  claim: on the same subject, its fact is not in the evidence — what a model borrowing from memory writes).

Each restatement is scored against the question's evidence: its best source's (cosine, lexical share) and
whether the number/name check passes (`--rows FILE` keeps the generated claims, so a later run re-scores them
without the model). The thresholds are chosen on folds other than
`--holdout` to maximise balanced accuracy (kept share of supported + dropped share of unsupported), and the
held-out fold reports both shares with the chosen and with the current settings. Prints JSON.

    .venv/bin/python tools/calibrate_verify.py [--home DIR] [--n 80] [--holdout 4] [--seed 0] [--out FILE]
"""

from __future__ import annotations

import sys

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: bench.common
from bench.common import DEFAULT_HOME, ROOT, real_corpus_settings, write_report  # noqa: E402

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
RESTATE = "Say in your own words what source [1] states."
COSINES = [round(0.35 + 0.025 * i, 3) for i in range(15)]  # 0.35 .. 0.70
LEXICALS = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
BUDGET = 170  # the quiet 2-core budget (assistant/speed.py at ~90 tokens/s)


def restate(model: Any, title: str, sentence: str, max_tokens: int) -> str:
    from assistant import prompt

    evidence = prompt.render_evidence([prompt.EvidenceBlock(1, title, (sentence,))])
    return "".join(model.stream(prompt.per_question_text(evidence, RESTATE), prompt.prose_grammar(), max_tokens))


def sample(n: int, seed: int) -> list[dict[str, Any]]:
    pool = [json.loads(x) for x in SYNTHETIC.read_text().splitlines() if x.strip()]
    pool = [q for q in pool if q["kind"] == "synthetic-passage"]
    random.Random(seed).shuffle(pool)
    return pool


def evidence_for(assistant: Any, question: str) -> tuple[Any, list[Any]]:
    hits = assistant.searcher.search(question, k=10)
    return assistant.selector.select(question, hits[:5], assistant.settings.llm, BUDGET), hits


def claims_for(n: int, seed: int, home: Path) -> list[dict[str, Any]]:
    """Two restated claims per question (one supported, one not), written by the packaged model."""
    from assistant.llm import chat_model
    from assistant.verify import split_claims

    assistant = load_assistant(home)
    model = chat_model(assistant.settings)
    model.warm()
    rows = []
    for q in sample(n, seed):
        if len(rows) >= 2 * n:
            break
        evidence, hits = evidence_for(assistant, q["question"])
        if not evidence.sources:
            continue
        used = {s.resource.id for s in evidence.sources}
        inside = max(evidence.ranked(), key=lambda p: p[1].relevance)
        outside = [(h, c) for h in hits if h.resource.id not in used for c in
                   assistant.selector.candidates([h])[:12]]
        if not outside:
            continue
        foreign_hit, foreign = max(outside, key=lambda p: len(p[1].text))
        for label, title, sentence in ((1, inside[0].resource.title, inside[1].text),
                                       (0, foreign_hit.resource.title, foreign.text)):
            claims = split_claims(restate(model, title, sentence, assistant.settings.llm.max_tokens))
            if claims:
                rows.append({"fold": q["fold"], "id": q["id"], "supported": label, "claim": claims[0].text,
                             "source_sentence": sentence})
    return rows


def load_assistant(home: Path) -> Any:
    from assistant.chain import Assistant
    from index.search import load_searcher

    settings = real_corpus_settings(home)
    return Assistant(settings, load_searcher(settings))


def score_rows(rows: list[dict[str, Any]], home: Path) -> None:
    """Each claim's best source (cosine, lexical) and number/name check against its question's evidence (no
    LLM: the evidence is selected again, deterministically), so the checks can change without regenerating."""
    assistant = load_assistant(home)
    questions = {q["id"]: q["question"] for q in sample(0, 0)}
    for r in rows:
        evidence, _ = evidence_for(assistant, questions[r["id"]])
        r["cosine"], r["lexical"], r["facts_ok"] = assistant.verifier.support_scores(r["claim"], evidence)


def rates(rows: list[dict[str, Any]], cos: float, lex: float) -> dict[str, float]:
    def kept(r: dict[str, Any]) -> bool:
        return r["facts_ok"] and r["cosine"] >= cos and r["lexical"] >= lex

    pos = [r for r in rows if r["supported"]]
    neg = [r for r in rows if not r["supported"]]
    keep = sum(kept(r) for r in pos) / max(1, len(pos))
    drop = sum(not kept(r) for r in neg) / max(1, len(neg))
    return {"supported_kept": round(keep, 3), "unsupported_dropped": round(drop, 3),
            "balanced": round((keep + drop) / 2, 3), "n_supported": len(pos), "n_unsupported": len(neg)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    parser.add_argument("--n", type=int, default=80, help="questions (two claims each)")
    parser.add_argument("--holdout", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=Path, default=None, help="reuse claims written by an earlier run")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    started = time.time()
    if args.rows and args.rows.exists():
        rows = [json.loads(x) for x in args.rows.read_text().splitlines() if x.strip()]
    else:
        rows = claims_for(args.n, args.seed, args.home)
    score_rows(rows, args.home)
    if args.rows:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from core.settings import LLMSettings

    current = LLMSettings()
    train = [r for r in rows if r["fold"] != args.holdout]
    held = [r for r in rows if r["fold"] == args.holdout]
    grid = [(rates(train, c, x)["balanced"], -abs(c - current.verify_min_cosine), c, x) for c in COSINES for x in LEXICALS]
    _, _, cos, lex = max(grid)
    write_report({
        "claims": len(rows), "holdout_fold": args.holdout, "seed": args.seed, "budget": BUDGET,
        "chosen": {"verify_min_cosine": cos, "verify_min_lexical": lex},
        "train": rates(train, cos, lex), "holdout": rates(held, cos, lex),
        "current": {"verify_min_cosine": current.verify_min_cosine, "verify_min_lexical": current.verify_min_lexical,
                    "train": rates(train, current.verify_min_cosine, current.verify_min_lexical),
                    "holdout": rates(held, current.verify_min_cosine, current.verify_min_lexical)},
        "facts_check_dropped_unsupported": round(sum(not r["facts_ok"] for r in rows if not r["supported"])
                                                 / max(1, sum(not r["supported"] for r in rows)), 3),
        "facts_check_dropped_supported": round(sum(not r["facts_ok"] for r in rows if r["supported"])
                                               / max(1, sum(r["supported"] for r in rows)), 3),
        "_command": "tools/calibrate_verify.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items() if v is not None),
        "_seconds": round(time.time() - started, 1),
    }, args.out)


if __name__ == "__main__":
    main()
