"""One catalog card per resource: its list entry as a searchable passage.

Many resources can't be fetched (Discord, LinkedIn, paywalls, no network) and every page may be
missing offline; the card keeps each of them findable by title, author, topic and note.
"""

from __future__ import annotations

from ingest.extract import content_hash
from core.records import Chunk, Document, Resource

CARD_KIND = "card"


def card_text(resource: Resource) -> str:
    """The card as markdown: everything the list says about the resource."""
    lines = [f"# {resource.title}", ""]
    kind = resource.entry_type or resource.kind
    lines.append(f"{kind.capitalize()} by {resource.authors}" if resource.authors else kind.capitalize())
    place = " › ".join(p for p in (resource.topic, resource.section) if p)
    if resource.tier is not None:
        place = f"{place} › Tier {resource.tier}" if place else f"Tier {resource.tier}"
    if place:
        lines.append(f"In the guide: {place}")
    if resource.note:
        lines.append(resource.note)
    if resource.tags:
        lines.append("Tags: " + ", ".join(resource.tags))
    if resource.url:
        lines.append(f"Link: {resource.url}")
    return "\n".join(lines)


def card_document(resource: Resource) -> Document:
    text = card_text(resource)
    return Document(
        resource_id=resource.id,
        url=resource.url,
        title=resource.title,
        text=text,
        authors=resource.authors,
        source_kind=CARD_KIND,
        content_hash=content_hash(text),
    )


def card_chunk(resource: Resource, enrichment: str = "") -> Chunk:
    """The card as one chunk. Its context is empty: the card text already says all a header would,
    and repeating it would double-count the title in BM25. `enrichment` (ingest/inlinks.py: what linking
    pages and the list's neighbours say, for a resource with no page text) is appended to the chunk only, so
    the card document, and its hash that catalog refreshes compare, stays the list entry alone."""
    doc = card_document(resource)
    text = f"{doc.text}\n{enrichment}" if enrichment else doc.text
    return Chunk(
        chunk_id=f"{resource.id}:card",
        resource_id=resource.id,
        url=resource.url,
        heading_path=(),
        start=0,
        end=len(text),
        text=text,
        context="",
        source_kind=CARD_KIND,
        extra={"ordinal": 0, "words": len(text.split()), "doc_title": resource.title},
    )


def card_chunks(resources: list[Resource], enrichment: dict[str, str] | None = None) -> list[Chunk]:
    return [card_chunk(r, (enrichment or {}).get(r.id, "")) for r in resources]
