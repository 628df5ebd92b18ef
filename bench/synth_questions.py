"""Synthetic tuning questions written by the packaged chat model from the corpus itself (doc2query / InPars).

Why: every weight and threshold of retrieval and abstention is chosen on these questions, never on the dev
set, which only reports. For a seeded sample of page chunks (a few per resource) and for every catalog card,
the packaged Qwen2.5-Coder-1.5B writes questions a learner would ask that the passage answers, in plain words,
without the resource's title. A question is kept only when its own passage ranks in the top 20 for it by BM25
or by the dense retriever (the InPars filter), so the set holds answerable questions, not noise.

Each record: id, kind ("synthetic-passage" / "synthetic-card"), question, gold (the resource URL), resource_id,
source_chunk, fold (0-4, by resource, for grouped cross-validation), and the filter's ranks.

    .venv/bin/python bench/synth_questions.py --out bench/data/synthetic-questions.jsonl

The run appends as it goes and resumes where it stopped (sources already done are skipped); the file is the
committed artefact. CPU time here: about 8 s a source on 2 cores.
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

from common import ROOT, real_corpus_settings

log = logging.getLogger("synth")

PER_RESOURCE = 3
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


def fold_of(resource_id: str) -> int:
    """Grouped folds: all questions about one resource land in the same fold."""
    return int(hashlib.sha1(resource_id.encode()).hexdigest(), 16) % FOLDS


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
    b_rows, _ = searcher.bm25_rows(question, FILTER_DEPTH, None)
    d_rows, _ = searcher.dense_rows(question, FILTER_DEPTH, None)
    b = b_rows.tolist().index(row) + 1 if row in b_rows.tolist() else None
    d = d_rows.tolist().index(row) + 1 if row in d_rows.tolist() else None
    return b, d


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "synthetic-questions.jsonl")
    parser.add_argument("--per-resource", type=int, default=PER_RESOURCE)
    parser.add_argument("--questions", type=int, default=2, help="questions asked per source")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=0, help="stop after this many sources (0: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--home", type=Path, default=None, help="data dir with the indexed archive (default: .bench-home)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    settings = real_corpus_settings(args.home) if args.home else real_corpus_settings()
    from llama_cpp import Llama

    from assistant.models import gguf_path
    from index.search import load_searcher

    searcher = load_searcher(settings)
    row_of = {c.chunk_id: i for i, c in enumerate(searcher.store.chunks)}
    resources = {r.id: r for r in searcher.resources}
    sources = sample_sources(searcher.store.chunks, args.per_resource, args.seed)
    if args.limit:
        sources = sources[: args.limit]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done: set[str] = set()
    n_written = 0
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            record = json.loads(line)
            done.add(record["source_chunk"])
            n_written = max(n_written, int(record["id"][1:]))
    done |= {line.strip() for line in _tried_file(args.out).read_text().splitlines()} if _tried_file(args.out).exists() else set()

    llm = Llama(model_path=str(gguf_path(settings)), n_ctx=2048, n_threads=args.threads, n_batch=512, seed=args.seed, verbose=False)
    started = time.perf_counter()
    todo = [c for c in sources if c.chunk_id not in done]
    log.info("%d sources, %d to do", len(sources), len(todo))
    with args.out.open("a", encoding="utf-8") as out, _tried_file(args.out).open("a") as tried:
        for i, chunk in enumerate(todo, start=1):
            res = resources.get(chunk.resource_id)
            if res is None:
                continue
            template = CARD_PROMPT if chunk.source_kind == "card" else PASSAGE_PROMPT
            text = " ".join(chunk.text.split()[:220])
            reply = llm.create_chat_completion(
                messages=[{"role": "user", "content": template.format(text=text, title=res.title, n=args.questions)}],
                max_tokens=40 * args.questions, temperature=0.7, top_p=0.9,
            )["choices"][0]["message"]["content"]
            for question in parse_questions(reply, res.title, res.authors)[: args.questions]:
                bm25_rank, dense_rank = own_rank(searcher, question, row_of[chunk.chunk_id])
                if bm25_rank is None and dense_rank is None:
                    continue
                n_written += 1
                record = {
                    "id": f"s{n_written:04d}", "kind": f"synthetic-{'card' if chunk.source_kind == 'card' else 'passage'}",
                    "question": question, "gold": [res.url], "resource_id": res.id, "source_chunk": chunk.chunk_id,
                    "fold": fold_of(res.id), "bm25_rank": bm25_rank, "dense_rank": dense_rank,
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            tried.write(chunk.chunk_id + "\n")
            tried.flush()
            if i % 10 == 0:
                rate = (time.perf_counter() - started) / i
                log.info("%d/%d sources, %d questions, %.1f s/source", i, len(todo), n_written, rate)
    print(json.dumps({"sources": len(sources), "questions": n_written, "seconds": round(time.perf_counter() - started, 1)}))
    return 0


def _tried_file(out: Path) -> Path:
    """Sources already asked (kept or not), so a resumed run does not ask again."""
    return out.with_suffix(".tried")


if __name__ == "__main__":
    sys.exit(main())
