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
from typing import TYPE_CHECKING, Any

from assistant.chain import Assistant
from assistant.digest import DigestMaker
from assistant.models import describe_device
from assistant.path import LearningPath, learning_path
from assistant.planner import Plan, plan_next
from assistant.profile import Profile
from assistant.readtime import Estimate, estimate_all
from core.records import Resource
from core.settings import Settings
from index.records import ResourceHit

if TYPE_CHECKING:
    from ingest.pipeline import CrawlProgress

log = logging.getLogger(__name__)


@dataclass
class IngestJob:
    """The state of the one re-ingest the app may run at a time; the UI polls it."""

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


def index_exists(settings: Settings) -> bool:
    from index.vectors import MANIFEST_FILE

    return (settings.index_dir / MANIFEST_FILE).exists()


def prepare_index(settings: Settings, resources: list[Resource], embedder: Any = None) -> str:
    """Make sure an index exists so the app comes up offline: the stored chunks if there are any
    (after replaying `crawl.warcs` when archives are configured and nothing was ingested yet), else
    one catalog card per resource. Returns what was done, for the log."""
    from index.build import build_index
    from ingest.refresh import refresh_from_catalog
    from ingest.store import ChunkStore

    if index_exists(settings):
        return "index found"
    if settings.crawl.warcs and not settings.store_file.exists():
        from ingest.pipeline import run_ingest

        offline = settings.model_copy(update={"crawl": settings.crawl.model_copy(update={"offline": True})})
        result = run_ingest(resources, offline, progress=False)
        log.info("first start: replayed %d archive(s): %d pages", len(settings.crawl.warcs), result.documents)
    # The cards go into the store too, so crawled batches and `gpuguide index` add to them later.
    refresh_from_catalog(settings, resources)
    store = ChunkStore(settings.store_file)
    chunks = store.chunks()
    if store.last_report() is not None:
        what = f"index built from {len(chunks)} stored chunks"
    else:
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
        self._times: tuple[list[Any], dict[str, Estimate]] | None = None
        self._digests: DigestMaker | None = None

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

    def states(self) -> dict[str, str]:
        """Reading states by id (unread resources are absent)."""
        return self.profile.states()

    def set_state(self, resource_id: str, state: str) -> bool:
        """Only catalog ids and known states are stored; anything else (a forged event) is ignored."""
        from assistant.profile import STATES

        if resource_id not in {r.id for r in self.resources} or state not in STATES:
            log.warning("ignoring state %r for resource id %r", state[:20], resource_id[:80])
            return False
        self.profile.set_state([resource_id], state)
        return True

    def times(self) -> dict[str, Estimate]:
        """Reading time per resource from the loaded index's chunks (recomputed after a re-ingest)."""
        chunks = self.assistant().searcher.chunks
        if self._times is None or self._times[0] is not chunks:
            self._times = (chunks, estimate_all(self.resources, chunks, self.settings.learning))
        return self._times[1]

    def learning_path(self) -> LearningPath:
        return learning_path(self.resources, self.states(), self.times())

    def digest_maker(self) -> DigestMaker:
        """Summaries and self-checks over the loaded index's chunks and embedder (one per loaded index)."""
        searcher = self.assistant().searcher
        if self._digests is None or self._digests.source is not searcher.chunks:
            self._digests = DigestMaker(self.settings, self.resources, searcher.chunks, self.embedder())
        return self._digests

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
        states = self.states()
        read = {i for i, st in states.items() if st == "read"} | (extra_read or set())
        return plan_next(self.resources, read, interest=interest, k=k,
                         reading_ids={i for i, st in states.items() if st == "reading"},
                         skipped_ids={i for i, st in states.items() if st == "skipped"})

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
        status.model_device = describe_device(self.settings)
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
        self._list_status(status)
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
        from assistant.services import refresh_and_index
        from ingest.catalog import current_catalog
        from ingest.pipeline import CrawlProgress, run_ingest

        job = self.job
        try:
            self._resources = current_catalog(self.settings)  # a `catalog sync` since start is picked up
            job.crawl = overall = CrawlProgress(total=len(self.resources))

            def tick(progress: CrawlProgress) -> None:
                overall.done, overall.failed = progress.done, progress.failed

            result = run_ingest(self.resources, self.settings, progress=False, on_progress=tick)
            overall.finished = time.monotonic()
            job.phase, job.message = "indexing", f"{result.documents} pages, {result.chunks} chunks; indexing"
            _, report = refresh_and_index(self.settings, embedder=self.embedder())
            job.indexed_chunks = report.chunks
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

    # --- list updates and the background crawl ------------------------------------------------------

    def _list_status(self, status: IndexStatus) -> None:
        from ingest.listsync import catalog_version, last_sync
        from ingest.refresh import pending_crawl

        status.list_version = catalog_version(self.resources)
        record = last_sync(self.settings)
        if record is not None and record.version == status.list_version:
            status.list_source, status.list_synced_at, status.list_changes = (
                record.source, record.synced_at, record.summary())
            titles = [f"added: {a['title']}" for a in record.added]
            titles += [f"removed: {r['title']}" for r in record.removed]
            titles += [f"changed ({', '.join(c.fields)}): {c.title}" for c in record.changed]
            status.list_changed_titles = titles[:12]
        status.crawl_pending = len(pending_crawl(self.settings, self.resources))

    def start_first_crawl(self) -> bool:
        """`gpuguide serve` on a data dir no crawl has touched: crawl the list in the background (the catalog
        cards answer meanwhile). Off with `ui.first_start_crawl`; configured archives are replayed instead."""
        from ingest.store import ChunkStore

        settings = self.settings
        if not settings.ui.first_start_crawl or settings.crawl.warcs:
            return False
        if settings.store_file.exists() and ChunkStore(settings.store_file).last_report() is not None:
            return False
        return self.start_update(kind="first start")

    def start_list_update(self) -> bool:
        """At start: a list synced while the app was stopped (`gpuguide catalog sync` with no `gpuguide index`
        after it) is applied now, in the background, like the *Update from the list* button."""
        from ingest.refresh import cards_out_of_date

        if not cards_out_of_date(self.settings, self.resources):
            return False
        return self.start_update(kind="list update")

    def start_update(self, kind: str = "update") -> bool:
        """Re-index after a list update (cards and context headers, no crawl), then crawl what no crawl has
        tried yet, in batches, each stored and indexed as it arrives; False if a job is running."""
        with self._lock:
            if self.job.running:
                return False
            self.job = IngestJob(phase="indexing", kind=kind, started=time.time(),
                                 message="bringing the cards in line with the list")
            self._thread = threading.Thread(target=self._update, name=f"gpuguide-{kind.replace(' ', '-')}",
                                            daemon=True)
            self._thread.start()
        return True

    def _swap(self) -> None:
        fresh = self._load()
        with self._lock:
            self._assistant = fresh

    def _update(self) -> None:
        from assistant.services import refresh_and_index
        from ingest.catalog import current_catalog
        from ingest.pipeline import CrawlProgress, run_ingest
        from ingest.refresh import pending_crawl, refresh_from_catalog

        job = self.job
        settings = self.settings
        try:
            self._resources = current_catalog(settings)
            refresh = refresh_from_catalog(settings, self.resources)
            if not refresh.empty:
                job.message = refresh.summary() + "; indexing"
                _, report = refresh_and_index(settings, embedder=self.embedder())
                job.indexed_chunks = report.chunks
                self._swap()
            pending = pending_crawl(settings, self.resources)
            if not pending:
                job.phase, job.message = "done", f"{refresh.summary()}; nothing waits for a crawl"
                return
            if settings.crawl.offline or not network_reachable(settings, pending):
                job.phase, job.message = "offline", OFFLINE_HINT
                return
            job.indexed_chunks = job.indexed_chunks or len(self.assistant().searcher.chunks)
            job.crawl = overall = CrawlProgress(total=len(pending))
            job.phase, job.message = "crawling", f"crawling {len(pending)} resources"
            size = settings.ui.crawl_batch
            for start in range(0, len(pending), size):
                batch = pending[start:start + size]
                base_done, base_failed = overall.done, overall.failed

                def tick(progress: CrawlProgress, base_done: int = base_done, base_failed: int = base_failed) -> None:
                    overall.done, overall.failed = base_done + progress.done, base_failed + progress.failed

                run_ingest(self.resources, settings, progress=False, only={r.id for r in batch}, on_progress=tick)
                job.message = f"indexing pages {start + 1}-{start + len(batch)}"
                _, report = refresh_and_index(settings, embedder=self.embedder())
                self._swap()
                job.batches += 1
                job.indexed_chunks = report.chunks
                job.message = f"{report.chunks} chunks indexed"
            overall.finished = time.monotonic()
            job.phase = "done"
            job.message = (f"crawled {overall.done} pages ({overall.failed} failed); "
                           f"{job.indexed_chunks} chunks indexed")
        except Exception as exc:  # the thread must report, never die silently
            log.exception("%s failed", job.kind)
            job.phase, job.message = "failed", str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__
        finally:
            job.finished = time.time()


OFFLINE_HINT = ("Offline: the list's sites cannot be reached, so answers come from the catalog cards. "
                "Load a web archive with `gpuguide ingest --warc FILE` (or list archives in crawl.warcs) and "
                "restart the app.")


def network_reachable(settings: Settings, resources: list[Resource], hosts: int = 3, timeout_s: float = 3.0) -> bool:
    """Can the crawl reach anything? A TCP connection to the first few distinct hosts of `resources` (after
    `crawl.url_rewrites`): cheap, and it says nothing to the sites themselves."""
    import socket
    from urllib.parse import urlsplit

    from ingest.fetch import rewrite_url

    targets: list[tuple[str, int]] = []
    for res in resources:
        parts = urlsplit(rewrite_url(res.url, settings.crawl.url_rewrites))
        if not parts.hostname:
            continue
        try:
            target = (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
        except ValueError:
            continue
        if target not in targets:
            targets.append(target)
        if len(targets) >= hosts:
            break
    for host, port in targets:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return True
        except OSError:
            continue
    return False
