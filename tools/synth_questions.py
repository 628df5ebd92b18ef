"""Synthetic tuning questions written by the packaged chat model from the corpus itself (doc2query / InPars).

Why: every weight and threshold of retrieval and abstention is chosen on these questions, never on the dev
set, which only reports. For a seeded sample of page chunks (a few per resource) and for every catalog card,
the packaged Qwen2.5-Coder-1.5B writes questions a learner would ask that the passage answers, in plain words,
without the resource's title. A question is kept only when its own passage ranks in the top 20 for it by BM25
or by the dense retriever (the InPars filter), so the set holds answerable questions, not noise.

Each record: id, kind ("synthetic-passage" / "synthetic-card"), question, gold (the resource URL), resource_id,
source_chunk, fold (0-4, by resource, for grouped cross-validation), and the filter's ranks.

Three steps, so the model can run where it is fast:

    .venv/bin/python tools/synth_questions.py prompts --home H --out P.jsonl      # sample sources, write prompts
    python3 tools/synth_questions.py generate --prompts P.jsonl --model Q.gguf --out R.jsonl \
        --backend transformers                                                     # on the GPU (same GGUF)
    .venv/bin/python tools/synth_questions.py filter --home H --prompts P.jsonl --replies R.jsonl \
        --out bench/data/synthetic-questions.jsonl                                  # parse + InPars filter

To grow the set for pages new to the archive: `prompts --skip-covered SET` (only resources the set has no
passage questions for), generate, then `filter --grow SET --out SET` (old records and folds kept, new
resources placed in the smallest folds).

`--backend llama` runs the same GGUF on the CPU through llama-cpp-python (about 10 s a source on 2 quiet
cores); `--backend transformers` loads the GGUF into transformers (dequantised, `gguf` package) and samples in
batches on a GPU. The committed set was made on the H200 (see docs/measurements/synthetic-questions.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout: bench.common
from bench.common import ROOT, real_corpus_settings  # noqa: E402
from tools.generate import Sampling, add_generate_arguments, generate, read_jsonl, write_jsonl  # noqa: E402


log = logging.getLogger("synth")

PER_RESOURCE = 8
QUESTIONS = 3
PASSAGE_WORDS = 220
FILTER_DEPTH = 20
FOLDS = 5
MIN_WORDS = 40

PASSAGE_PROMPT = (
    "Here is a passage from a page about GPU programming.\n\n<passage>\n{text}\n</passage>\n\n"
    "Write {n} different questions that a learner of GPU performance engineering might type into a search box, "
    "each answered by this passage. Write them in your own plain words, the way a student asks (the first short and casual, the next more specific); do not copy "
    "phrases from the passage and do not mention the page's title ({title}). One question per line, each ending "
    "with a question mark, nothing else."
)
CARD_PROMPT = (
    "A reading list on GPU performance engineering has this entry:\n\n<entry>\n{text}\n</entry>\n\n"
    "Write {n} different questions that a learner might ask when looking for a resource like this one, without "
    "naming it, its title ({title}) or its authors. Describe what they want to learn in plain words, the first short and casual. One question "
    "per line, each ending with a question mark, nothing else."
)
# A question that points at "the passage" or "this entry" is not standalone: a learner never saw it.
_DEICTIC = re.compile(
    r"\b(?:the|this|that|above|given|provided)\s+(?:passage|text|page|article|entry|post|excerpt|author|paper|resource|document|section)s?\b",
    re.I,
)
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\d+[.)]|Q\d*[:.)])\s*")


def assign_folds(records: list[dict], folds: int = FOLDS, existing: list[dict] | None = None) -> None:
    """Grouped, balanced folds: all questions about one resource land in one fold, and resources go (largest
    first, ties by a hash of the id) to the fold holding the fewest questions so far. `existing` records keep
    their folds (a grown set must not move old questions between folds) and count toward the sizes."""
    counts: dict[str, int] = defaultdict(int)
    for record in records:
        counts[record["resource_id"]] += 1
    sizes = [0] * folds
    fold_of: dict[str, int] = {}
    for record in existing or []:
        sizes[record["fold"]] += 1
        fold_of[record["resource_id"]] = record["fold"]
    for resource_id in sorted(counts, key=lambda r: (-counts[r], hashlib.sha1(r.encode()).hexdigest())):
        if resource_id in fold_of:
            sizes[fold_of[resource_id]] += counts[resource_id]
            continue
        fold = min(range(folds), key=lambda f: (sizes[f], f))
        fold_of[resource_id] = fold
        sizes[fold] += counts[resource_id]
    for record in records:
        record["fold"] = fold_of[record["resource_id"]]


def sample_sources(chunks: list, per_resource: int, seed: int) -> list:
    """Every card, and up to `per_resource` page chunks of each resource (seeded, long enough to ask about)."""
    rng = random.Random(seed)
    cards = [c for c in chunks if c.source_kind == "card"]
    pages: dict[str, list] = defaultdict(list)
    for chunk in chunks:
        if chunk.source_kind != "card" and len(chunk.text.split()) >= MIN_WORDS:
            pages[chunk.resource_id].append(chunk)
    picked = []
    for resource_id in sorted(pages):
        group = pages[resource_id]
        picked += rng.sample(group, min(per_resource, len(group)))
    sources = cards + picked
    rng.shuffle(sources)  # a partial run still covers cards and passages alike
    return sources


def _name_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4}


def names_the_resource(question: str, title: str, authors: str) -> bool:
    """Does the question give the answer away: an author's name, or most of the title's words?"""
    words = _name_words(question)
    if _name_words(authors) & words:
        return True
    title_words = _name_words(title)
    return bool(title_words) and len(title_words & words) / len(title_words) >= 0.5


def parse_questions(text: str, title: str, authors: str = "") -> list[str]:
    """Questions of a sensible length (one a line, or several run together) that do not name the resource."""
    out = []
    for line in re.split(r"\n|(?<=\?)\s+", text):
        line = _NUMBERING.sub("", line).strip().strip('"')
        words = line.split()
        if not line.endswith("?") or not 4 <= len(words) <= 40:
            continue
        if names_the_resource(line, title, authors) or _DEICTIC.search(line):
            continue
        out.append(line)
    return list(dict.fromkeys(out))


def own_rank(searcher, question: str, row: int) -> tuple[int | None, int | None]:  # noqa: ANN001
    """Rank (1-based) of the source chunk among the top FILTER_DEPTH by BM25 and by dense retrieval."""
    b_rows = searcher.bm25_rows(question, FILTER_DEPTH, None)[0].tolist()
    d_rows = searcher.dense_rows(question, FILTER_DEPTH, None)[0].tolist()
    return (b_rows.index(row) + 1 if row in b_rows else None, d_rows.index(row) + 1 if row in d_rows else None)


def _searcher(home: Path):  # noqa: ANN202 - index.search.Searcher, imported lazily
    from index.search import load_searcher

    return load_searcher(real_corpus_settings(home))


def cmd_prompts(args: argparse.Namespace) -> None:
    searcher = _searcher(args.home)
    resources = {r.id: r for r in searcher.resources}
    covered: set[str] = set()
    if args.skip_covered:
        # Grow a set instead of redoing it: no card prompts, and no passages of resources it already asks about.
        covered = {r["resource_id"] for r in read_jsonl(args.skip_covered) if r["kind"] == "synthetic-passage"}
    rows = []
    for chunk in sample_sources(searcher.store.chunks, args.per_resource, args.seed):
        res = resources.get(chunk.resource_id)
        if res is None or (args.skip_covered and (chunk.source_kind == "card" or res.id in covered)):
            continue
        template = CARD_PROMPT if chunk.source_kind == "card" else PASSAGE_PROMPT
        text = " ".join(chunk.text.split()[:PASSAGE_WORDS])
        rows.append({
            "source_chunk": chunk.chunk_id, "resource_id": res.id, "card": chunk.source_kind == "card",
            "prompt": template.format(text=text, title=res.title, n=args.questions),
        })
    write_jsonl(args.out, rows)
    print(json.dumps({"prompts": len(rows), "out": str(args.out)}))


def cmd_generate(args: argparse.Namespace) -> None:
    rows = read_jsonl(args.prompts)
    started = time.perf_counter()
    prompts = [r["prompt"] for r in rows]
    replies = generate(prompts, args, Sampling(160, temperature=0.7, top_p=0.9))
    write_jsonl(args.out, [{"source_chunk": r["source_chunk"], "reply": text} for r, text in zip(rows, replies, strict=True)])
    print(json.dumps({"replies": len(replies), "backend": args.backend, "seconds": round(time.perf_counter() - started, 1)}))


def cmd_filter(args: argparse.Namespace) -> None:
    searcher = _searcher(args.home)
    row_of = {c.chunk_id: i for i, c in enumerate(searcher.store.chunks)}
    resources = {r.id: r for r in searcher.resources}
    prompts = {r["source_chunk"]: r for r in read_jsonl(args.prompts)}
    existing = read_jsonl(args.grow) if args.grow else []
    first_id = 1 + max((int(r["id"][1:]) for r in existing), default=0)
    records, asked, parsed = [], 0, 0
    for reply in read_jsonl(args.replies):
        source = prompts.get(reply["source_chunk"])
        if source is None or reply["source_chunk"] not in row_of:
            continue
        res = resources[source["resource_id"]]
        questions = parse_questions(reply["reply"], res.title, res.authors)[: args.questions]
        asked += args.questions
        parsed += len(questions)
        for question in questions:
            bm25_rank, dense_rank = own_rank(searcher, question, row_of[reply["source_chunk"]])
            if bm25_rank is None and dense_rank is None:
                continue
            records.append({
                "id": f"s{first_id + len(records):04d}", "kind": "synthetic-card" if source["card"] else "synthetic-passage",
                "question": question, "gold": [res.url], "resource_id": res.id, "source_chunk": reply["source_chunk"],
                "bm25_rank": bm25_rank, "dense_rank": dense_rank,
            })
    assign_folds(records, existing=existing)
    write_jsonl(args.out, existing + records)
    print(json.dumps({"asked": asked, "parsed": parsed, "kept": len(records), "grown_from": len(existing),
                      "out": str(args.out)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prompts", help="sample sources from the indexed archive and write the prompts")
    p.add_argument("--home", type=Path, required=True, help="data dir holding the indexed archive")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--per-resource", type=int, default=PER_RESOURCE)
    p.add_argument("--questions", type=int, default=QUESTIONS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-covered", type=Path, help="an existing set: write prompts only for page passages of "
                   "resources it has no passage questions for (pages new to the archive)")
    add_generate_arguments(sub, backend="llama", batch=64)
    p = sub.add_parser("filter", help="parse the replies and keep questions whose passage ranks in the top 20")
    p.add_argument("--home", type=Path, required=True)
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--replies", type=Path, required=True)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "synthetic-questions.jsonl")
    p.add_argument("--questions", type=int, default=QUESTIONS)
    p.add_argument("--grow", type=Path, help="an existing set: keep its records and folds, append the new questions "
                   "after its ids (with prompts made by `prompts --skip-covered`)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    {"prompts": cmd_prompts, "generate": cmd_generate, "filter": cmd_filter}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
