"""A catalog change reaches the store without a crawl: cards rebuilt, context headers re-cut, removed
resources dropped.

Why: a list update (a note reworded, an entry added or removed) changes what a resource's card says and the
context header every one of its chunks carries, but none of its pages. Re-chunking the stored page text with
the new catalog record is cheap and exact; re-crawling would be slow and is not needed. The index then
updates incrementally (only chunks whose indexed text changed are embedded again).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from core.records import Chunk, Document, Resource
from core.settings import Settings
from ingest.cards import CARD_KIND, card_chunk, card_document
from ingest.chunk import chunk_document
from ingest.inlinks import stored_enrichment
from ingest.store import ChunkStore

log = logging.getLogger(__name__)


@dataclass
class CatalogRefresh:
    """What a refresh changed in the store, by resource id."""

    added: list[str] = field(default_factory=list)  # cards created (new in the catalog, or never carded)
    changed: list[str] = field(default_factory=list)  # card and chunks rebuilt from the new record
    removed: list[str] = field(default_factory=list)  # no longer in the catalog: gone from the store
    rechunked_pages: int = 0

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def summary(self) -> str:
        if self.empty:
            return "catalog unchanged"
        return (f"catalog: {len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed "
                f"({self.rechunked_pages} stored pages re-chunked)")


def refresh_from_catalog(settings: Settings, resources: list[Resource]) -> CatalogRefresh:
    """Bring the store in line with `resources`: one transaction, nothing fetched."""
    store = ChunkStore(settings.store_file)
    documents = store.documents()
    cards = {d.resource_id: d for d in documents if d.source_kind == CARD_KIND}
    pages: dict[str, list[Document]] = {}
    for doc in documents:
        if doc.source_kind != CARD_KIND:
            pages.setdefault(doc.resource_id, []).append(doc)
    stored_ids = {d.resource_id for d in documents} | {c.resource_id for c in store.chunks()}
    catalog = {r.id: r for r in resources}
    result = CatalogRefresh(removed=sorted(stored_ids - set(catalog)))
    put_docs: list[Document] = []
    put_chunks: list[Chunk] = []
    enrichment = stored_enrichment(settings.inlinks_file, resources, set(catalog) - set(pages),
                                   settings.chunk.card_inlinks, settings.chunk.card_neighbours)
    for res in resources:
        card = card_document(res)
        old = cards.get(res.id)
        if old is not None and old.content_hash == card.content_hash:
            continue
        (result.added if old is None else result.changed).append(res.id)
        put_docs.append(card)
        for page in pages.get(res.id, []):
            put_docs.append(page)
            put_chunks.extend(chunk_document(page, res, settings.chunk))
            result.rechunked_pages += 1
        put_chunks.append(card_chunk(res, enrichment.get(res.id, "")))
    if not result.empty:
        store.replace_resources(put_docs, put_chunks, result.added + result.changed, dropped=result.removed)
        log.info("%s", result.summary())
    return result


def cards_out_of_date(settings: Settings, resources: list[Resource]) -> bool:
    """Whether the store's catalog cards no longer match `resources` (a list synced while the app was
    stopped); False for a store with no cards yet, which the first start fills."""
    if not settings.store_file.exists():
        return False
    cards = {d.resource_id: d.content_hash for d in ChunkStore(settings.store_file).documents()
             if d.source_kind == CARD_KIND}
    if not cards:
        return False
    return set(cards) != {r.id for r in resources} or any(
        cards[r.id] != card_document(r).content_hash for r in resources
    )


def pending_crawl(settings: Settings, resources: list[Resource]) -> list[Resource]:
    """Catalog resources with a link that no crawl has tried yet (all of them before the first crawl; the
    ones a list update added after it), in list order."""
    if not settings.store_file.exists():
        return [r for r in resources if r.url]
    store = ChunkStore(settings.store_file)
    tried = store.reported_resources() | {d.resource_id for d in store.documents() if d.source_kind != CARD_KIND}
    return [r for r in resources if r.url and r.id not in tried]
