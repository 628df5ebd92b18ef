"""Known-truth data for the off-subject check (`llm.verify_question_word_max_share`, assistant/verify.py
`off_subject_words`): does it drop sentences that give the question's subject to a passage about something else,
and keep the ones that answer?

`generate`: for a seeded sample of synthetic passage questions whose resource retrieval puts in the top 3, the
packaged model answers through the product's own prompt and evidence twice:

* **with** the question's resource among the evidence (the fact is there to state), and
* **without** it (the next resources instead: by construction the fact is mostly absent, so a sentence that
  still answers "X does Y" has usually borrowed the question's words for another passage's content).

The drafts and their evidence are kept (`--rows`), so `score` replays verification without the model: for each
condition, answers with a kept sentence, kept sentences, and answers whose kept sentences state the source
passage (a kept sentence at MiniLM cosine >= 0.70 to one of its sentences, bench/answer.py's proxy), with the
check off and on (`--toggle references`: the check on, resolving references to dropped sentences off and on,
assistant/antecedents.py). Rules are chosen on the first half of the rows and reported on the second (`--half`).

    .venv/bin/python tools/check_off_subject.py generate --n 60 --rows R.jsonl     # ~25 min on 2 cores
    .venv/bin/python tools/check_off_subject.py score --rows R.jsonl [--half first|second|all] [--toggle references]
"""

from __future__ import annotations

import sys

import argparse
import json
import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: bench.common
from bench.common import DEFAULT_HOME, ROOT, real_corpus_settings  # noqa: E402

SYNTHETIC = ROOT / "bench" / "data" / "synthetic-questions.jsonl"
TUNING_FOLDS = (0, 1, 2, 3)
BUDGET = 750  # evidence tokens: what the embedded model reads on 2 cores (bench/answer.py's budget column)
STATED_COSINE = 0.70


def generate(n: int, rows_path: Path, home: Path, seed: int) -> None:
    from assistant.chain import Assistant, Query
    from index.search import load_searcher

    settings = real_corpus_settings(home)
    assistant = Assistant(settings, load_searcher(settings))
    questions = [q for q in map(json.loads, SYNTHETIC.read_text().splitlines())
                 if q.get("fold") in TUNING_FOLDS and q["kind"] == "synthetic-passage"]
    random.Random(seed).shuffle(questions)
    done = {json.loads(line)["id"] for line in rows_path.read_text().splitlines()} if rows_path.exists() else set()
    taken = 0
    with rows_path.open("a") as out:
        for q in questions:
            if taken >= n:
                break
            hits = assistant.searcher.search(q["question"], k=6)
            if q["resource_id"] not in [h.resource.id for h in hits[:3]] or assistant.next_reads.is_next(q["question"]):
                continue
            taken += 1
            if q["id"] in done:
                continue  # a crashed run resumes
            row: dict[str, Any] = {"id": q["id"], "question": q["question"], "source_chunk": q["source_chunk"],
                                   "gold": q["resource_id"], "runs": {}}
            conditions = {"with": hits[:3], "without": [h for h in hits if h.resource.id != q["resource_id"]][:3]}
            for name, chosen in conditions.items():
                evidence = assistant.selector.select(q["question"], chosen, settings.llm, BUDGET)
                if not evidence.sources:
                    continue
                final = None
                for event in assistant._generate(Query(q["question"], backend="embedded"), q["question"], evidence,
                                                 chosen, "embedded", False, None):
                    if event.kind == "final":
                        final = event.answer
                assert final is not None
                row["runs"][name] = {
                    "evidence": [{"n": s.n, "rid": s.resource.id, "sentences": [asdict(x) for x in s.sentences]}
                                 for s in evidence.sources],
                    "draft": final.draft,
                }
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"{taken}/{n} {q['id']}", file=sys.stderr)


def score(rows_path: Path, home: Path, half: str, toggle: str) -> dict[str, Any]:
    from assistant.evidence import Evidence, EvidenceSentence, EvidenceSource
    from assistant.sentences import sentences
    from assistant.verify import LEANS_ON_DROPPED, Verifier
    from index.records import ResourceHit
    from index.search import load_searcher

    settings = real_corpus_settings(home)
    searcher = load_searcher(settings)
    resources = {r.id: r for r in searcher.resources}
    chunks = {c.chunk_id: c for c in searcher.chunks}
    if toggle == "off_subject":
        verifiers = {"off": Verifier(searcher.embedder, settings.llm),
                     "on": Verifier(searcher.embedder, settings.llm, searcher.bm25.document_share)}
    else:  # the off-subject check on in both; resolving references to dropped sentences off, then on
        verifiers = {check: Verifier(searcher.embedder,
                                     settings.llm.model_copy(update={"verify_resolve_references": check == "on"}),
                                     searcher.bm25.document_share) for check in ("off", "on")}
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    middle = len(rows) // 2
    rows = rows[:middle] if half == "first" else rows[middle:] if half == "second" else rows
    totals: dict[str, dict[str, int]] = {}
    examples: list[dict[str, str]] = []
    shown_reasons = {LEANS_ON_DROPPED} if toggle == "references" else set()
    for row in rows:
        source = chunks[row["source_chunk"]].text
        source_vecs = searcher.embedder.encode_uncached(sentences(source) or [source])
        for condition, run in row["runs"].items():
            evidence = Evidence(row["question"], [
                EvidenceSource(s["n"], ResourceHit(resources[s["rid"]], 1.0, []),
                               [EvidenceSentence(**{**x, "order": tuple(x["order"])}) for x in s["sentences"]])
                for s in run["evidence"]])
            for check, verifier in verifiers.items():
                verdict = verifier.attribute(run["draft"], evidence, settings.llm.answer_sentences)
                t = totals.setdefault(f"{condition}/check {check}", {"answers": 0, "shown": 0, "kept": 0, "stated": 0})
                t["answers"] += 1
                t["shown"] += bool(verdict.kept)
                t["kept"] += len(verdict.kept)
                if verdict.kept:
                    vecs = searcher.embedder.encode_uncached([c.text for c in verdict.kept])
                    t["stated"] += bool((vecs @ source_vecs.T).max() >= STATED_COSINE)
                if check == "on":
                    examples += [{"id": row["id"], "condition": condition, "sentence": c.text, "reason": c.reason}
                                 for c in verdict.dropped if (c.reason in shown_reasons if shown_reasons
                                                               else c.reason.startswith("says it of"))]
    return {"rows": rows_path.name, "half": half, "toggle": toggle, "questions": len(rows),
            "max_share": settings.llm.verify_question_word_max_share, "totals": totals, f"dropped_{toggle}": examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["generate", "score"])
    parser.add_argument("--rows", type=Path, required=True)
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--half", choices=["first", "second", "all"], default="all")
    parser.add_argument("--toggle", choices=["off_subject", "references"], default="off_subject",
                        help="what `score` turns off then on: the off-subject check, or resolving references to "
                        "dropped sentences (with the off-subject check on)")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    args = parser.parse_args()
    if args.command == "score" and not args.rows.is_file():
        parser.error(f"{args.rows}: no such rows file; write one with `generate --rows {args.rows}` first")
    if args.command == "generate":
        generate(args.n, args.rows, args.home, args.seed)
    else:
        print(json.dumps(score(args.rows, args.home, args.half, args.toggle), indent=1))


if __name__ == "__main__":
    main()
