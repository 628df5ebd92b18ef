"""One ingest run: fetch (or replay) → extract → dedupe → chunk → cards → store, in that order.

Unchanged pages (same fetched bytes, same chunker) reuse their stored text and chunks, so an
incremental run costs little. Everything lands in one store transaction: a failed run leaves the
previous content in place.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tqdm import tqdm

from core.records import Chunk, Document, FetchResult, Resource
from core.settings import Settings
from ingest.cards import card_chunks, card_document
from ingest.inlinks import card_enrichment, update_links
from ingest.chunk import CHUNKER_VERSION, chunk_document, chunker_key
from ingest.extract import body_hash, dedupe_documents, extract
from ingest.fetch import crawl_sync
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


@dataclass
class CrawlProgress:
    """How far a crawl is, one unit per catalog resource (its page and follow-ups): what the app's status
    line and the CLI's bar show."""

    total: int
    done: int = 0
    failed: int = 0  # resources whose page could not be fetched (failed, robots, offline)
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    def elapsed_s(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def rate(self) -> float:
        """Resources per second so far."""
        elapsed = self.elapsed_s()
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        rate = self.rate()
        return (self.total - self.done) / rate if rate > 0 else None

    def line(self) -> str:
        eta = self.eta_s()
        left = f", about {eta:.0f}s left" if eta is not None and self.done < self.total else ""
        return (f"{self.done}/{self.total} pages, {self.failed} failed, {self.rate() * 60:.0f} pages/min{left}")


ProgressCallback = Callable[[CrawlProgress], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_ingest(
    resources: list[Resource], settings: Settings, *, refresh: bool = False, progress: bool = True,
    only: Collection[str] | None = None, on_progress: ProgressCallback | None = None,
) -> IngestResult:
    """Crawl (or, with `crawl.offline`, replay `crawl.warcs`) and store documents, chunks and the report.

    `only` (resource ids) crawls part of the catalog (a batch of the app's first crawl, resources a sync
    added): the others keep their stored text and report rows. `on_progress` hears after each resource."""
    started, t0 = _now(), time.perf_counter()
    store = ChunkStore(settings.store_file)  # fail early on a corrupt store, before a long crawl
    targets = resources if only is None else [r for r in resources if r.id in set(only)]
    tracker = CrawlProgress(total=len(targets))
    bar = tqdm(total=len(targets), desc="crawl", unit="page", disable=not (progress and sys.stderr.isatty()))

    def heard(resource: Resource, results: list[FetchResult]) -> None:
        tracker.done += 1
        if not results or results[0].status not in ("ok", "not-modified"):
            tracker.failed += 1
        bar.update(1)
        bar.set_postfix(failed=tracker.failed, refresh=False)
        if on_progress is not None:
            on_progress(tracker)

    try:
        fetched = crawl_sync(targets, settings, refresh=refresh, progress=progress, on_resource=heard)
    finally:
        bar.close()
        tracker.finished = time.monotonic()
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
    stored_docs = store.documents()
    stored = {d.resource_id for d in stored_docs}
    fetched_ok = {r.resource_id for r in fetched if r.status in ("ok", "not-modified")}
    replaced = {r.id for r in targets if r.id in fetched_ok or r.id not in stored}
    if only is None:
        replaced |= stored - set(by_id)
    kept = [d for d in kept if d.resource_id in replaced]
    page_chunk_list = [c for c in page_chunk_list if c.resource_id in replaced]
    # Card-only resources (no page text, now or kept from before) get what linking pages say on their card;
    # all of them are re-carded, since a page fetched in this run may be the one that links to them.
    pages = update_links(settings.inlinks_file, fetched, set(by_id))
    stored_pages = {d.resource_id for d in stored_docs if d.source_kind != "card"}
    card_only = set(by_id) - {d.resource_id for d in kept} - (stored_pages - replaced)
    replaced |= card_only
    enrichment = card_enrichment(pages, resources, card_only, settings.chunk.card_inlinks,
                                 settings.chunk.card_neighbours)
    cards = card_chunks([r for r in resources if r.id in replaced], enrichment)
    info = store.replace_run(
        kept + [card_document(r) for r in resources if r.id in replaced],
        page_chunk_list + cards,
        rows,
        RunInfo(started, _now(), extra={
            "chunker": CHUNKER_VERSION,
            "offline": settings.crawl.offline,
            "warcs": [str(p) for p in settings.crawl.warcs],
            "resources": len(resources),
            "crawled": len(targets),
        }),
        resource_ids=replaced,
        source_hashes=hashes,
        chunker=key,
        report_scope=None if only is None else [r.id for r in targets],
    )
    seconds = time.perf_counter() - t0
    log.info("ingest: %d documents (%d reused), %d chunks + %d cards in %.1fs", len(kept), reused, len(page_chunk_list), len(cards), seconds)
    return IngestResult(
        info=info, rows=rows, documents=len(kept), chunks=len(page_chunk_list), card_chunks=len(cards),
        reused=reused, near_duplicates=len(docs) - len(kept), seconds=seconds, fetched=fetched,
    )
