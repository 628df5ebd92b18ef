"""Is the question inside what the reading list covers? One number per hit, comparable across queries.

Rank scores (RRF) say nothing about absolute relevance, so abstention reads this instead:

    confidence = cosine(query, hit's best passage)
               + 0.2 × lexical coverage (IDF share of the query's words found in the hit's passages and fields)
               + 0.15 if the hit matches strongly on its own fields (a catalog name in the query, most of its
                 title, or a rare GPU identifier in its title/note)
               − 0.1 × specialised words the corpus has never seen (at most 2)

A "specialised unknown word" is one neither in the corpus vocabulary, nor a typo of a word in it, nor an
ordinary English word (a whole word in the embedding model's WordPiece vocabulary): "Django", "cuFFT",
"Qualcomm". The weights were set on the dev set; the threshold is `index.abstain_threshold`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from index.bm25 import BM25Index, tokenize
from index.fields import FieldIndex, PreparedQuery
from index.records import ResourceHit

COVERAGE_WEIGHT = 0.2
STRONG_WEIGHT = 0.15
UNKNOWN_WEIGHT = 0.1
MAX_UNKNOWN = 2
RARE_IDENTIFIER_DF = 3  # an identifier named by at most this many catalog entries is distinctive
TITLE_COVERAGE_STRONG = 0.75
_RAW_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass
class ScopeEvidence:
    cosine: float
    coverage: float
    strong: bool
    unknown: int

    @property
    def confidence(self) -> float:
        return (
            self.cosine
            + COVERAGE_WEIGHT * self.coverage
            + STRONG_WEIGHT * self.strong
            - UNKNOWN_WEIGHT * min(self.unknown, MAX_UNKNOWN)
        )


class ScopeEstimator:
    def __init__(self, fields: FieldIndex, bm25: BM25Index, english_words: set[str] | None = None) -> None:
        self.fields = fields
        self.df = bm25.document_frequencies()
        self.n_docs = max(bm25.n_docs, 1)
        self.long_vocab = sorted(t for t in self.df if len(t) >= 4)
        self.english_words = english_words or set()
        self._position = {r.id: i for i, r in enumerate(fields.resources)}

    def idf(self, term: str) -> float:
        return math.log(1 + self.n_docs / (self.df.get(term, 0) + 0.5))

    def unknown_words(self, text: str) -> list[str]:
        """Specialised words of the query that nothing in the corpus mentions."""
        out = []
        for word in dict.fromkeys(w.lower() for w in _RAW_WORD.findall(text)):
            tokens = tokenize(word)
            if not tokens or tokens[0] in self.df or word in self.english_words:
                continue
            if len(tokens[0]) >= 4 and process.extractOne(tokens[0], self.long_vocab, scorer=fuzz.ratio, score_cutoff=80):
                continue  # a typo of a corpus word
            out.append(word)
        return out

    def evidence(self, prepared: PreparedQuery, hit: ResourceHit, cosine: float, unknown: int) -> ScopeEvidence:
        """`cosine` is the hit's best passage's cosine to the query; `unknown` counts `unknown_words`."""
        terms = prepared.terms
        total = sum(self.idf(t) for t in terms) or 1.0
        resource = hit.resource
        seen = set(tokenize(f"{resource.title} {resource.note} {resource.authors}"))
        for chunk, _ in hit.passages:
            seen.update(tokenize(chunk.indexed_text))
        coverage = sum(self.idf(t) for t in terms & seen) / total
        return ScopeEvidence(
            cosine=cosine,
            coverage=coverage,
            strong=self._strong(prepared, resource.id),
            unknown=unknown,
        )

    def _strong(self, prepared: PreparedQuery, resource_id: str) -> bool:
        index = self._position.get(resource_id)
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
