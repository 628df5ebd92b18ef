"""The dense half of the index: a FAISS inner-product index with stable int64 ids, and its manifest.

Exact search (`IndexFlatIP`) up to `index.hnsw_threshold` vectors, HNSW above; both wrapped in `IndexIDMap2`
so each vector carries the id derived from its chunk id, which makes incremental add/remove possible (HNSW
cannot remove, so a removal there means a rebuild). Vectors are normalised, so inner product = cosine.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from core.files import atomic_write_text
from index.records import REBUILD_HINT, IndexLoadError
from core.settings import IndexSettings

log = logging.getLogger(__name__)

FAISS_FILE = "vectors.faiss"
MANIFEST_FILE = "manifest.json"
INDEX_FORMAT = 1
FLAT, HNSW = "flat", "hnsw"
# Below this many allowed vectors a filtered search scores them directly: exact, and HNSW's graph walk
# degrades when most nodes are filtered out.
DIRECT_SCORING_LIMIT = 4096


def vector_id(chunk_id: str) -> int:
    """A stable non-negative int64 FAISS id for a chunk id (first 63 bits of its sha256)."""
    return int.from_bytes(hashlib.sha256(chunk_id.encode()).digest()[:8], "big") & 0x7FFF_FFFF_FFFF_FFFF


def choose_index_type(n_vectors: int, settings: IndexSettings) -> str:
    return HNSW if n_vectors > settings.hnsw_threshold else FLAT


@contextmanager
def faiss_threads(n: int) -> Iterator[None]:
    """Run FAISS with `n` OpenMP threads: one query on 2 threads is ~10x slower than on 1 here."""
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


class VectorIndex:
    """Ids ↔ normalised vectors; `search` takes an optional allow-list so filters apply before ranking."""

    def __init__(self, index: faiss.Index, index_type: str, settings: IndexSettings) -> None:
        self.index = index
        self.index_type = index_type
        self.settings = settings
        if index_type == HNSW:
            faiss.downcast_index(index.index).hnsw.efSearch = settings.hnsw_ef_search

    @classmethod
    def new(cls, dim: int, index_type: str, settings: IndexSettings) -> VectorIndex:
        if index_type == HNSW:
            base = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            base.hnsw.efConstruction = settings.hnsw_ef_construction
        else:
            base = faiss.IndexFlatIP(dim)
        return cls(faiss.IndexIDMap2(base), index_type, settings)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def supports_remove(self) -> bool:
        return self.index_type == FLAT

    def ids(self) -> np.ndarray:
        return faiss.vector_to_array(self.index.id_map).astype(np.int64)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        if len(ids):
            self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), np.asarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> int:
        """Remove vectors by id (exact index only; HNSW cannot remove, the caller rebuilds instead)."""
        if not self.supports_remove:
            raise NotImplementedError("HNSW cannot remove vectors; rebuild the index")
        if not len(ids):
            return 0
        return int(self.index.remove_ids(np.asarray(ids, dtype=np.int64)))

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        return self.index.reconstruct_batch(np.asarray(ids, dtype=np.int64))

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None, threads: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids) of the k nearest vectors, restricted to `allowed` ids when given."""
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.int64)
            if len(allowed) == 0:
                return np.zeros(0, np.float32), np.zeros(0, np.int64)
            if len(allowed) <= DIRECT_SCORING_LIMIT:
                scores = self.vectors(allowed) @ query[0]
                top = np.argsort(-scores, kind="stable")[:k]
                return scores[top].astype(np.float32), allowed[top]
        k = min(k, self.ntotal)
        if k <= 0:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        params = None
        if allowed is not None:
            selector = faiss.IDSelectorBatch(allowed)
            if self.index_type == HNSW:
                params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self.settings.hnsw_ef_search, k))
            else:
                params = faiss.SearchParameters(sel=selector)
        elif self.index_type == HNSW and k > self.settings.hnsw_ef_search:
            params = faiss.SearchParametersHNSW(efSearch=k)
        with faiss_threads(threads):
            scores, ids = self.index.search(query, k, params=params)
        keep = ids[0] >= 0
        return scores[0][keep], ids[0][keep]

    def save(self, path: Path) -> None:
        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path, index_type: str, settings: IndexSettings) -> VectorIndex:
        try:
            index = faiss.read_index(str(path))
        except RuntimeError as exc:  # FAISS raises RuntimeError for truncated or garbage files
            detail = str(exc).strip().splitlines()[-1][:120] if str(exc).strip() else "unreadable"
            raise IndexLoadError(f"the vector index {path} is corrupt ({detail}); {REBUILD_HINT}") from None
        if not isinstance(index, faiss.IndexIDMap2):
            index = faiss.downcast_index(index)
        if not isinstance(index, faiss.IndexIDMap2):
            raise IndexLoadError(f"the vector index {path} has an unexpected layout; {REBUILD_HINT}")
        return cls(index, index_type, settings)


@dataclass
class Manifest:
    """What an index was built with; checked on load so a mismatch is a one-line error, not wrong answers."""

    model_id: str
    dimension: int
    normalized: bool
    chunker_version: str
    index_type: str
    chunks: int
    resources: int
    tokenizer: str
    built_at: float = field(default_factory=time.time)
    build_seconds: float = 0.0
    format: int = INDEX_FORMAT

    def write(self, directory: Path) -> None:
        atomic_write_text(directory / MANIFEST_FILE, json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST_FILE
        if not path.exists():
            raise IndexLoadError(f"no search index at {directory}; {REBUILD_HINT}")
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            known = cls.__dataclass_fields__
            return cls(**{k: v for k, v in data.items() if k in known})
        except (OSError, ValueError, TypeError) as exc:
            raise IndexLoadError(f"the index manifest {path} is corrupt ({exc.__class__.__name__}); {REBUILD_HINT}") from None

    def mismatch(self, model_id: str, chunker_version: str | None, tokenizer: str) -> str | None:
        """Why this index cannot serve the current configuration, or None when it can."""
        if self.format != INDEX_FORMAT:
            return f"index format {self.format}, this version reads {INDEX_FORMAT}"
        if self.model_id != model_id:
            return f"index built with embedding model {self.model_id}, settings select {model_id}"
        if not self.normalized:
            return "index holds unnormalised vectors"
        if chunker_version is not None and self.chunker_version != chunker_version:
            return f"index built from chunker {self.chunker_version}, the store holds chunker {chunker_version}"
        if self.tokenizer != tokenizer:
            return f"BM25 built with tokenizer {self.tokenizer}, this version uses {tokenizer}"
        return None
