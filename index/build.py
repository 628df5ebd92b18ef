"""Building the index: embed (through the cache), FAISS, BM25, chunk table, the corpus's short/long forms
(`aliases.json`) and word counts (`words.json`, for typo correction), manifest — then swap into place.

A build reuses the previous index when it was made with the same model, chunker and index type: only new or
changed chunks are embedded and added, and deleted or changed ones removed (a removal from HNSW, which cannot
remove, means re-adding every vector — still no re-encoding, the cache holds them). Everything is written to a
temporary directory beside the index and renamed into place, so an interrupted build leaves the old index.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import numpy as np

from index.aliases import mine_aliases
from index.bm25 import BM25_DIR, TOKENIZER_VERSION, BM25Index
from index.docstore import DOCSTORE_FILE, DocStore
from index.embed import Embedder
from index.records import BuildReport, IndexLoadError
from index.swap import new_build_dir, recover_interrupted_swap, swap_into_place
from index.typos import count_words, save_words
from index.vectors import FAISS_FILE, Manifest, VectorIndex, choose_index_type
from core.records import CHUNKER_VERSION, Chunk, Resource
from core.settings import Settings

log = logging.getLogger(__name__)


def _unique(chunks: list[Chunk]) -> list[Chunk]:
    seen: set[str] = set()
    out = []
    for chunk in chunks:
        if chunk.chunk_id in seen:
            log.warning("duplicate chunk id %s indexed once", chunk.chunk_id)
            continue
        seen.add(chunk.chunk_id)
        out.append(chunk)
    return out


def _previous(
    target: Path, settings: Settings, model_id: str, chunker: str, index_type: str
) -> tuple[VectorIndex, dict[int, str]] | str:
    """The old vectors and their content hashes by id, or the reason they cannot be reused."""
    recover_interrupted_swap(target)
    try:
        manifest = Manifest.read(target)
        why = manifest.mismatch(model_id, chunker, TOKENIZER_VERSION)
        if why:
            return why
        if manifest.index_type != index_type:
            return f"index type changes from {manifest.index_type} to {index_type}"
        old = DocStore.read(target / DOCSTORE_FILE)
        vectors = VectorIndex.load(target / FAISS_FILE, manifest.index_type, settings.index)
    except IndexLoadError as exc:
        return str(exc)
    if vectors.ntotal != len(old.chunks):
        return "previous index is inconsistent"
    return vectors, dict(zip(old.vids.tolist(), old.hashes, strict=True))


def build_index(
    chunks: list[Chunk],
    resources: list[Resource],
    settings: Settings,
    rebuild: bool = False,
    chunker_version: str | None = None,
    embedder: Embedder | None = None,
) -> BuildReport:
    """Index `chunks` (with the catalog `resources`) into `settings.index_dir`, incrementally unless `rebuild`."""
    started = time.perf_counter()
    target = settings.index_dir
    chunks = _unique(chunks)
    embedder = embedder or Embedder(settings)
    chunker = chunker_version or CHUNKER_VERSION
    store = DocStore.from_records(chunks, resources)
    index_type = choose_index_type(len(chunks), settings.index)
    texts = [c.indexed_text for c in chunks]
    encoded_before = embedder.encoded
    previous: tuple[VectorIndex, dict[int, str]] | str = (
        "rebuild requested" if rebuild else _previous(target, settings, embedder.model_id, chunker, index_type)
    )
    added = removed = 0
    build_dir = new_build_dir(target)
    try:
        vectors: VectorIndex | None = None
        reason = previous if isinstance(previous, str) else ""
        if not isinstance(previous, str):
            vectors, old_hashes = previous
            new_hashes = dict(zip(store.vids.tolist(), store.hashes, strict=True))
            stale = [v for v, h in old_hashes.items() if new_hashes.get(v) != h]
            fresh_rows = [i for i, v in enumerate(store.vids.tolist()) if old_hashes.get(v) != store.hashes[i]]
            if stale and not vectors.supports_remove:
                vectors, reason = None, "HNSW cannot remove vectors"
            else:
                removed = vectors.remove(np.array(stale, dtype=np.int64))
                if fresh_rows:
                    new_vecs = embedder.embed_documents([texts[i] for i in fresh_rows])
                    vectors.add(store.vids[fresh_rows], new_vecs)
                added = len(fresh_rows)
        if vectors is None:
            log.info("full index build (%s)", reason or "no previous index")
            all_vecs = embedder.embed_documents(texts) if texts else np.zeros((0, embedder.dimension), np.float32)
            vectors = VectorIndex.new(all_vecs.shape[1], index_type, settings.index)
            vectors.add(store.vids, all_vecs)
            added, removed = len(chunks), 0
        vectors.save(build_dir / FAISS_FILE)
        store.write(build_dir / DOCSTORE_FILE)
        BM25Index.build(texts).save(build_dir / BM25_DIR)
        titles = [r.title for r in resources]
        catalog_texts = titles + [r.note for r in resources]
        mine_aliases([c.text for c in chunks] + catalog_texts, titles).save(build_dir)
        save_words(count_words(texts + catalog_texts), build_dir)
        seconds = time.perf_counter() - started
        Manifest(
            model_id=embedder.model_id, dimension=vectors.dim, normalized=embedder.normalize,
            chunker_version=chunker, index_type=index_type, chunks=len(chunks), resources=len(resources),
            tokenizer=TOKENIZER_VERSION, build_seconds=round(seconds, 3),
        ).write(build_dir)
        swap_into_place(build_dir, target)
    except BaseException:
        shutil.rmtree(build_dir, ignore_errors=True)
        raise
    encoded = embedder.encoded - encoded_before
    report = BuildReport(
        path=str(target), index_type=index_type, chunks=len(chunks), resources=len(resources), added=added,
        removed=removed, encoded=encoded, cached=added - encoded if added >= encoded else 0,
        full_rebuild=isinstance(previous, str) or bool(reason), reason=reason,
        seconds=round(time.perf_counter() - started, 3),
    )
    log.info("index built: %s", report)
    return report
