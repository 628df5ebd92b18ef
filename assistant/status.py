"""What the status tab and the guide's progress show, computed from the data dir and the loaded index.

Plain functions over plain records (assistant/app_state.py), so the API, the CLI and tests read the same
numbers the app renders.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assistant.app_state import IndexStatus, ProgressRow
from core.records import Resource
from core.settings import Settings


def progress_rows(resources: list[Resource], read: set[str]) -> list[ProgressRow]:
    """Read / total per topic × tier, in the guide's order."""
    totals: Counter[tuple[str, int | None]] = Counter()
    done: Counter[tuple[str, int | None]] = Counter()
    for res in sorted(resources, key=lambda r: r.position):
        key = (res.topic, res.tier)
        totals[key] += 1
        done[key] += res.id in read
    topic_order = {topic: i for i, topic in enumerate(dict.fromkeys(t for t, _ in totals))}
    keys = sorted(totals, key=lambda key: (topic_order[key[0]], -1 if key[1] is None else key[1]))
    return [ProgressRow(topic, tier, done[(topic, tier)], totals[(topic, tier)]) for topic, tier in keys]


def index_status(settings: Settings, resources: list[Resource], searcher: Any) -> IndexStatus:
    """The loaded index, the last ingest's report, the list in use and where the chat model runs."""
    from assistant.llm import describe_device
    from ingest.store import ChunkStore

    status = IndexStatus(resources=len(resources), offline=settings.crawl.offline)
    manifest = searcher.manifest
    status.chunks, status.indexed_resources = manifest.chunks, manifest.resources
    status.index_type, status.model = manifest.index_type, manifest.model_id
    status.built_at = _iso(manifest.built_at)
    status.model_device = describe_device(settings)
    status.index_bytes = _dir_bytes(settings.index_dir)
    with_pages = {c.resource_id for c in searcher.chunks if c.source_kind != "card"}
    status.card_only = sum(1 for r in resources if r.id not in with_pages)
    if settings.store_file.exists():
        report = ChunkStore(settings.store_file).last_report()
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
    _list_status(settings, resources, status)
    return status


def _list_status(settings: Settings, resources: list[Resource], status: IndexStatus) -> None:
    from ingest.listsync import catalog_version, last_sync
    from ingest.refresh import pending_crawl

    status.list_version = catalog_version(resources)
    record = last_sync(settings)
    if record is not None and record.version == status.list_version:
        status.list_source, status.list_synced_at, status.list_changes = (
            record.source, record.synced_at, record.summary())
        titles = [f"added: {a['title']}" for a in record.added]
        titles += [f"removed: {r['title']}" for r in record.removed]
        titles += [f"changed ({', '.join(c.fields)}): {c.title}" for c in record.changed]
        status.list_changed_titles = titles[:12]
    status.crawl_pending = len(pending_crawl(settings, resources))


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
