"""The no-LLM answer: the question's most relevant sentences from the top passages, each one cited.

Instant, deterministic, always grounded; used with `--llm none`, by the tests, and as the fallback
when a configured LLM fails or gives an unsupported answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.text import score_sentences, sentences


@dataclass(frozen=True)
class SourceText:
    """One numbered source as the answerer sees it."""

    n: int
    title: str
    passages: tuple[str, ...]


def extractive_answer(question: str, sources: list[SourceText], max_sentences: int = 3, per_source: int = 2) -> str:
    """Up to `max_sentences` sentences, each ending with its [n]; at most `per_source` from one source."""
    candidates: list[tuple[int, int, str]] = []  # (source n, order, sentence)
    for src in sources:
        order = 0
        for passage in src.passages:
            for sent in sentences(passage):
                candidates.append((src.n, order, sent))
                order += 1
    if not candidates:
        return ""
    scores = score_sentences(question, [c[2] for c in candidates])
    # Earlier sources ranked higher in retrieval: a small prior keeps ties in their favour.
    ranked = sorted(
        range(len(candidates)),
        key=lambda i: (-(scores[i] + (0.3 if scores[i] > 0 else 0) / candidates[i][0]), candidates[i][0], candidates[i][1]),
    )
    chosen: list[int] = []
    used: dict[int, int] = {}
    seen_text: set[str] = set()
    for i in ranked:
        n, _, sent = candidates[i]
        if len(chosen) >= max_sentences:
            break
        if scores[i] <= 0 and chosen:
            break
        key = sent.lower()
        if used.get(n, 0) >= per_source or key in seen_text:
            continue
        chosen.append(i)
        used[n] = used.get(n, 0) + 1
        seen_text.add(key)
    chosen.sort(key=lambda i: (candidates[i][0], candidates[i][1]))
    return " ".join(_cite(candidates[i][2], candidates[i][0]) for i in chosen)


def _cite(sentence: str, n: int) -> str:
    body = sentence.rstrip()
    end = body[-1] if body and body[-1] in ".!?" else "."
    body = body.rstrip(".!?")
    return f"{body} [{n}]{end}"
