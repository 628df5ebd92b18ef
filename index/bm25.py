"""The lexical half of the index: BM25 (bm25s) over each chunk's `indexed_text`, saved as JSON + .npy.

Terms come from the project's one tokenizer, `core.text.tokenize` (identifiers kept whole, camel-case and
hyphenated names split and joined, Snowball English stems, the shared stop words); the index records
`TOKENIZER_VERSION`, so a tokenizer change asks for a rebuild. tools/tune_retrieval.py compares it with the
earlier light suffix stripper and with no folding on the synthetic questions' held-out folds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

import bm25s
import numpy as np

from core.text import TOKENIZER_VERSION as TEXT_VERSION
from core.text import tokenize
from index.records import REBUILD_HINT, IndexLoadError

log = logging.getLogger(__name__)
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every index build at DEBUG

BM25_DIR = "bm25"  # the BM25 index's folder inside the index directory
TOKENIZER_VERSION = f"bm25-5:{TEXT_VERSION}"

__all__ = ["BM25_DIR", "TOKENIZER_VERSION", "BM25Index", "tokenize"]


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

    def document_share(self, terms: Iterable[str]) -> dict[str, float]:
        """The share of rows that hold each term (0.0 for one no row holds): how particular a word is to a few
        pages of this corpus."""
        vocab = getattr(self.model, "vocab_dict", {}) or {}
        indptr = self.model.scores["indptr"] if self.n_docs else None
        out = {}
        for term in terms:
            tid = vocab.get(term)
            out[term] = 0.0 if tid is None or indptr is None else float(indptr[tid + 1] - indptr[tid]) / self.n_docs
        return out

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
