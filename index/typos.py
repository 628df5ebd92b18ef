"""Query typo correction against the corpus's own words ("memroy coalesing" → "memory coalescing").

A misspelt word matches nothing in BM25 and embeds as noise. A query word is corrected when it is long enough
to judge (`index.typo_min_len` letters), appears nowhere in the corpus, is not an ordinary English word (the
embedding model's whole-word vocabulary) and is one edit (two from 8 letters on; a swap of neighbours is one
edit) from a corpus word seen at least twice; ties go to the more frequent word. Corpus words are counted at index build time and saved
beside the index as `words.json`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from core.files import atomic_write_json
from index.records import REBUILD_HINT, IndexLoadError

WORDS_FILE = "words.json"
MIN_COUNT = 2  # a word seen once may itself be a typo in a page
_WORD = re.compile(r"[A-Za-z]+")


def count_words(texts: Iterable[str]) -> Counter[str]:
    """How often each plain word (lower-cased) occurs in the corpus."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w.lower() for w in _WORD.findall(text))
    return counts


def save_words(counts: Counter[str], directory: Path) -> None:
    atomic_write_json(directory / WORDS_FILE, dict(sorted(counts.items())), indent=0)


def load_words(directory: Path) -> Counter[str]:
    path = directory / WORDS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Counter({str(k): int(v) for k, v in data.items()})
    except FileNotFoundError:
        raise IndexLoadError(f"{path} is missing; {REBUILD_HINT}") from None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise IndexLoadError(f"{path} is corrupt ({exc.__class__.__name__}); {REBUILD_HINT}") from None


class TypoCorrector:
    """Rewrites a query's misspelt words into the corpus's spelling; everything else is left as written."""

    def __init__(
        self, counts: Counter[str], english: set[str] | None = None, min_len: int = 5
    ) -> None:
        self.counts = counts
        self.english = english or set()
        self.min_len = min_len
        self.by_length: dict[int, list[str]] = {}  # candidates by length: an edit changes it by at most one
        for word, n in counts.items():
            if n >= MIN_COUNT and len(word) >= min_len - 1:
                self.by_length.setdefault(len(word), []).append(word)

    def suggestion(self, word: str) -> str | None:
        """The corpus word `word` probably meant, or None when it needs no (or has no) correction."""
        low = word.lower()
        if len(low) < self.min_len or low in self.counts or low in self.english:
            return None
        edits = 1 if len(low) < 8 else 2
        choices = [w for n in range(len(low) - edits, len(low) + edits + 1) for w in self.by_length.get(n, ())]
        if not choices:
            return None
        matches = process.extract(low, choices, scorer=DamerauLevenshtein.distance, score_cutoff=edits, limit=10)
        if not matches:
            return None
        best = min(matches, key=lambda m: (m[1], -self.counts[m[0]]))
        return best[0]

    def correct(self, text: str) -> tuple[str, dict[str, str]]:
        """The text with misspelt words replaced, and what was replaced."""
        fixes: dict[str, str] = {}

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            if not word.islower() and not word.istitle():
                return word  # identifiers and acronyms (TMA, cuBLAS) are written on purpose
            better = self.suggestion(word)
            if better is None:
                return word
            fixes[word] = better
            return better

        return re.sub(r"[A-Za-z]+", fix, text), fixes
