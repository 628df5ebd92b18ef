"""Second stage over the fused candidates, behind one interface: `rerank(query, hits) -> hits`.

* `FieldReranker` (default): the fused score plus evidence the first stage cannot see — the query's words
  (and the corpus's short/long forms of them, index/aliases.py) in a resource's title, typos tolerated, GPU
  identifiers (TMA, E4M3) in its title or note, and catalog names — and the query's constraints: "papers only", "no repos", "anything by X,
  only his stuff" move non-matching resources below matching ones (kept, so a list still has k entries).
* `CrossEncoderReranker`: a sentence-transformers CrossEncoder folder (`index.rerank_model_path`) scoring
  (query, best passage) pairs; the same constraints apply.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

from index.fields import FieldEvidence, FieldIndex, PreparedQuery
from index.records import ResourceHit
from core.settings import IndexSettings, Settings

log = logging.getLogger(__name__)
_DEFAULTS = IndexSettings.model_fields


class Reranker(Protocol):
    def rerank(self, query: str, hits: list[ResourceHit]) -> list[ResourceHit]: ...


@dataclass(frozen=True)
class RerankWeights:
    """How much each kind of evidence adds to the fused score (normalised so the top candidate has 1.0).
    Defaults come from `index.rerank_title`, `index.rerank_identifiers`, `index.rerank_named`, chosen by
    grouped cross-validation on the synthetic questions (tools/tune_retrieval.py)."""

    title: float = _DEFAULTS["rerank_title"].default
    identifiers: float = _DEFAULTS["rerank_identifiers"].default
    named: float = _DEFAULTS["rerank_named"].default

    @classmethod
    def from_settings(cls, settings: Settings) -> RerankWeights:
        cfg = settings.index
        return cls(title=cfg.rerank_title, identifiers=cfg.rerank_identifiers, named=cfg.rerank_named)

    def score(self, fused: float, ev: FieldEvidence) -> float:
        """The reranked score of one candidate: its normalised fused score plus weighted evidence."""
        return fused + self.title * ev.title + self.identifiers * ev.identifiers + self.named * ev.named


def satisfies(prepared: PreparedQuery, fields: FieldIndex, index: int) -> bool:
    """Whether a resource meets the query's explicit constraints (kinds only / excluded, only-this-author)."""
    intent = prepared.intent
    kind = fields.resources[index].kind
    if intent.kinds_only and kind not in intent.kinds_only:
        return False
    if kind in intent.kinds_excluded:
        return False
    named, only = prepared.named
    return not (only and index not in named)


def _constrained(scored: list[tuple[bool, float, ResourceHit]]) -> list[ResourceHit]:
    scored.sort(key=lambda t: (not t[0], -t[1]))
    return [replace(hit, score=score) for _, score, hit in scored]


PREPARED_CACHE = 256  # parsed queries remembered: parsing is a third of a warm search, and queries repeat


class FieldReranker:
    def __init__(self, fields: FieldIndex, weights: RerankWeights | None = None) -> None:
        self.fields = fields
        self.weights = weights or RerankWeights()
        self._prepared: dict[str, PreparedQuery] = {}

    def prepared(self, query: str) -> PreparedQuery:
        """The query parsed against the catalog's fields (remembered for the last PREPARED_CACHE queries)."""
        found = self._prepared.get(query)
        if found is None:
            found = self.fields.prepare(self.fields.parse(query))
            if len(self._prepared) >= PREPARED_CACHE:
                self._prepared.pop(next(iter(self._prepared)))
            self._prepared[query] = found
        return found

    def clear_cache(self) -> None:
        self._prepared.clear()

    def rerank(self, query: str, hits: list[ResourceHit]) -> list[ResourceHit]:
        if not hits:
            return hits
        prepared = self.prepared(query)
        top = max(h.score for h in hits) or 1.0
        scored = []
        for hit in hits:
            index = self.fields.rows.get(hit.resource.id)
            if index is None:
                scored.append((True, hit.score / top, hit))
                continue
            score = self.weights.score(hit.score / top, self.fields.evidence(prepared, index))
            scored.append((satisfies(prepared, self.fields, index), score, hit))
        return _constrained(scored)


class CrossEncoderReranker:
    """A local CrossEncoder over (query, best passages); the query's constraints still apply."""

    def __init__(self, model_path: str, fields: FieldIndex) -> None:
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(model_path, local_files_only=True)
        self.fields = fields

    def rerank(self, query: str, hits: list[ResourceHit]) -> list[ResourceHit]:
        if not hits:
            return hits
        pairs = [(query, hit.passages[0][0].indexed_text if hit.passages else hit.resource.title) for hit in hits]
        scores = self.model.predict(pairs, show_progress_bar=False)
        prepared = self.fields.prepare(self.fields.parse(query))
        scored = []
        for hit, score in zip(hits, scores, strict=True):
            index = self.fields.rows.get(hit.resource.id)
            ok = index is None or satisfies(prepared, self.fields, index)
            scored.append((ok, float(score), hit))
        return _constrained(scored)


def make_reranker(settings: Settings, fields: FieldIndex) -> Reranker:
    if settings.index.rerank_model_path:
        return CrossEncoderReranker(settings.index.rerank_model_path, fields)
    return FieldReranker(fields, RerankWeights.from_settings(settings))
