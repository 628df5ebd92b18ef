"""Is the question inside what the reading list covers? Two answers, for two uses.

Per hit, `confidence` (shown next to each result) is the cosine of the query and the hit's best passage: a
plain, unfitted number that is comparable across queries.

Per search, the outcome ("answer" / "weak" / "out_of_scope"), judged from the whole result list rather than one
cosine: a logistic model over `SCOPE_FEATURES` (how close the dense top passages are and how peaked, whether BM25
and the dense retriever agree on the resources, how much of the query's own words the corpus and the top
passages know, specialised words nobody in the corpus uses, how much of the question's weight is in words the
guide's own entries use: its subjects, not words a page mentions in passing). Its weights live in the settings
(`index.scope_model`), fitted by `tools/calibrate_scope.py` on our synthetic in-scope questions and our own
out-of-scope questions with grouped cross-validation; the thresholds on its probability
(`index.abstain_threshold`, `index.weak_threshold`) come from the held-out folds of the same run.

A "specialised unknown word" is one that is neither in the corpus vocabulary, nor a typo of a word in it, nor
an ordinary English word (a whole word of the embedding model's WordPiece vocabulary): "Django", "cuFFT",
"Qualcomm".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
from rapidfuzz import fuzz, process

from core.logistic import logistic
from core.text import tokenize
from index.bm25 import BM25Index
from index.fields import FieldIndex, PreparedQuery
from index.records import ResourceHit
from core.records import Chunk

SCOPE_FEATURES = (
    "cos_top", "cos_top5", "cos_spread", "agreement", "known_share", "passage_cover", "unknown", "strong",
    "guide_cover",
)
MAX_UNKNOWN = 2
RARE_IDENTIFIER_DF = 3  # an identifier named by at most this many catalog entries is distinctive
TITLE_COVERAGE_STRONG = 0.75
AGREEMENT_DEPTH = 10  # resources compared between the BM25 and the dense top lists
COVER_DEPTH = 5  # top passages of each retriever read for the query's words
SPREAD_DEPTH = 20  # the dense list's n-th passage the top one is compared with
_RAW_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass
class ScopeFeatures:
    """Evidence over one search's whole result list that the guide covers the question; see `SCOPE_FEATURES`."""

    cos_top: float  # cosine of the best passage (dense, unfiltered)
    cos_top5: float  # mean best-passage cosine of the dense top 5 resources
    cos_spread: float  # best passage's cosine minus the SPREAD_DEPTH-th: a peak, not a flat list
    agreement: float  # share of the top AGREEMENT_DEPTH resources BM25 and dense agree on
    known_share: float  # share of the query's content words the corpus vocabulary holds
    passage_cover: float  # IDF-weighted share of the query's words found in one top passage (best of them)
    unknown: float  # specialised words nobody in the corpus uses (capped at MAX_UNKNOWN)
    strong: float  # 1 when a top hit matches on its own fields (catalog name, most of its title, a rare identifier)
    guide_cover: float = 0.0  # IDF-weighted share of the query's words the guide's own entries use (subject words)

    def values(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


def scope_logit(features: ScopeFeatures, weights: Mapping[str, float], intercept: float) -> float:
    """The scope model's log-odds that the question is inside the guide (a feature missing from `weights` is 0)."""
    values = features.values()
    return intercept + sum(w * values[name] for name, w in weights.items() if name in values)


def scope_probability(features: ScopeFeatures, weights: Mapping[str, float], intercept: float) -> float:
    z = scope_logit(features, weights, intercept)
    return logistic(z)


class ScopeEstimator:
    def __init__(self, fields: FieldIndex, bm25: BM25Index, english_words: set[str] | None = None) -> None:
        self.fields = fields
        self.tokenizer = getattr(bm25, "tokenizer", tokenize)
        self.vocabulary = bm25.vocabulary()
        self.long_vocab = sorted(t for t in self.vocabulary if len(t) >= 4)
        self.english_words = english_words or set()
        self._idf = _chunk_idf(bm25)
        self._idf_unseen = math.log(1 + 2 * max(bm25.n_docs, 1))
        self._token_ids: dict[str, int] = getattr(bm25.model, "vocab_dict", None) or {}
        self._postings = _postings(bm25)
        # The guide's own words: what its entries (title, note, topic, section, tags) are about. A page may
        # mention a word in passing (a spec table naming a display output); the list names its subjects.
        self.guide_terms = {
            t for r in fields.resources
            for t in self.tokenizer(" ".join([r.title, r.note, r.topic, r.section, *r.tags]))
        }

    def unknown_words(self, text: str) -> list[str]:
        """Specialised words of the query that nothing in the corpus mentions."""
        out = []
        for word in dict.fromkeys(w.lower() for w in _RAW_WORD.findall(text)):
            tokens = self.tokenizer(word)
            if not tokens or tokens[0] in self.vocabulary or word in self.english_words:
                continue
            if self._typo_of_known(tokens[0]):
                continue
            out.append(word)
        return out

    def _typo_of_known(self, token: str) -> bool:
        return len(token) >= 4 and process.extractOne(token, self.long_vocab, scorer=fuzz.ratio, score_cutoff=80) is not None

    def _contains(self, term: str, rows: np.ndarray, chunks: Sequence[Chunk]) -> np.ndarray:
        """Which of `rows` hold `term`: read from the BM25 postings (sorted row ids per token), so no passage is
        tokenized again; without postings, by tokenizing the passages."""
        if self._postings is None:
            return np.array([term in self.tokenizer(chunks[int(r)].indexed_text) for r in rows], dtype=np.float64)
        index = self._token_ids.get(term)
        indptr, indices = self._postings
        if index is None or index + 1 >= len(indptr):
            return np.zeros(len(rows))
        posting = indices[indptr[index] : indptr[index + 1]]
        at = np.minimum(np.searchsorted(posting, rows), max(len(posting) - 1, 0))
        return (posting[at] == rows).astype(np.float64) if len(posting) else np.zeros(len(rows))

    def idf(self, token: str) -> float:
        return self._idf.get(token, self._idf_unseen)

    def strong(self, prepared: PreparedQuery, resource_id: str) -> bool:
        index = self.fields.rows.get(resource_id)
        if index is None:
            return False
        if index in prepared.named[0]:
            return True
        title = self.fields.titles[index]
        title_total = sum(self.fields.idf(t) for t in title) or 1.0
        if sum(self.fields.idf(t) for t in title & prepared.terms) / title_total >= TITLE_COVERAGE_STRONG:
            return True
        note = self.fields.notes[index]
        return any(
            (t in title or t in note) and self.fields.df(t) <= RARE_IDENTIFIER_DF for t in prepared.intent.identifiers
        )

    def features(
        self,
        query: str,
        dense: tuple[np.ndarray, np.ndarray],
        bm25_scores: np.ndarray,
        resource_rows: np.ndarray,
        chunks: Sequence[Chunk],
        strong: bool,
    ) -> ScopeFeatures:
        """Features of one query from the unfiltered dense list (rows, cosines, best first), every row's BM25
        score, the row → resource map and the chunks; `strong` says whether a top hit matched on its fields."""
        d_rows, d_cos = dense
        b_order = np.argsort(-bm25_scores, kind="stable")
        b_rows = b_order[bm25_scores[b_order] > 0][: max(AGREEMENT_DEPTH * 10, 50)]
        dense_resources = _distinct(resource_rows[d_rows], AGREEMENT_DEPTH)
        bm25_resources = _distinct(resource_rows[b_rows], AGREEMENT_DEPTH)
        best_cos: dict[int, float] = {}
        for row, cos in zip(d_rows.tolist(), d_cos.tolist(), strict=True):
            best_cos.setdefault(int(resource_rows[row]), float(cos))
        top5 = list(best_cos.values())[:5]
        terms = list(dict.fromkeys(self.tokenizer(query)))
        known = [t for t in terms if t in self.vocabulary or self._typo_of_known(t)]
        total_idf = sum(self.idf(t) for t in terms)
        cover = 0.0
        if terms and total_idf > 0:
            top = np.array(list(dict.fromkeys(int(r) for r in [*d_rows[:COVER_DEPTH], *b_rows[:COVER_DEPTH]])), dtype=np.int64)
            found = np.zeros(len(top))
            for term in terms:
                found += self.idf(term) * self._contains(term, top, chunks)
            cover = float(found.max()) / total_idf if len(top) else 0.0
        guide = sum(self.idf(t) for t in terms if t in self.guide_terms) / total_idf if total_idf > 0 else 0.0
        cos_top = float(d_cos[0]) if len(d_cos) else 0.0
        tail = float(d_cos[min(SPREAD_DEPTH, len(d_cos)) - 1]) if len(d_cos) else 0.0
        return ScopeFeatures(
            cos_top=cos_top,
            cos_top5=float(np.mean(top5)) if top5 else 0.0,
            cos_spread=cos_top - tail,
            agreement=len(set(dense_resources) & set(bm25_resources)) / AGREEMENT_DEPTH,
            known_share=len(known) / len(terms) if terms else 0.0,
            passage_cover=cover,
            unknown=float(min(len(self.unknown_words(query)), MAX_UNKNOWN)),
            strong=float(strong),
            guide_cover=guide,
        )


def _distinct(groups: np.ndarray, n: int) -> list[int]:
    """The first n distinct resources of a row list's resource ids (chunks outside the catalog skipped)."""
    out: list[int] = []
    for g in groups.tolist():
        if g >= 0 and g not in out:
            out.append(int(g))
            if len(out) == n:
                break
    return out


def _postings(bm25: BM25Index) -> tuple[np.ndarray, np.ndarray] | None:
    """The BM25 model's (indptr, row ids) per token id, with a closing offset; None when it has none."""
    scores = getattr(bm25.model, "scores", None) or {}
    if bm25.n_docs == 0 or "indptr" not in scores or "indices" not in scores:
        return None
    indptr = np.asarray(scores["indptr"], dtype=np.int64)
    indices = np.asarray(scores["indices"], dtype=np.int64)
    if indptr[-1] != len(indices):
        indptr = np.append(indptr, len(indices))
    return indptr, indices


def _chunk_idf(bm25: BM25Index) -> dict[str, float]:
    """Per-token IDF over chunks, read from the BM25 model's postings (no second pass over the corpus)."""
    postings = _postings(bm25)
    vocab: dict[str, int] = getattr(bm25.model, "vocab_dict", None) or {}
    if postings is None or not vocab:
        return {}
    df = np.diff(postings[0])
    n = max(bm25.n_docs, 1)
    return {token: math.log(1 + n / max(int(df[i]), 1)) for token, i in vocab.items() if i < len(df)}
