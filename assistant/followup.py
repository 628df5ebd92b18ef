"""Turn a follow-up ("and the second one?", "what about on AMD?") into a standalone question.

Rule-based on purpose: it is instant and predictable, where a 1.5B model rewriting questions is
neither; it sees the previous standalone question and the previous answer's cited titles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.text import terms

_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5,
}
_ORDINAL_REF = re.compile(
    r"\b(?:the\s+)?(first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th|last)\s*(one|source|paper|post|link|resource|result)?\b"
    r"|\[(\d)\]|#(\d)\b",
    re.IGNORECASE,
)
_WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*\??\s*$|^\s*and\s+(.+?)\s*\?\s*$", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(it|its|that|this|they|them|those|these|there)\b", re.IGNORECASE)


@dataclass
class Turn:
    """One earlier exchange, as much of it as a rewrite needs."""

    question: str
    standalone: str
    cited_titles: list[str] = field(default_factory=list)


def standalone_question(question: str, history: list[Turn]) -> str:
    question = question.strip()
    if not history:
        return question
    last = history[-1]
    if ref := _ORDINAL_REF.search(question):
        title = _cited(ref, last.cited_titles)
        if title:
            replaced = (question[: ref.start()] + title + question[ref.end():]).strip()
            replaced = re.sub(r"^(and|so|ok|okay)\b[\s,]*", "", replaced, flags=re.IGNORECASE)
            rest = set(terms(replaced)) - set(terms(title))
            return replaced if len(rest) >= 2 else f"{title}: {last.standalone}"
    if match := _WHAT_ABOUT.match(question):
        extra = (match.group(1) or match.group(2) or "").strip()
        return f"{last.standalone.rstrip(' ?')} {extra}".strip()
    if _PRONOUN.search(question) and len(question.split()) <= 10:
        return f"{question.rstrip(' ?')} ({last.standalone.rstrip(' ?')})"
    return question


def _cited(ref: re.Match[str], titles: list[str]) -> str | None:
    if not titles:
        return None
    word = (ref.group(1) or "").lower()
    n = len(titles) if word == "last" else _ORDINALS.get(word) or int(ref.group(3) or ref.group(4) or 0)
    return titles[n - 1] if 1 <= n <= len(titles) else None
