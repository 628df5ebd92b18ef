"""The background jobs of the app: one at a time, on a daemon thread, polled through a plain `IngestJob`.

Two procedures run there, both sequences of the front object's own operations (assistant/guide.py): a
re-ingest (crawl everything, index, swap the loaded index) and an update (cards in line with the list,
then a crawl of what no crawl has tried, in batches, each indexed and swapped in as it arrives). Chat
keeps answering from the loaded index until a new one is swapped in.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from assistant.app_state import IngestJob
from core.records import Resource
from core.settings import Settings

if TYPE_CHECKING:
    from index.records import BuildReport
    from ingest.pipeline import CrawlProgress, IngestResult
    from ingest.refresh import CatalogRefresh

log = logging.getLogger(__name__)

OFFLINE_HINT = ("Offline: the list's sites cannot be reached, so answers come from the catalog cards. "
                "Load a web archive with `gpuguide ingest --warc FILE` (or list archives in crawl.warcs) and "
                "restart the app.")


class JobHost(Protocol):
    """What a job needs from the front object (assistant/guide.py `Guide`)."""

    settings: Settings

    def reload_catalog(self) -> list[Resource]: ...
    def ingest(self, *, only: set[str] | None = None,
               on_progress: Callable[[CrawlProgress], None] | None = None) -> IngestResult: ...
    def refresh_cards(self) -> CatalogRefresh: ...
    def index(self, rebuild: bool = False) -> tuple[CatalogRefresh, BuildReport]: ...
    def pending(self) -> list[Resource]: ...
    def indexed_chunks(self) -> int: ...


class BackgroundJobs:
    """At most one job at a time; `job` is the latest (idle before the first)."""

    def __init__(self) -> None:
        self.job = IngestJob()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self, job: IngestJob, work: Callable[[IngestJob], None]) -> bool:
        """Run `work(job)` on a daemon thread; False (and nothing started) while another job runs."""
        with self._lock:
            if self.job.running:
                return False
            self.job = job
            self._thread = threading.Thread(target=self._run, args=(job, work), daemon=True,
                                            name=f"gpuguide-{job.kind.replace(' ', '-')}")
            self._thread.start()
        return True

    def wait(self, timeout: float | None = None) -> IngestJob:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.job

    @staticmethod
    def _run(job: IngestJob, work: Callable[[IngestJob], None]) -> None:
        try:
            work(job)
        except Exception as exc:  # the thread must report, never die silently
            log.exception("%s failed", job.kind)
            job.phase, job.message = "failed", str(exc).splitlines()[0][:300] if str(exc) else exc.__class__.__name__
        finally:
            job.finished = time.time()


def reingest(host: JobHost, job: IngestJob) -> None:
    """Crawl (or replay archives) the whole list, then index and swap in the new index."""
    from ingest.pipeline import CrawlProgress

    resources = host.reload_catalog()  # a `catalog sync` since start is picked up
    job.crawl = overall = CrawlProgress(total=len(resources))

    def tick(progress: CrawlProgress) -> None:
        overall.done, overall.failed = progress.done, progress.failed

    result = host.ingest(on_progress=tick)
    overall.finished = time.monotonic()
    job.phase, job.message = "indexing", f"{result.documents} pages, {result.chunks} chunks; indexing"
    _, report = host.index()
    job.indexed_chunks = report.chunks
    job.message = (f"{result.documents} pages ({result.reused} unchanged), {result.chunks} chunks "
                   f"+ {result.card_chunks} catalog cards")
    job.phase = "done"


def update(host: JobHost, job: IngestJob) -> None:
    """Re-index after a list update (cards and context headers, no crawl), then crawl what no crawl has
    tried yet, in batches of `ui.crawl_batch`, each stored, indexed and swapped in as it arrives."""
    from ingest.pipeline import CrawlProgress

    settings = host.settings
    host.reload_catalog()
    refresh = host.refresh_cards()
    if not refresh.empty:
        job.message = refresh.summary() + "; indexing"
        _, report = host.index()
        job.indexed_chunks = report.chunks
    pending = host.pending()
    if not pending:
        job.phase, job.message = "done", f"{refresh.summary()}; nothing waits for a crawl"
        return
    if settings.crawl.offline or not network_reachable(settings, pending):
        job.phase, job.message = "offline", OFFLINE_HINT
        return
    job.indexed_chunks = job.indexed_chunks or host.indexed_chunks()
    job.crawl = overall = CrawlProgress(total=len(pending))
    job.phase, job.message = "crawling", f"crawling {len(pending)} resources"
    size = settings.ui.crawl_batch
    for start in range(0, len(pending), size):
        batch = pending[start:start + size]
        base_done, base_failed = overall.done, overall.failed

        def tick(progress: CrawlProgress, base_done: int = base_done, base_failed: int = base_failed) -> None:
            overall.done, overall.failed = base_done + progress.done, base_failed + progress.failed

        host.ingest(only={r.id for r in batch}, on_progress=tick)
        job.message = f"indexing pages {start + 1}-{start + len(batch)}"
        _, report = host.index()
        job.batches += 1
        job.indexed_chunks = report.chunks
        job.message = f"{report.chunks} chunks indexed"
    overall.finished = time.monotonic()
    job.phase = "done"
    job.message = f"crawled {overall.done} pages ({overall.failed} failed); {job.indexed_chunks} chunks indexed"


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
