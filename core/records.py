"""Plain records that flow one way through the pipeline: catalog → fetch → extract → chunk.

Each stage takes and returns these, so a stage can be tested alone with hand-made records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The version of the chunk records `ingest/chunk.py` produces. Bump when chunk boundaries or the context
# header change: the index manifest records it (index/ reads it here), and a change means stored chunks
# must be rebuilt.
CHUNKER_VERSION = "1"


@dataclass(frozen=True)
class Resource:
    """One entry of the tiered reading list."""

    id: str
    title: str
    url: str
    authors: str
    note: str
    topic: str
    section: str
    tier: int | None
    kind: str
    position: int
    list_anchor: str
    entry_type: str | None = None  # legend format only: paper / blog / video / book / code
    tags: tuple[str, ...] = ()  # legend format only: favourite / new

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Resource:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["tags"] = tuple(values.get("tags") or ())
        return cls(**values)

    @property
    def place(self) -> str:
        return place_label(self.topic, self.section, self.tier)


def place_label(topic: str, section: str, tier: int | None) -> str:
    """Where the list puts a resource, as a learner reads it: 'Topic › Section · Tier N'."""
    return f"{topic} › {section}" + (f" · Tier {tier}" if tier is not None else "")


@dataclass
class FetchResult:
    """What the crawler got for one URL (or why it got nothing)."""

    url: str  # the URL as the catalog names it
    final_url: str  # after rewrites and redirects
    status: str  # ok / not-modified / failed / robots-disallowed / skipped-offline
    http_status: int | None = None
    content_type: str = ""
    body: bytes = b""
    reason: str = ""
    etag: str | None = None
    last_modified: str | None = None
    elapsed_s: float = 0.0
    resource_id: str = ""
    parent_url: str | None = None  # set for follow-ups (arXiv PDF, GitHub README, other parts)


@dataclass
class Document:
    """Clean text of one fetched page, ready for chunking."""

    resource_id: str
    url: str
    title: str
    text: str  # markdown-ish main text
    authors: str = ""
    date: str = ""
    source_kind: str = "html"  # html / pdf / markdown / card
    content_hash: str = ""


@dataclass
class Chunk:
    """A retrievable passage with its provenance."""

    chunk_id: str
    resource_id: str
    url: str
    heading_path: tuple[str, ...]
    start: int  # character offsets into Document.text
    end: int
    text: str
    context: str  # title, authors, topic › section › tier, note: embedded and BM25-indexed with text
    source_kind: str = "html"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def indexed_text(self) -> str:
        """The text that embeddings and BM25 see: the context header, then the passage."""
        return f"{self.context}\n{self.text}" if self.context else self.text
