"""What the app needs besides widgets: one loaded Assistant per process, an index on first start, the
learner's progress, and re-ingest on a background thread.

Kept free of Gradio so the CLI, the API functions and tests share it, and so `ui.py` only lays out
and renders.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.chain import Assistant
from assistant.planner import Plan, plan_next
from assistant.profile import Profile
from index.records import ResourceHit
from core.records import Resource
from core.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class IngestJob:
    """The state of the one re-ingest the app may run at a time; the UI polls it."""

    phase: str = "idle"  # idle / ingesting / indexing / done / failed
    started: float | None = None
    finished: float | None = None
    message: str = ""

    @property
    def running(self) -> bool:
        return self.phase in ("ingesting", "indexing")

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


@dataclass
class ProgressRow:
    topic: str
    tier: int | None
    read: int
    total: int

    @property
    def percent(self) -> float:
        return round(100.0 * self.read / self.total, 1) if self.total else 0.0


def index_exists(settings: Settings) -> bool:
    from index.vectors import MANIFEST_FILE

    return (settings.index_dir / MANIFEST_FILE).exists()


def prepare_index(settings: Settings, resources: list[Resource], embedder: Any = None) -> str:
    """Make sure an index exists so the app comes up offline: the stored chunks if there are any
    (after replaying `crawl.warcs` when archives are configured and nothing was ingested yet), else
    one catalog card per resource. Returns what was done, for the log."""
    from index.build import build_index
    from ingest.cards import card_chunks
    from ingest.store import ChunkStore

    if index_exists(settings):
        return "index found"
    if settings.crawl.warcs and not settings.store_file.exists():
        from ingest.pipeline import run_ingest

        offline = settings.model_copy(update={"crawl": settings.crawl.model_copy(update={"offline": True})})
        result = run_ingest(resources, offline, progress=False)
        log.info("first start: replayed %d archive(s): %d pages", len(settings.crawl.warcs), result.documents)
    if settings.store_file.exists():
        chunks = ChunkStore(settings.store_file).chunks()
        what = f"index built from {len(chunks)} stored chunks"
    else:
        chunks = card_chunks(resources)
        what = f"index built from {len(chunks)} catalog cards (no pages ingested yet)"
    build_index(chunks, resources, settings, embedder=embedder)
    return what


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


class AppState:
    """One per process. The Assistant (index, models) is loaded once and swapped after a re-ingest;
    readers take a reference under the lock, so a swap never pulls it from under a running answer."""

    def __init__(self, settings: Settings, resources: list[Resource] | None = None, embedder: Any = None) -> None:
        self.settings = settings
        self._resources = resources
        self._embedder = embedder
        self.profile = Profile(settings.profile_file)
        self._lock = threading.Lock()
        self._assistant: Assistant | None = None
        self.job = IngestJob()
        self._thread: threading.Thread | None = None

    # --- loading ---------------------------------------------------------------------------------

    @property
    def resources(self) -> list[Resource]:
        if self._resources is None:
            from ingest.catalog import current_catalog

            self._resources = current_catalog(self.settings)
        return self._resources

    def embedder(self) -> Any:
        if self._embedder is None:
            from index.embed import Embedder

            self._embedder = Embedder(self.settings)
        return self._embedder

    def prepare(self) -> str:
        """Build the first index if there is none, then load it (so the first question is quick)."""
        what = prepare_index(self.settings, self.resources, self.embedder())
        self.assistant()
        return what

    def warm_up(self) -> None:
        """Pay the lazy loads (embedding model, reranker, scope vocabulary; the packaged LLM when it is the
        backend) on a background thread after the server is up, so neither the URL nor the first answer waits."""
        try:
            self.assistant().searcher.search("GPU memory bandwidth", k=1)
            if self.settings.llm.backend == "embedded":
                from assistant.models import embedded_llm

                embedded_llm(self.settings).warm()  # load the model and its saved prompt prefix
            log.info("warmed up")
        except Exception as exc:  # only a head start: a real question reports any problem itself
            log.warning("warm-up failed: %s", exc)

    def _load(self) -> Assistant:
        from index.search import load_searcher

        searcher = load_searcher(self.settings, embedder=self.embedder())
        return Assistant(self.settings, searcher, resources=self.resources, profile=self.profile)

    def assistant(self) -> Assistant:
        with self._lock:
            if self._assistant is None:
                self._assistant = self._load()
            return self._assistant

    # --- reading progress ----------------------------------------------------------------------

    def read_ids(self) -> set[str]:
        return self.profile.read_ids()

    def set_read(self, resource_id: str, read: bool) -> bool:
        """Only catalog ids are stored; anything else (a stale page, a forged event) is ignored."""
        if resource_id not in {r.id for r in self.resources}:
            log.warning("ignoring read toggle for unknown resource id %r", resource_id[:80])
            return False
        self.profile.set_read(resource_id, read)
        return True

    def progress(self) -> list[ProgressRow]:
        """Read / total per topic × tier, in the guide's order."""
        read = self.read_ids()
        totals: Counter[tuple[str, int | None]] = Counter()
        done: Counter[tuple[str, int | None]] = Counter()
        for res in sorted(self.resources, key=lambda r: r.position):
            key = (res.topic, res.tier)
            totals[key] += 1
            done[key] += res.id in read
        topic_order = {topic: i for i, topic in enumerate(dict.fromkeys(t for t, _ in totals))}
        keys = sorted(totals, key=lambda key: (topic_order[key[0]], -1 if key[1] is None else key[1]))
        return [ProgressRow(topic, tier, done[(topic, tier)], totals[(topic, tier)]) for topic, tier in keys]

    def plan(self, interest: str = "", k: int = 5, extra_read: set[str] | None = None) -> Plan:
        return plan_next(self.resources, self.read_ids() | (extra_read or set()), interest=interest, k=k)

    # --- search ----------------------------------------------------------------------------------

    def search(self, query: str, k: int = 5, tier: int | None = None, topic: str | None = None,
               kind: str | None = None, unread_only: bool = False) -> list[ResourceHit]:
        searcher = self.assistant().searcher
        exclude = self.read_ids() if unread_only else None
        return searcher.search(query, k=k, tier=tier, topic=topic or None, kind=kind or None, exclude_read=exclude)

    # --- status ----------------------------------------------------------------------------------

    def index_status(self) -> IndexStatus:
        from ingest.store import ChunkStore

        status = IndexStatus(resources=len(self.resources), offline=self.settings.crawl.offline)
        searcher = self.assistant().searcher
        manifest = searcher.manifest
        status.chunks, status.indexed_resources = manifest.chunks, manifest.resources
        status.index_type, status.model = manifest.index_type, manifest.model_id
        status.built_at = _iso(manifest.built_at)
        status.index_bytes = _dir_bytes(self.settings.index_dir)
        with_pages = {c.resource_id for c in searcher.chunks if c.source_kind != "card"}
        status.card_only = sum(1 for r in self.resources if r.id not in with_pages)
        if self.settings.store_file.exists():
            report = ChunkStore(self.settings.store_file).last_report()
            if report is not None:
                status.last_ingest = report.info.finished
                for row in report.rows:
                    if row.status in ("ok", "not-modified"):
                        status.pages_ok += 1
                    elif row.status == "failed":
                        status.pages_failed += 1
                        if len(status.failures) < 10:
                            status.failures.append((row.url, row.reason))
                    else:
                        status.pages_skipped += 1
        return status

    # --- re-ingest -------------------------------------------------------------------------------

    def start_reingest(self) -> bool:
        """Crawl (or replay archives) and re-index on a daemon thread; False if one is running.
        Chat keeps using the loaded index until the new one is swapped in."""
        with self._lock:
            if self.job.running:
                return False
            self.job = IngestJob(phase="ingesting", started=time.time(), message="crawling and extracting pages")
            self._thread = threading.Thread(target=self._reingest, name="gpuguide-reingest", daemon=True)
            self._thread.start()
        return True

    def wait_reingest(self, timeout: float | None = None) -> IngestJob:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.job

    def _reingest(self) -> None:
        from index.build import build_index
        from ingest.pipeline import run_ingest
        from ingest.store import ChunkStore

        job = self.job
        try:
            result = run_ingest(self.resources, self.settings, progress=False)
            job.phase, job.message = "indexing", f"{result.documents} pages, {result.chunks} chunks; indexing"
            chunks = ChunkStore(self.settings.store_file).chunks()
            build_index(chunks, self.resources, self.settings, embedder=self.embedder())
            fresh = self._load()
            with self._lock:
                self._assistant = fresh
            job.message = (f"{result.documents} pages ({result.reused} unchanged), {result.chunks} chunks "
                           f"+ {result.card_chunks} catalog cards")
            job.phase = "done"
        except Exception as exc:  # the thread must report, never die silently
            log.exception("re-ingest failed")
            job.phase, job.message = "failed", str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__
        finally:
            job.finished = time.time()
