"""The lexical half of the index: BM25 (bm25s) over each chunk's `indexed_text`, saved as JSON + .npy.

The tokenizer is ours, tuned for this domain: identifiers like `E4M3`, `H100`, `tcgen05` stay whole,
camel-case names also yield their parts (`FlashAttention` → flashattention, flash, attention), hyphenated
words also yield the joined form (`all-reduce` → allreduce), and inflections are folded. Which folding is
`DEFAULT_STEMMER`, chosen by grouped cross-validation (bench/tune_retrieval.py) among a light suffix stripper
(kernels → kernel, launches/launching → launch, quantized/quantization → quantiz), the Snowball English
stemmer (PyStemmer) and none: the light stripper won in every fold.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from index.records import REBUILD_HINT, IndexLoadError

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG

# snowball / light / none. Chosen by grouped cross-validation on the synthetic questions (bench/tune_retrieval.py):
# the light stripper in all five folds; Snowball cost ~1.3 points of MRR@10 (it over-conflates: general /
# generate, organization / organ).
DEFAULT_STEMMER = "light"
BM25_DIR = "bm25"  # the BM25 index's folder inside the index directory
TOKENIZER_VERSION = f"gpuguide-bm25-4-{DEFAULT_STEMMER}"
_STOP = frozenset(STOPWORDS_EN) | frozenset(
    """
    about above after again against all am any anyone anything because been before being below between both can
    cannot could did do does doing done down during each else ever every few from further get gets getting got
    had has have having he her here hers herself him himself his how however i i'd i'll i'm i've its itself just
    let like may me might more most much must my myself need nor now off once only other ought our ours ourselves
    out over own please same shall she should so some someone something still than that's them themselves
    those through too under until up upon us using use very want wants we were what what's when where whether
    which while who whom whose why would you your yours yourself yourselves
    """.split()
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_ACRONYM_PLURAL = re.compile(r"^[A-Z]{2,}s$")
_KEEP_S = ("ss", "us", "is", "as")


_SUFFIXES = ("ations", "ation", "ings", "ions", "ing", "ion", "ers", "ies", "ied", "er", "ed", "es", "s", "e")


def _fold(token: str) -> str:
    """A light suffix stripper: identifiers with digits (E4M3, H100, tcgen05) and short stems are left alone."""
    if len(token) < 4 or any(ch.isdigit() for ch in token):
        return token
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            if suffix == "s" and token.endswith(_KEEP_S):
                continue
            stem = token[: -len(suffix)]
            return stem + "y" if suffix in ("ies", "ied") else stem
    return token


@lru_cache(maxsize=1)
def _snowball() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=65536)
def _stem(token: str) -> str:
    """Snowball English, except identifiers with digits (E4M3, H100, tcgen05) and words under 4 letters."""
    if len(token) < 4 or any(ch.isdigit() for ch in token):
        return token
    return _snowball().stemWord(token)


STEMMERS: dict[str, Callable[[str], str]] = {"snowball": _stem, "light": _fold, "none": lambda t: t}


def words(text: str) -> list[str]:
    """Lower-case surface forms the tokenizer would keep, before stemming (typo correction reads these)."""
    return _forms(text)


def _forms(text: str) -> list[str]:
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
            if low in _STOP or (len(low) == 1 and low.isalpha()):
                continue
            out.append(low)
    return out


def make_tokenizer(stemmer: str = "snowball") -> Callable[[str], list[str]]:
    """A tokenizer with the named folding (`snowball`, `light` or `none`)."""
    fold = STEMMERS[stemmer]
    return lambda text: [fold(form) for form in _forms(text)]


tokenize = make_tokenizer(DEFAULT_STEMMER)


class BM25Index:
    """Scores every row (chunk) for a query; rows are in docstore order, so masks line up."""

    def __init__(self, model: bm25s.BM25, n_docs: int, tokenizer: Callable[[str], list[str]] = tokenize) -> None:
        self.model = model
        self.n_docs = n_docs
        self.tokenizer = tokenizer

    @classmethod
    def build(cls, texts: list[str], tokenizer: Callable[[str], list[str]] = tokenize) -> BM25Index:
        model = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        tokens = [tokenizer(t) or [""] for t in texts]
        if texts:
            model.index(tokens, show_progress=False)
        return cls(model, len(texts), tokenizer)

    def vocabulary(self) -> set[str]:
        return set(getattr(self.model, "vocab_dict", {}) or {})

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row; zeros when no query term is in the vocabulary."""
        return self.token_scores(self.tokenizer(query))

    def token_scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every row for already tokenised terms (query expansions are scored this way)."""
        if self.n_docs == 0:
            return np.zeros(0, dtype=np.float32)
        ids = self.model.get_tokens_ids(tokens)
        if not ids:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self.model.get_scores_from_ids(ids), dtype=np.float32)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        if self.n_docs:
            self.model.save(str(directory), allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, n_docs: int) -> BM25Index:
        if n_docs == 0:
            return cls(bm25s.BM25(), 0)
        try:
            model = bm25s.BM25.load(str(directory), load_corpus=False, allow_pickle=False, mmap=False)
        except (OSError, ValueError, KeyError) as exc:
            raise IndexLoadError(f"the BM25 index in {directory} is corrupt ({exc.__class__.__name__}); {REBUILD_HINT}") from None
        if int(model.scores.get("num_docs", -1)) != n_docs:
            raise IndexLoadError(f"the BM25 index in {directory} does not match the chunk table; {REBUILD_HINT}")
        return cls(model, n_docs)
