"""The no-LLM answer: the most relevant evidence sentences, quoted as they stand, each with its source.

Instant, deterministic, always grounded; used with `--llm none`, and when no generated sentence survives
verification. It quotes the evidence the LLM was given (`assistant/evidence.py`: scored by the embedder and
question-term overlap), so it is never a collage of keyword matches from anywhere in the pages.
"""

from __future__ import annotations

from assistant.evidence import Evidence
from assistant.sentences import points_ahead


def extractive_answer(evidence: Evidence, max_sentences: int = 3, per_source: int = 2) -> str:
    """Up to `max_sentences` evidence sentences, best first, each quoted and ending with its [n]; at most
    `per_source` from one source; none that only announces what came next on its page. Empty when there is
    none."""
    chosen = []
    used: dict[int, int] = {}
    for source, sentence in evidence.ranked():
        if len(chosen) >= max_sentences:
            break
        if used.get(source.n, 0) >= per_source or points_ahead(sentence.text):
            continue  # "The formula below ...": the formula is not in the quote
        used[source.n] = used.get(source.n, 0) + 1
        chosen.append(quote(sentence.text, source.n))
    return " ".join(chosen)


def quote(sentence: str, n: int) -> str:
    """“sentence” [n]. — verbatim, so the reader knows these are the page's words, not a summary."""
    body = sentence.strip().rstrip(".!?;:, ")
    return f"“{body}” [{n}]."
