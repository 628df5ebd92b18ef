"""The one tokenizer: how every stage turns text into comparable terms (BM25, field matching, query parsing,
scope features, alias mining, sentence scoring, the answer's support check, the reading planner).

* `words(text)`: lower-case surface forms, stop words removed. Identifiers like `E4M3`, `H100`, `tcgen05` stay
  whole; camel-case names also yield their parts (`FlashAttention` → flashattention, flash, attention);
  hyphenated and snake-case words also yield the joined form (`all-reduce` → allreduce, reduce); an acronym's
  plural is the acronym (`GPUs` → gpu).
* `stem(word)`: suffixes folded where two stemmers agree. A short list of English suffixes (inflections
  -s, -es, -ed, -ing, -ies, -ied; endings -er, -ion, -ation) proposes a base (launches → launch, optimization
  → optimiz, copied → copy; the shortest such base), and the fold is kept only when the Snowball English stemmer (PyStemmer) gives
  the base and the word the same stem; then Snowball's final-e and final-y rules make the spellings meet
  (caching, cache → cach; copied, copy → copi). Snowball alone also strips suffixes the list leaves, which
  conflates words this corpus keeps apart (performance / perform, cooperative / cooper) and cost 1.2 points of success@5 on the synthetic held-out folds (index/README.md). Words with a digit and
  words under four letters are left as written.
* `tokenize(text)`: `stem` over `words`.

The stop words are the English list bm25s ships (`STOPWORDS_EN_PLUS`, NLTK's list, plus its shorter Lucene list),
with the bare modal each negated contraction in it stands for (couldn't → could): a general-language list,
nothing chosen for this corpus or its questions.
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

# Bump when `words`, `stem` or the stop words change: indexes built with another version must be rebuilt.
TOKENIZER_VERSION = "gpuguide-text-2-agreed"


def _stop_words() -> frozenset[str]:
    base = {w.lower() for w in (*STOPWORDS_EN_PLUS, *STOPWORDS_EN)}
    modals = {w[: -len("n't")] for w in base if w.endswith("n't")}  # couldn't → could, needn't → need
    return frozenset(base | {m for m in modals if len(m) > 3} | {w.replace("'", "") for w in base if "'" in w})


STOP_WORDS: frozenset[str] = _stop_words()

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ACRONYM_PLURAL = re.compile(r"^[A-Z]{2,}s$")
_SNOWBALL = Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lower-case surface forms of `text`, stop words and single letters removed, before stemming."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        parts = re.split(r"[-_]", word)
        forms = [word.replace("-", "").replace("_", "")] if len(parts) > 1 else []
        for part in parts:
            if _ACRONYM_PLURAL.match(part):  # GPUs, SMs, TPUs
                part = part[:-1]
            forms.append(part)
            if part.isalpha():
                pieces = _CAMEL.findall(part)
                if len(pieces) > 1:
                    forms.extend(p for p in pieces if len(p) >= 3)
        for form in forms:
            low = form.lower()
            if low in STOP_WORDS or (len(low) == 1 and low.isalpha()):
                continue
            out.append(low)
    return out


# The suffixes the fold may remove: regular inflections and the common verb → noun / agent endings.
_SUFFIXES = ("ations", "ation", "ings", "ions", "ing", "ion", "ers", "ies", "ied", "er", "ed", "es", "s")
_VOWELS = frozenset("aeiouy")


def _bases(word: str) -> list[str]:
    """The spellings `word` may be built from by one suffix (launches → launche, launch; running → run;
    optimization → optimize, optimiz; copied → copy)."""
    out: list[str] = []
    for suffix in _SUFFIXES:
        if not word.endswith(suffix) or (suffix == "s" and word.endswith("ss")):
            continue
        base = word[: -len(suffix)]
        if suffix in ("ies", "ied"):
            out.append(base + "y")
            continue
        out += [base, base + "e"]
        if len(base) >= 2 and base[-1] == base[-2] and base[-1] not in _VOWELS:
            out.append(base[:-1])  # running → run
    return [b for b in out if len(b) >= 3]


def _spelling(word: str) -> str:
    """Snowball's final-e and final-y rules, so a base meets its inflections (cache / caching, copy / copied)."""
    if len(word) >= 5 and word.endswith("e"):
        word = word[:-1]
    if len(word) >= 4 and word.endswith("y") and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    return word


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word with its suffixes folded where Snowball agrees (see the module docstring); words with a digit
    (E4M3, H100, tcgen05) and words under four letters as written."""
    word = word.lower()
    if len(word) < 4 or any(ch.isdigit() for ch in word):
        return word
    target = _SNOWBALL.stemWord(word)
    agreed = [b for b in _bases(word) if _SNOWBALL.stemWord(b) == target]
    if agreed:
        return stem(min(agreed, key=len))  # again: engineers → engineer → engine
    return _spelling(word)


def tokenize(text: str) -> list[str]:
    """The terms of `text`, in order, repeats kept (BM25 counts them)."""
    return [stem(w) for w in words(text)]


def terms(text: str) -> set[str]:
    """The distinct terms of `text` (overlap and support checks compare these)."""
    return set(tokenize(text))
