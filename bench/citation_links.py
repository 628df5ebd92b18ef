"""Do citation links land on the sentence? For each question, the extractive answer (`gpuguide ask --llm none`
path, no model) and, for every citation, what its `link` is: a text fragment, a PDF page, or the plain URL;
and whether the fragment's words occur, contiguously and in order, in the stored text of the page it links to
(its simple inline TeX as rendered: "1.1$\\times$" is "1.1×" on the page)
(`source_url`, else `url`), or only on another page of the same resource (a follow-up such as the arXiv PDF
or a GitHub README, when the chain does not say which page the quote came from).

Questions: our own (bench/data/answer-eval.jsonl by default), never tuned on: nothing here has a knob.

    python bench/citation_links.py --home DATA_DIR [--questions FILE] [--limit N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from common import ROOT, real_corpus_settings, write_report

QUESTIONS = ROOT / "bench" / "data" / "answer-eval.jsonl"


def words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"\w+", text)]


def at(needle: list[str], hay: list[str], start: int = 0) -> int:
    """Where `needle` occurs contiguously in `hay` at or after `start`, or -1."""
    if not needle:
        return -1
    first = needle[0]
    for i in range(start, len(hay) - len(needle) + 1):
        if hay[i] == first and hay[i:i + len(needle)] == needle:
            return i
    return -1


def fragment_terms(link: str) -> list[str]:
    return [unquote(t) for t in link.split(":~:text=", 1)[1].split(",")] if ":~:text=" in link else []


def on_page(terms: list[str], page: list[str]) -> bool:
    found = -1
    for term in terms:
        found = at(words(term), page, found + 1)
        if found < 0:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="data dir (the shared archive is ingested there once)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    settings = real_corpus_settings(args.home)
    from assistant.chain import Assistant, Query
    from index.search import load_searcher
    from ingest.store import ChunkStore

    questions = [json.loads(line)["question"] for line in args.questions.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    if args.limit:
        questions = questions[: args.limit]
    docs = [d for d in ChunkStore(settings.store_file).documents() if d.source_kind != "card"]
    from assistant.sentences import plain_math

    page_words = {d.url: words(plain_math(d.text)) for d in docs}  # inline TeX as the page renders it
    resource_pages: dict[str, list[str]] = {}
    for d in docs:
        resource_pages.setdefault(d.resource_id, []).append(d.url)
    assistant = Assistant(settings, load_searcher(settings))

    counts: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    started = time.perf_counter()
    for question in questions:
        answer = assistant.ask(Query(question, backend="extractive"))
        for cite in answer.citations:
            counts["citations"] += 1
            link, target = cite.link, cite.source_url or cite.url
            if "#page=" in link:
                counts["pdf_page"] += 1
                continue
            terms = fragment_terms(link)
            if not terms:
                counts["plain_url"] += 1
                continue
            counts["text_fragment"] += 1
            if target in page_words and on_page(terms, page_words[target]):
                counts["fragment_on_linked_page"] += 1
            elif any(on_page(terms, page_words[u]) for u in resource_pages.get(cite.resource_id, [])):
                counts["fragment_on_another_page_of_the_resource"] += 1
                misses.append({"question": question, "link": link, "pages": resource_pages[cite.resource_id]})
            else:
                counts["fragment_not_found"] += 1
                misses.append({"question": question, "link": link, "quote": cite.quote})
    write_report({
        "questions": len(questions), "backend": "extractive", **dict(counts),
        "seconds": round(time.perf_counter() - started, 1), "misses": misses[:20],
    }, args.out)


if __name__ == "__main__":
    main()
