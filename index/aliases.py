"""Short forms and their long forms, mined from the corpus at index build time and used as query expansion.

Learners write "TMA" where a page says "Tensor Memory Accelerator", or "FA2" for "FlashAttention-2"; the
pages themselves say which is which. Three sources, no hand-written list:

* definitions in the text — "Tensor Memory Accelerator (TMA)" and "TMA (Tensor Memory Accelerator)" — found
  with the Schwartz–Hearst algorithm (the short form's letters appear in order in the long form, the first one
  at the start of a word) over every chunk, title and note;
* titles: a compound name with a version, "FlashAttention-2", gives the initials of its parts plus the
  number ("fa2"), kept only when the corpus itself writes that short form somewhere;
* (author names and publishers are catalog names, matched by index/fields.py.)

The table is saved beside the index as `aliases.json` (plain JSON) and read back with it.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.files import atomic_write_json
from core.text import tokenize
from index.records import REBUILD_HINT, IndexLoadError

log = logging.getLogger(__name__)

ALIASES_FILE = "aliases.json"
MAX_SHORT_LEN = 10
MAX_LONG_WORDS = 8
RIVAL_SHARE = 0.5  # other long forms of one short form are kept when seen at least this share as often

_PAREN = re.compile(r"\(([^()\n]{1,80})\)")
_SHORT = re.compile(r"^[A-Za-z][A-Za-z0-9-]{1,9}$")
_SENTENCE_END = re.compile(r"[.;:!?\n][\s\"')\]]")
_LONG_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z],?|[A-Za-z]")
_COMPOUND = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]*)+)-?(\d+)\b")


def looks_like_short_form(word: str) -> bool:
    """2-10 characters, starts with a letter, and at least two capitals (or a capital and a digit): TMA,
    MoE, FP8, NVFP4 — not 'Python' or 'e.g'."""
    if not _SHORT.match(word):
        return False
    capitals = sum(ch.isupper() for ch in word)
    digits = sum(ch.isdigit() for ch in word)
    return capitals >= 2 or (capitals >= 1 and digits >= 1)


def match_long_form(short: str, candidate: str) -> str | None:
    """The shortest tail of `candidate` that `short` abbreviates (Schwartz & Hearst 2003), or None."""
    s, c = short.lower(), candidate.lower()
    si, ci = len(s) - 1, len(c) - 1
    while si >= 0:
        ch = s[si]
        if not ch.isalnum():
            si -= 1
            continue
        while ci >= 0 and (c[ci] != ch or (si == 0 and ci > 0 and c[ci - 1].isalnum())):
            ci -= 1
        if ci < 0:
            return None
        si -= 1
        ci -= 1
    start = c.rfind(" ", 0, ci + 1) + 1
    long_form = candidate[start:].strip(" ,-\"'")
    words = long_form.split()
    if not words or len(words) > min(len(short) + 5, 2 * len(short), MAX_LONG_WORDS):
        return None
    if long_form.lower().replace("-", "") == s.replace("-", "") or len(long_form) <= len(short):
        return None
    if not all(_LONG_WORD.fullmatch(w) for w in words):  # formulas, lists, markup: not a name
        return None
    return long_form


def definitions(text: str) -> Iterable[tuple[str, str]]:
    """(short, long) pairs defined in `text`: "long form (SHORT)" and "SHORT (long form)"."""
    for m in _PAREN.finditer(text):
        inner = m.group(1).strip()
        before = text[max(0, m.start() - 200) : m.start()]
        ends = list(_SENTENCE_END.finditer(before))
        if ends:
            before = before[ends[-1].end() :]
        before = before.rstrip()
        if looks_like_short_form(inner):
            words = before.split()
            window = " ".join(words[-min(len(inner) + 5, 2 * len(inner)) :])
            long_form = match_long_form(inner, window)
            if long_form:
                yield inner, long_form
        elif before and len(inner.split()) >= 2:
            short = before.split()[-1].strip(",;\"'")
            if looks_like_short_form(short):
                long_form = match_long_form(short, inner)
                if long_form and inner.lower().startswith(long_form.lower()[:1]):
                    yield short, long_form


def title_short_forms(title: str) -> Iterable[tuple[str, str]]:
    """(short, long) from versioned compound names in a title: FlashAttention-2 → (FA2, FlashAttention-2)."""
    for m in _COMPOUND.finditer(title):
        initials = "".join(re.findall(r"[A-Z]", m.group(1)))
        if len(initials) >= 2:
            yield initials + m.group(2), m.group(0)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip()).lower()


@dataclass
class AliasTable:
    """short form (lower case) → its long forms; `expand` maps a query's wording either way."""

    pairs: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._long_tokens: list[tuple[tuple[str, ...], str]] = []
        for short, longs in self.pairs.items():
            for long_form in longs:
                tokens = tuple(tokenize(long_form))
                if len(tokens) >= 2:  # a one-word long form matches too loosely to expand from
                    self._long_tokens.append((tokens, short))

    def __len__(self) -> int:
        return len(self.pairs)

    def expand(self, text: str, common_words: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """Long forms of the short forms written in `text` and short forms of the long forms in it.

        A short form that is also an ordinary word ("CAT", "MAP") counts only when written in capitals."""
        out: list[str] = []
        for raw in re.findall(r"[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]", text):
            key = raw.lower()
            if key in self.pairs and (key not in common_words or looks_like_short_form(raw)):
                out.extend(self.pairs[key])
        tokens = tokenize(text)
        joined = " " + " ".join(tokens) + " "
        for long_tokens, short in self._long_tokens:
            if " " + " ".join(long_tokens) + " " in joined:
                out.append(short)
        return list(dict.fromkeys(out))

    def save(self, directory: Path) -> None:
        atomic_write_json(directory / ALIASES_FILE, {"pairs": self.pairs}, indent=0, sort_keys=True)

    @classmethod
    def load(cls, directory: Path) -> AliasTable:
        path = directory / ALIASES_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            pairs = {str(k): [str(v) for v in vs] for k, vs in data["pairs"].items()}
        except FileNotFoundError:
            raise IndexLoadError(f"{path} is missing; {REBUILD_HINT}") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise IndexLoadError(f"{path} is corrupt ({exc.__class__.__name__}); {REBUILD_HINT}") from None
        return cls(pairs)


def mine_aliases(texts: Iterable[str], titles: Iterable[str] = ()) -> AliasTable:
    """The alias table of a corpus: definitions in `texts` (chunks, titles, notes), plus versioned compound
    names in `titles` whose short form the texts use somewhere."""
    texts = list(texts)
    counts: dict[str, Counter[str]] = {}
    display: dict[str, str] = {}
    for text in texts:
        for short, long_form in definitions(text):
            key = short.lower()
            counts.setdefault(key, Counter())[_norm(long_form)] += 1
    seen_words = {w.lower() for text in texts for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", text)}
    for title in titles:
        for short, long_form in title_short_forms(title):
            key = short.lower()
            if key in seen_words:
                counts.setdefault(key, Counter())[_norm(long_form)] += 1
                display.setdefault(key, short)
    pairs: dict[str, list[str]] = {}
    for key, longs in counts.items():
        top = longs.most_common(1)[0][1]
        pairs[key] = sorted((lf for lf, n in longs.items() if n >= RIVAL_SHARE * top), key=lambda lf: -longs[lf])
    log.info("alias table: %d short forms", len(pairs))
    return AliasTable(pairs)
