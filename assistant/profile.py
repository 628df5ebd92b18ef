"""The learner's reading progress, persisted in SQLite in the data dir (survives restarts)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import UserError
from core.migrate import Migration, migrate
from core.records import Resource

MIGRATIONS: list[Migration] = [
    # 1: the layout from before schema versions (IF NOT EXISTS, so an existing profile is adopted as it is)
    (1, "CREATE TABLE IF NOT EXISTS read (resource_id TEXT PRIMARY KEY, read_at REAL NOT NULL)"),
    # append (2, ...), (3, ...) here; never edit a released step
]


class ProfileError(UserError):
    """The profile file cannot be used."""


class Profile:
    """Read resources by id; ids are the catalog's stable URL slugs, so they survive catalog syncs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(self.path, timeout=10)
            try:
                migrate(db, MIGRATIONS, path=path, what="reading profile")
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            raise ProfileError(f"{path}: not a usable profile database ({exc}); move it aside to start afresh") from None

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=10)
        try:
            with db:
                yield db
        finally:
            db.close()

    def read_ids(self) -> set[str]:
        with self._connect() as db:
            return {row[0] for row in db.execute("SELECT resource_id FROM read")}

    def mark_read(self, ids: Iterable[str]) -> None:
        now = time.time()
        with self._connect() as db:
            db.executemany(
                "INSERT OR IGNORE INTO read (resource_id, read_at) VALUES (?, ?)", [(i, now) for i in ids]
            )

    def mark_unread(self, ids: Iterable[str]) -> None:
        with self._connect() as db:
            db.executemany("DELETE FROM read WHERE resource_id = ?", [(i,) for i in ids])

    def set_read(self, resource_id: str, read: bool) -> None:
        (self.mark_read if read else self.mark_unread)([resource_id])


def resolve_resource(ref: str, resources: list[Resource]) -> Resource:
    """A resource from an id, a URL (trailing slash and scheme ignored) or an exact title."""
    key = _url_key(ref)
    for res in resources:
        if ref in (res.id, res.title) or (res.url and _url_key(res.url) == key):
            return res
    raise UserError(f"{ref!r} is not in the catalog; use an id or URL from 'gpuguide catalog --json'")


def _url_key(url: str) -> str:
    return url.strip().lower().split("://", 1)[-1].removeprefix("www.").rstrip("/")
