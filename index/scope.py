"""Is the question inside what the reading list covers? One number per hit, comparable across queries.

Rank scores (RRF) say nothing about absolute relevance, so abstention reads this instead:

    confidence = cosine(query, the hit's best passage)
               + 0.2 if the hit matches strongly on its own fields: a catalog name in the query (author,
                 publisher), most of its title (typos and spacing tolerated), or a GPU identifier that at
                 most 3 catalog entries mention (E4M3, tcgen05) in its title or note
               − 0.1 × specialised words the corpus has never seen (at most 2)

A "specialised unknown word" is one that is neither in the corpus vocabulary, nor a typo of a word in it, nor
an ordinary English word (a whole word of the embedding model's WordPiece vocabulary): "Django", "cuFFT",
"Qualcomm". Weights and the threshold (`index.abstain_threshold`) were set on the dev set over the real corpus;
a lexical-coverage term was tried and dropped (it raised out-of-scope questions as much as in-scope ones).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from index.bm25 import BM25Index, tokenize
from index.fields import FieldIndex, PreparedQuery
from index.records import ResourceHit

STRONG_WEIGHT = 0.2
UNKNOWN_WEIGHT = 0.1
MAX_UNKNOWN = 2
RARE_IDENTIFIER_DF = 3  # an identifier named by at most this many catalog entries is distinctive
TITLE_COVERAGE_STRONG = 0.75
_RAW_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass
class ScopeEvidence:
    cosine: float
    strong: bool
    unknown: int

    @property
    def confidence(self) -> float:
        return self.cosine + STRONG_WEIGHT * self.strong - UNKNOWN_WEIGHT * min(self.unknown, MAX_UNKNOWN)


class ScopeEstimator:
    def __init__(self, fields: FieldIndex, bm25: BM25Index, english_words: set[str] | None = None) -> None:
        self.fields = fields
        self.vocabulary = bm25.vocabulary()
        self.long_vocab = sorted(t for t in self.vocabulary if len(t) >= 4)
        self.english_words = english_words or set()
        self._position = {r.id: i for i, r in enumerate(fields.resources)}

    def unknown_words(self, text: str) -> list[str]:
        """Specialised words of the query that nothing in the corpus mentions."""
        out = []
        for word in dict.fromkeys(w.lower() for w in _RAW_WORD.findall(text)):
            tokens = tokenize(word)
            if not tokens or tokens[0] in self.vocabulary or word in self.english_words:
                continue
            if len(tokens[0]) >= 4 and process.extractOne(tokens[0], self.long_vocab, scorer=fuzz.ratio, score_cutoff=80):
                continue  # a typo of a corpus word
            out.append(word)
        return out

    def evidence(self, prepared: PreparedQuery, hit: ResourceHit, cosine: float, unknown: int) -> ScopeEvidence:
        """`cosine` is the hit's best passage's cosine to the query; `unknown` counts `unknown_words`."""
        return ScopeEvidence(cosine=cosine, strong=self.strong(prepared, hit.resource.id), unknown=unknown)

    def strong(self, prepared: PreparedQuery, resource_id: str) -> bool:
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
