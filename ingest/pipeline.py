"""One ingest run: fetch (or replay) → extract → dedupe → chunk → cards → store, in that order.

Unchanged pages (same fetched bytes, same chunker) reuse their stored text and chunks, so an
incremental run costs little. Everything lands in one store transaction: a failed run leaves the
previous content in place.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tqdm import tqdm

from ingest.cards import card_chunks, card_document
from ingest.chunk import CHUNKER_VERSION, chunk_document, chunker_key
from ingest.extract import body_hash, dedupe_documents, extract
from ingest.fetch import crawl_sync
from core.records import Chunk, Document, FetchResult, Resource
from core.settings import Settings
from ingest.store import ChunkStore, ReportRow, RunInfo

log = logging.getLogger(__name__)


@dataclass
class IngestResult:
    """What a run produced; `documents == 0` means no page text at all (cards only)."""

    info: RunInfo
    rows: list[ReportRow]
    documents: int
    chunks: int
    card_chunks: int
    reused: int
    near_duplicates: int
    seconds: float
    fetched: list[FetchResult] = field(default_factory=list, repr=False)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_ingest(
    resources: list[Resource], settings: Settings, *, refresh: bool = False, progress: bool = True
) -> IngestResult:
    """Crawl (or, with `crawl.offline`, replay `crawl.warcs`) and store documents, chunks and the report."""
    started, t0 = _now(), time.perf_counter()
    store = ChunkStore(settings.store_file)  # fail early on a corrupt store, before a long crawl
    fetched = crawl_sync(resources, settings, refresh=refresh, progress=progress)
    by_id = {r.id: r for r in resources}
    key = chunker_key(settings.chunk)
    docs: list[Document] = []
    page_chunks: dict[tuple[str, str], list[Chunk]] = {}
    hashes: dict[str, str] = {}
    rows: list[ReportRow] = []
    reused = 0
    show = progress and sys.stderr.isatty()
    for result in tqdm(fetched, desc="extract", unit="page", disable=not show):
        t = time.perf_counter()
        resource = by_id.get(result.resource_id)
        row = ReportRow(result.url, result.resource_id, result.status, result.reason, len(result.body), 0, result.elapsed_s)
        rows.append(row)
        if resource is None or result.status not in ("ok", "not-modified") or not result.body:
            continue
        hashes[result.url] = body_hash(result.body)
        hit = store.cached(resource.id, result.url, hashes[result.url], key)
        if hit is not None:
            doc, chunks = hit
            reused += 1
        else:
            doc = extract(result, resource, settings.chunk)
            if doc is None:
                row.status, row.reason = "failed", "no usable text extracted"
                continue
            chunks = chunk_document(doc, resource, settings.chunk)
        docs.append(doc)
        page_chunks[(doc.resource_id, doc.url)] = chunks
        row.seconds = round(row.seconds + time.perf_counter() - t, 4)
    kept = dedupe_documents(docs, settings.chunk.near_duplicate_threshold)
    page_chunk_list = [c for d in kept for c in page_chunks[(d.resource_id, d.url)]]
    kept_keys = {(d.resource_id, d.url) for d in kept}
    for row in rows:
        row.chunks = len(page_chunks.get((row.resource_id, row.url), [])) if (row.resource_id, row.url) in kept_keys else 0
    # Replace what this run saw; a page that failed this time keeps last run's text (nothing is lost),
    # and resources no longer in the catalog are dropped.
    stored = {d.resource_id for d in store.documents()}
    fetched_ok = {r.resource_id for r in fetched if r.status in ("ok", "not-modified")}
    replaced = {r.id for r in resources if r.id in fetched_ok or r.id not in stored} | (stored - set(by_id))
    kept = [d for d in kept if d.resource_id in replaced]
    page_chunk_list = [c for c in page_chunk_list if c.resource_id in replaced]
    cards = card_chunks([r for r in resources if r.id in replaced])
    info = store.replace_run(
        kept + [card_document(r) for r in resources if r.id in replaced],
        page_chunk_list + cards,
        rows,
        RunInfo(started, _now(), extra={
            "chunker": CHUNKER_VERSION,
            "offline": settings.crawl.offline,
            "warcs": [str(p) for p in settings.crawl.warcs],
            "resources": len(resources),
        }),
        resource_ids=replaced,
        source_hashes=hashes,
        chunker=key,
    )
    seconds = time.perf_counter() - t0
    log.info("ingest: %d documents (%d reused), %d chunks + %d cards in %.1fs", len(kept), reused, len(page_chunk_list), len(cards), seconds)
    return IngestResult(
        info=info, rows=rows, documents=len(kept), chunks=len(page_chunk_list), card_chunks=len(cards),
        reused=reused, near_duplicates=len(docs) - len(kept), seconds=seconds, fetched=fetched,
    )
