"""A learner's typos and run-together names mended before the sentence is read, and full titles marked.

Why: learners type fast ("kerenlllm", "chips and chesee", "CoalescingBankConflicts"), and a misspelt name
links to nothing, so the item comes back as a pick although the learner said they read it (issue 24: typos
and lower case are a style of their own). The vocabulary is the catalog's own names plus ordinary English (the
embedding model's word list), never a question set's: a word that is neither is replaced by the one catalog
word at one edit (a swap, a missing, extra or wrong letter), and a CamelCase word the catalog does not know
is split when all its parts are known words. A word with two candidates is left as written.

A full title said in the text ("How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance") is put
in quotes, so its own words ("How to", "Optimize") are not read as the learner's question, and its colon or
commas do not split the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rapidfuzz.distance import OSA

from assistant.mentions import quoted_spans
from core.records import Resource
from core.text import stem

_WORD = re.compile(r"[A-Za-z]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
MIN_MENDED = 5  # shorter words are too often a real word one letter from a name ("tile" / "tiles")
MIN_TITLE_WORDS = 3  # a one- or two-word title is a name the phrase rules already read
MENDED_CACHE = 4096  # remembered unknown words; the server reads any text a user types, so it is bounded


class Speller:
    """Mends words against the catalog's names; built once per catalog."""

    def __init__(self, resources: Iterable[Resource], english: set[str] | None = None,
                 rule_words: Iterable[str] = ()) -> None:
        """`rule_words`: the words the reader's own rules look for ("section", "anything"): a typo of one
        ("setcion") hides a whole group from them, so they are mended to like the catalog's names; only beside
        an English word list, without which every ordinary word looks like a typo of one ("while" / "whole")."""
        forms: dict[str, str] = {}
        for r in resources:
            host = r.url.split("/")[2] if "://" in r.url else ""
            for w in _WORD.findall(f"{r.title} {r.authors} {r.topic} {r.section} {host}"):
                forms.setdefault(w.lower(), w)
        for w in rule_words if english else ():
            if _WORD.fullmatch(w):
                forms.setdefault(w.lower(), w.lower())
        self.forms = forms  # lower-case word → how the catalog writes it
        self.known = set(forms) | {w.lower() for w in (english or ())}
        self.known_stems = {stem(w) for w in self.known}  # "paper" is no typo of "papers"
        self.long_names = [w for w in forms if len(w) >= MIN_MENDED]
        self._mended: dict[str, str] = {}

    def mend(self, text: str) -> str:
        return _WORD.sub(lambda m: self._word(m.group(0)), text)

    def _word(self, word: str) -> str:
        low = word.lower()
        if low in self.known or len(word) < MIN_MENDED or stem(low) in self.known_stems:
            return word
        if word not in self._mended:
            if len(self._mended) >= MENDED_CACHE:
                self._mended.clear()
            self._mended[word] = self._split(word) or self._nearest(word) or word
        return self._mended[word]

    def _split(self, word: str) -> str:
        parts = _CAMEL.findall(word)
        if len(parts) >= 2 and "".join(parts) == word and all(p.lower() in self.known and len(p) > 1 for p in parts):
            return " ".join(parts)
        return ""

    def _nearest(self, word: str) -> str:
        low = word.lower()
        near = [w for w in self.long_names if abs(len(w) - len(low)) <= 1 and OSA.distance(low, w, score_cutoff=1) <= 1]
        if len(near) != 1:
            return ""
        return near[0] if word.islower() else self.forms[near[0]]


def quote_titles(text: str, resources: Iterable[Resource]) -> str:
    """Full titles of three or more words, matched without regard to case or spacing, put in quotes
    (unless already inside a quoted span); longer titles first, so one title inside another stays whole."""
    titles = sorted({r.title for r in resources if len(r.title.split()) >= MIN_TITLE_WORDS}, key=len, reverse=True)
    taken = [(start, end) for start, end, _ in quoted_spans(text)]
    found: list[tuple[int, int]] = []
    for title in titles:
        pattern = r"\s+".join(re.escape(w) for w in title.split())
        for m in re.finditer(rf"(?<![\w\"“]){pattern}(?![\w\"”])", text, re.IGNORECASE):
            span = (m.start(), m.end())
            if not any(s < span[1] and span[0] < e for s, e in taken + found):
                found.append(span)
    for start, end in sorted(found, reverse=True):
        text = f"{text[:start]}“{text[start:end]}”{text[end:]}"
    return text
