"""The plain records the app shows and the API returns: the background job, the index status and the
reading progress per topic × tier.

They are data only (no Gradio, no loading): the front object (assistant/guide.py) fills them, its jobs
(assistant/jobs.py) update `IngestJob`, and assistant/render.py draws them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest.pipeline import CrawlProgress


@dataclass
class IngestJob:
    """The state of the one background job the app may run at a time; the UI polls it."""

    phase: str = "idle"  # idle / ingesting / indexing / crawling / done / failed / offline
    started: float | None = None
    finished: float | None = None
    message: str = ""
    kind: str = "re-ingest"  # re-ingest / first start / update
    crawl: CrawlProgress | None = None  # the background crawl's pages done / total, failed, rate, ETA
    indexed_chunks: int = 0  # the index's size after the last batch went in
    batches: int = 0  # crawl batches stored and indexed so far

    @property
    def running(self) -> bool:
        return self.phase in ("ingesting", "indexing", "crawling")

    def elapsed_s(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.time()) - self.started


@dataclass
class IndexStatus:
    """What the status tab shows; every field is plain data so it can go out through the API too."""

    resources: int = 0
    pages_ok: int = 0
    pages_failed: int = 0
    pages_skipped: int = 0
    card_only: int = 0
    chunks: int = 0
    indexed_resources: int = 0
    index_type: str = ""
    index_bytes: int = 0
    model: str = ""
    built_at: str = ""
    last_ingest: str = ""
    offline: bool = False
    failures: list[tuple[str, str]] = field(default_factory=list)  # (url, reason), first few
    list_version: str = ""  # content hash of the list in use (see ingest/listsync.py)
    list_source: str = ""  # where it was synced from; "" for the bundled list
    list_synced_at: str = ""
    list_changes: str = ""  # the last sync's summary line
    list_changed_titles: list[str] = field(default_factory=list)  # "added: …", "changed (note): …", first few
    crawl_pending: int = 0  # resources no crawl has tried yet
    model_device: str = ""  # where the chat model runs: "GPU (29 of 29 layers)", "CPU", or its server


@dataclass
class ProgressRow:
    topic: str
    tier: int | None
    read: int
    total: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.read / self.total, 1) if self.total else 0.0
