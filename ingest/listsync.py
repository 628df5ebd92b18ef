"""`gpuguide catalog sync`: fetch the list (its upstream raw URL by default), store it, and record what
changed — the list's version and the added, removed and changed entries — for `gpuguide index`, the app's
status tab and the crawl queue.

Why a record: a sync only replaces the catalog file; the store, the index and the crawl catch up later
(`gpuguide index` rebuilds the cards and context headers of changed resources, new ones are crawled by
`gpuguide ingest --pending` or the app), and the learner should see which version of the list they read.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.errors import UserError
from core.files import atomic_write_text
from core.records import Resource
from core.settings import Settings
from ingest.catalog import CatalogError, current_catalog, sync_catalog

log = logging.getLogger(__name__)

SYNC_FILE = "catalog-sync.json"
# Fields that say nothing about a resource itself: a move in the list renumbers everything after it.
_IGNORED_FIELDS = {"position"}


@dataclass
class ChangedEntry:
    id: str
    title: str
    fields: list[str]  # which record fields changed, e.g. ["note"]


@dataclass
class SyncRecord:
    """One sync: where the list came from, its version (content hash of the parsed entries) and the diff."""

    source: str
    synced_at: str
    version: str
    previous_version: str
    resources: int
    format: str = "current"
    added: list[dict[str, str]] = field(default_factory=list)  # {id, title}
    removed: list[dict[str, str]] = field(default_factory=list)
    changed: list[ChangedEntry] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        if self.unchanged:
            return f"list version {self.version}: no entry changed"
        return (f"list version {self.version} (was {self.previous_version}): {len(self.added)} added, "
                f"{len(self.removed)} removed, {len(self.changed)} changed")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SyncRecord:
        data = dict(data)
        data["changed"] = [ChangedEntry(**c) for c in data.get("changed", [])]
        return cls(**data)


def catalog_version(resources: list[Resource]) -> str:
    """A short content hash of the parsed entries: equal lists give equal versions, whatever their bytes."""
    payload = json.dumps([r.to_dict() for r in resources], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def diff_catalogs(old: list[Resource], new: list[Resource]) -> tuple[list[Resource], list[Resource], list[ChangedEntry]]:
    """(added, removed, changed) between two catalogs, matched by resource id."""
    before, after = {r.id: r for r in old}, {r.id: r for r in new}
    added = [r for r in new if r.id not in before]
    removed = [r for r in old if r.id not in after]
    changed = []
    for res in new:
        prev = before.get(res.id)
        if prev is None:
            continue
        a, b = prev.to_dict(), res.to_dict()
        fields = [k for k in b if k not in _IGNORED_FIELDS and a.get(k) != b.get(k)]
        if fields:
            changed.append(ChangedEntry(res.id, res.title, fields))
    return added, removed, changed


def sync_file(settings: Settings) -> Path:
    return settings.home / SYNC_FILE


def sync_list(settings: Settings, source: str | None = None, *, force: bool = False) -> SyncRecord:
    """Fetch and store the list (`source`, else `catalog.upstream_url`) and record what changed."""
    if source is None:
        source = settings.catalog.upstream_url
        if settings.crawl.offline:
            raise UserError(f"catalog sync: offline (crawl.offline), cannot fetch {source}; "
                            "pass --from FILE with a copy of the list")
    previous = current_catalog(settings)
    try:
        parse = sync_catalog(source, settings.catalog_file, force=force, max_shrink=settings.catalog.max_shrink,
                             crawl=settings.crawl)
    except CatalogError as exc:
        if source == settings.catalog.upstream_url:
            raise UserError(f"catalog sync: {exc} (offline? pass --from FILE)") from None
        raise
    added, removed, changed = diff_catalogs(previous, parse.resources)
    record = SyncRecord(
        source=source, synced_at=datetime.now(UTC).isoformat(timespec="seconds"),
        version=catalog_version(parse.resources), previous_version=catalog_version(previous),
        resources=len(parse.resources), format=parse.format,
        added=[{"id": r.id, "title": r.title} for r in added],
        removed=[{"id": r.id, "title": r.title} for r in removed],
        changed=changed,
    )
    atomic_write_text(sync_file(settings), json.dumps(record.to_dict(), ensure_ascii=False, indent=1))
    log.info("%s", record.summary())
    return record


def last_sync(settings: Settings) -> SyncRecord | None:
    """The last sync's record, or None (the bundled list, or a record that cannot be read)."""
    path = sync_file(settings)
    if not path.exists():
        return None
    try:
        return SyncRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError) as exc:
        log.warning("%s: unreadable sync record (%s); ignored", path, exc)
        return None
