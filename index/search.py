"""Searching a built index: filters first, then BM25 and/or dense retrieval, fusion, rerank, resource hits.

Filters (tier, topic, kind, already-read) restrict the candidate rows before any ranking: dense search gets
an allow-list of FAISS ids and BM25 scores are masked, so a filter never empties a top-k that was cut first.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from index.aliases import AliasTable
from index.bm25 import BM25_DIR, TOKENIZER_VERSION, BM25Index
from index.docstore import DOCSTORE_FILE, DocStore
from index.embed import Embedder
from index.fields import FieldIndex
from index.hybrid import aggregate, ranked, rrf_rows, top_rows
from index.query import parse_query
from index.records import MODES, REBUILD_HINT, IndexLoadError, ResourceHit
from index.rerank import Reranker, make_reranker
from index.scope import ScopeEstimator, ScopeFeatures, scope_probability
from index.swap import recover_interrupted_swap
from index.typos import TypoCorrector, load_words
from index.vectors import FAISS_FILE, Manifest, VectorIndex
from core.errors import UserError
from core.records import CHUNKER_VERSION, Chunk, Resource
from core.settings import Settings
from core.urls import url_key

log = logging.getLogger(__name__)

ABSTAIN_DEPTH = 5  # a field match among this many top hits counts as scope evidence
SCOPE_DEPTH = 100  # dense passages the scope model reads
SCOPE_CACHE = 256  # queries whose scope features are remembered


@dataclass(frozen=True)
class RetrievalQuery:
    """What the retrievers read for one query: its text with typos corrected, and the corpus's short/long
    forms of its wording (index/aliases.py) as extra BM25 tokens and text."""

    text: str
    expansion_tokens: tuple[str, ...] = ()
    expansion_text: str = ""


class Searcher:
    """A loaded index: knows the catalog, the chunks, both retrievers and the reranker."""

    def __init__(
        self,
        settings: Settings,
        manifest: Manifest,
        store: DocStore,
        vectors: VectorIndex,
        bm25: BM25Index,
        embedder: Embedder,
        reranker: Reranker | None = None,
        aliases: AliasTable | None = None,
        words: Counter[str] | None = None,
    ) -> None:
        self.settings = settings
        self.manifest = manifest
        self.store = store
        self.vectors = vectors
        self.bm25 = bm25
        self.embedder = embedder
        self.aliases = aliases if aliases is not None else AliasTable()
        self.words = words if words is not None else Counter()
        self.fields = FieldIndex(store.resource_list, self.aliases)
        self._typos: TypoCorrector | None = None
        self._retrieval_queries: dict[str, RetrievalQuery] = {}
        self._scope: ScopeEstimator | None = None
        self._scope_cache: dict[str, ScopeFeatures] = {}
        self.reranker = reranker if reranker is not None else make_reranker(settings, self.fields)

    # --- catalog -------------------------------------------------------------------------------

    @property
    def resources(self) -> list[Resource]:
        return self.store.resource_list

    @property
    def chunks(self) -> list[Chunk]:
        return self.store.chunks

    def resource_ids(self, keys: Iterable[str]) -> set[str]:
        """Resource ids for a mix of ids and URLs (how a user's read list may name them)."""
        wanted = {url_key(k) for k in keys}
        return {r.id for r in self.resources if r.id.lower() in wanted or url_key(r.url) in wanted}

    # --- filtering -----------------------------------------------------------------------------

    def row_mask(
        self,
        tier: int | None = None,
        topic: str | None = None,
        kind: str | None = None,
        exclude_read: set[str] | None = None,
    ) -> np.ndarray | None:
        """Which chunk rows may be ranked at all; None when nothing is filtered."""
        if tier is None and not topic and not kind and not exclude_read:
            return None
        read = self.resource_ids(exclude_read or ())
        allowed = np.array(
            [
                (tier is None or r.tier == tier)
                and (not topic or topic.lower() in r.topic.lower())
                and (not kind or r.kind == kind.lower())
                and r.id not in read
                for r in self.resources
            ]
            + [False],  # index -1: chunks whose resource is not in the catalog are never allowed when filtering
            dtype=bool,
        )
        return allowed[self.store.resource_rows]

    # --- retrieval -----------------------------------------------------------------------------

    def n_chunks(self) -> int:
        """How many chunks the dense and BM25 lists each fetch before fusion."""
        return min(len(self.store.chunks), max(self.settings.index.candidates * 10, 500))

    def clear_caches(self) -> None:
        """Forget cached query parses and scope features, so a benchmark times the full path each pass."""
        self._retrieval_queries.clear()
        self._scope_cache.clear()
        forget = getattr(self.reranker, "clear_cache", None)
        if forget is not None:
            forget()

    def use_query_parses(self, parses: dict[str, RetrievalQuery]) -> None:
        """Parse queries into `parses` from now on: a tuner keeps one cache per tokenizer configuration, since
        a query's expansion tokens depend on it."""
        self._retrieval_queries = parses

    def query_vector(self, query: str) -> np.ndarray:
        return self.embedder.embed_query(query)

    def dense_rows(self, query: str, n: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        allowed = None if mask is None else self.store.vids[mask]
        scores, vids = self.vectors.search(
            self.query_vector(query), n, allowed, threads=self.settings.index.search_threads
        )
        return self.store.rows_of_vids(np.asarray(vids, dtype=np.int64)), scores

    def bm25_rows(self, query: str, n: int, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        scores = self.bm25.scores(query)
        rows = top_rows(scores, n, mask, positive_only=True)
        return rows, scores[rows]

    def cosine(self, query: str, rows: np.ndarray) -> np.ndarray:
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.vectors.vectors(self.store.vids[rows]) @ self.query_vector(query)

    @property
    def typos(self) -> TypoCorrector:
        if self._typos is None:
            english = self.embedder.english_words()
            self.fields.common_words = english
            self._typos = TypoCorrector(self.words, english, self.settings.index.typo_min_len)
        return self._typos

    def retrieval_query(self, query: str) -> RetrievalQuery:
        """The corrected text and expansions of `query` (remembered for repeated queries)."""
        found = self._retrieval_queries.get(query)
        if found is not None:
            return found
        cfg = self.settings.index
        text = self.typos.correct(query)[0] if cfg.typo_correction else query
        forms = self.aliases.expand(text, self.fields.common_words)
        own = set(self.bm25.tokenizer(text))
        tokens = tuple(t for t in dict.fromkeys(self.bm25.tokenizer(" ".join(forms))) if t not in own)
        found = RetrievalQuery(text=text, expansion_tokens=tokens, expansion_text=" ".join(forms))
        if len(self._retrieval_queries) >= 1024:
            self._retrieval_queries.clear()
        self._retrieval_queries[query] = found
        return found

    def expanded_bm25_scores(self, rq: RetrievalQuery) -> np.ndarray:
        """BM25 of the corrected text plus `index.expansion_weight` × BM25 of the expansion tokens."""
        scores = self.bm25.scores(rq.text)
        weight = self.settings.index.expansion_weight
        if weight > 0 and rq.expansion_tokens:
            scores = scores + weight * self.bm25.token_scores(list(rq.expansion_tokens))
        return scores

    def dense_text(self, rq: RetrievalQuery) -> str:
        if self.settings.index.dense_expansion and rq.expansion_text:
            return f"{rq.text} ({rq.expansion_text})"
        return rq.text

    def chunk_scores(
        self, query: str, mode: str, mask: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
        """Rows and their scores for the mode (cosine, BM25, or fused RRF; rows in the order they were first
        ranked), and the cosines known so far."""
        n = self.n_chunks()
        rq = self.retrieval_query(query)
        cos: dict[int, float] = {}
        if mode != "bm25":
            d_rows, d_scores = self.dense_rows(self.dense_text(rq), n, mask)
            cos = dict(zip(d_rows.tolist(), d_scores.tolist(), strict=True))
            if mode == "dense":
                return d_rows, np.asarray(d_scores, dtype=np.float64), cos
        scores = self.expanded_bm25_scores(rq)
        b_rows = top_rows(scores, n, mask, positive_only=True)
        if mode == "bm25":
            return b_rows, np.asarray(scores[b_rows], dtype=np.float64), cos
        cfg = self.settings.index
        rows, fused = rrf_rows([(d_rows, cfg.dense_weight), (b_rows, cfg.bm25_weight)], k=cfg.rrf_k)
        return rows, fused, cos

    def search(
        self,
        query: str,
        k: int = 10,
        mode: str = "hybrid+rerank",
        tier: int | None = None,
        topic: str | None = None,
        kind: str | None = None,
        exclude_read: set[str] | None = None,
    ) -> list[ResourceHit]:
        """The k best resources for `query`, each with its best passages; filters apply before ranking."""
        if mode not in MODES:
            raise UserError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        if not query.strip() or not self.store.chunks:
            return []
        mask = self.row_mask(tier, topic, kind, exclude_read)
        rows, scores, cos = self.chunk_scores(query, mode, mask)
        cfg = self.settings.index
        resource_scores = aggregate(rows, scores, self.store.resource_rows, cfg.fusion_passages, cfg.fusion_decay)
        depth = max(k, self.settings.index.candidates) if mode == "hybrid+rerank" else k
        order = ranked(resource_scores)[:depth]
        if len(order) < depth:  # fewer matches than asked (BM25 scores only matching words): pad, unranked
            order += self.unmatched_resources(set(order), mask)[: depth - len(order)]
            resource_scores = {**{g: 0.0 for g in order}, **resource_scores}
        rq = self.retrieval_query(query)
        hits = self._resource_hits(self.dense_text(rq), order, resource_scores, rows, scores, cos)
        if mode == "hybrid+rerank":
            hits = self.reranker.rerank(rq.text, hits)
        return self._with_scope(query, hits[:k])

    def unmatched_resources(self, seen: set[int], mask: np.ndarray | None) -> list[int]:
        """Allowed resources (with at least one chunk) that no retriever scored, in list order."""
        rows = np.arange(len(self.store.chunks)) if mask is None else np.flatnonzero(mask)
        groups = dict.fromkeys(int(g) for g in self.store.resource_rows[rows] if g >= 0)
        return [g for g in groups if g not in seen]

    def _resource_hits(
        self,
        query: str,
        order: list[int],
        resource_scores: dict[int, float],
        rows: np.ndarray,
        scores: np.ndarray,
        cos: dict[int, float],
    ) -> list[ResourceHit]:
        """Group passages under their resources (best first, ties in ranking order); confidence is (for now)
        the best passage's cosine."""
        per_resource: dict[int, list[int]] = {g: [] for g in order}
        chunk_scores: dict[int, float] = {}
        by_score = np.argsort(-scores, kind="stable")
        groups = self.store.resource_rows[rows[by_score]]
        wanted = np.isin(groups, np.fromiter(per_resource, dtype=np.int64, count=len(per_resource)))
        limit = self.settings.index.passages_per_resource
        for i, group in zip(by_score[wanted].tolist(), groups[wanted].tolist(), strict=True):
            if len(per_resource[group]) < limit:
                row = int(rows[i])
                per_resource[group].append(row)
                chunk_scores[row] = float(scores[i])
        missing = np.array([r for picked in per_resource.values() for r in picked if r not in cos], dtype=np.int64)
        if len(missing):
            cos = {**cos, **dict(zip(missing.tolist(), self.cosine(query, missing).tolist(), strict=True))}
        hits = []
        for group in order:
            picked = per_resource[group]
            hits.append(
                ResourceHit(
                    resource=self.store.resource_list[group],
                    score=float(resource_scores[group]),
                    passages=[(self.store.chunks[r], chunk_scores[r]) for r in picked],
                    confidence=max((float(cos[r]) for r in picked), default=0.0),
                )
            )
        return hits

    @property
    def scope(self) -> ScopeEstimator:
        if self._scope is None:
            self._scope = ScopeEstimator(self.fields, self.bm25, self.embedder.english_words())
        return self._scope

    def _with_scope(self, query: str, hits: list[ResourceHit]) -> list[ResourceHit]:
        """Mark each hit with the query that found it (so `outcome(None, hits)` can judge them)."""
        for hit in hits:
            hit.query = query
        return hits

    def scope_features(self, query: str, hits: list[ResourceHit]) -> ScopeFeatures:
        """The scope model's evidence for `query`: the unfiltered BM25 and dense lists (filters narrow what is
        shown, not what the guide covers) plus whether one of `hits` matches on its own fields."""
        base = self._scope_cache.get(query)
        if base is None:
            text = self.retrieval_query(query).text  # typos corrected, as the retrievers read it
            depth = min(len(self.store.chunks), max(SCOPE_DEPTH, self.settings.index.candidates))
            base = self.scope.features(
                text, self.dense_rows(text, depth, None), self.bm25.scores(text), self.store.resource_rows,
                self.store.chunks, strong=False,
            )
            if len(self._scope_cache) >= SCOPE_CACHE:
                self._scope_cache.pop(next(iter(self._scope_cache)))
            self._scope_cache[query] = base
        prepared = self.fields.prepare(parse_query(query))
        strong = any(self.scope.strong(prepared, h.resource.id) for h in hits[:ABSTAIN_DEPTH])
        return replace(base, strong=float(strong))

    def scope_probability(self, query: str, hits: list[ResourceHit]) -> float:
        """The scope model's probability that the guide covers `query` (index/scope.py)."""
        cfg = self.settings.index
        return scope_probability(self.scope_features(query, hits), cfg.scope_weights, cfg.scope_intercept)

    def outcome(self, query: str | None, hits: list[ResourceHit]) -> str:
        """One of OUTCOMES for these hits of `query`: "answer", "weak" (answer, marked as a weak match, nearest
        resources shown) or "out_of_scope" (nothing in the guide is near: the only case worth refusing).
        `query` may be None for hits that came from `search` (they remember their query)."""
        query = query if query is not None else (hits[0].query if hits else "")
        if not hits:
            return "out_of_scope"
        if not query.strip():  # hits built elsewhere, no query to judge: show them, never refuse blind
            return "weak"
        probability = self.scope_probability(query, hits)
        cfg = self.settings.index
        if probability < cfg.abstain_threshold:
            return "out_of_scope"
        return "weak" if probability < cfg.weak_threshold else "answer"

    def abstains(self, hits: list[ResourceHit], query: str | None = None) -> bool:
        """True iff `outcome` says out of scope (the query defaults to the one the hits remember)."""
        return self.outcome(query, hits) == "out_of_scope"


def load_searcher(settings: Settings, embedder: Embedder | None = None, reranker: Reranker | None = None) -> Searcher:
    """Open the index in `settings.index_dir`; any problem is one IndexLoadError line naming the fix."""
    directory: Path = settings.index_dir
    recover_interrupted_swap(directory)
    manifest = Manifest.read(directory)
    embedder = embedder or Embedder(settings)
    why = manifest.mismatch(embedder.model_id, _comparable_chunker(manifest), TOKENIZER_VERSION)
    if why:
        raise IndexLoadError(f"{why}; {REBUILD_HINT}")
    store = DocStore.read(directory / DOCSTORE_FILE)
    vectors = VectorIndex.load(directory / FAISS_FILE, manifest.index_type, settings.index)
    if vectors.ntotal != len(store.chunks) or vectors.dim != manifest.dimension:
        raise IndexLoadError(
            f"the vector index holds {vectors.ntotal} vectors of {vectors.dim} dims, the manifest says "
            f"{len(store.chunks)} of {manifest.dimension}; {REBUILD_HINT}"
        )
    bm25 = BM25Index.load(directory / BM25_DIR, len(store.chunks))
    aliases, words = AliasTable.load(directory), load_words(directory)
    return Searcher(settings, manifest, store, vectors, bm25, embedder, reranker, aliases, words)


def _comparable_chunker(manifest: Manifest) -> str | None:
    """The chunker version to hold the index to: only when both sides know one."""
    if manifest.chunker_version in ("", "unknown"):
        return None
    return CHUNKER_VERSION
