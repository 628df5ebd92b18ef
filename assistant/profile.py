"""The learner's reading progress, persisted in SQLite in the data dir (survives restarts).

Each resource is unread (no row), reading, read or skipped. "reading" is what the planner finishes first;
read and skipped are never recommended. Version 2 of the file replaced version 1's `read` table (one row per
read resource) with `states`; the migration keeps every read mark with its time.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import UserError
from core.migrate import Migration, migrate
from core.records import Resource
from core.urls import url_key

MIGRATIONS: list[Migration] = [
    # 1: the layout from before schema versions (IF NOT EXISTS, so an existing profile is adopted as it is)
    (1, "CREATE TABLE IF NOT EXISTS read (resource_id TEXT PRIMARY KEY, read_at REAL NOT NULL)"),
    # 2: reading states (unread = no row); every read mark of version 1 becomes state 'read' with its time
    (2, """
        CREATE TABLE states (
            resource_id TEXT PRIMARY KEY,
            state TEXT NOT NULL CHECK (state IN ('reading', 'read', 'skipped')),
            updated_at REAL NOT NULL
        );
        INSERT INTO states (resource_id, state, updated_at) SELECT resource_id, 'read', read_at FROM read;
        DROP TABLE read;
    """),
    # append (3, ...) here; never edit a released step
]

UNREAD, READING, READ, SKIPPED = "unread", "reading", "read", "skipped"
STATES = (UNREAD, READING, READ, SKIPPED)


class ProfileError(UserError):
    """The profile file cannot be used."""


class Profile:
    """Reading states by resource id; ids are the catalog's stable URL slugs, so they survive catalog syncs."""

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

    def states(self) -> dict[str, str]:
        """Every resource that is not unread, with its state."""
        with self._connect() as db:
            return dict(db.execute("SELECT resource_id, state FROM states"))

    def state(self, resource_id: str) -> str:
        return self.states().get(resource_id, UNREAD)

    def ids_in(self, state: str) -> set[str]:
        return {rid for rid, st in self.states().items() if st == state}

    def set_state(self, ids: Iterable[str], state: str) -> None:
        """Set the state of each id; 'unread' removes its row."""
        if state not in STATES:
            raise ProfileError(f"reading state {state!r} is unknown; use one of {', '.join(STATES)}")
        now = time.time()
        with self._connect() as db:
            if state == UNREAD:
                db.executemany("DELETE FROM states WHERE resource_id = ?", [(i,) for i in ids])
            else:
                db.executemany(
                    "INSERT INTO states (resource_id, state, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (resource_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at "
                    "WHERE state != excluded.state",
                    [(i, state, now) for i in ids],
                )

    def read_ids(self) -> set[str]:
        return self.ids_in(READ)

    def mark_read(self, ids: Iterable[str]) -> None:
        self.set_state(ids, READ)

    def mark_unread(self, ids: Iterable[str]) -> None:
        self.set_state(ids, UNREAD)

    def set_read(self, resource_id: str, read: bool) -> None:
        self.set_state([resource_id], READ if read else UNREAD)


def resolve_resource(ref: str, resources: list[Resource]) -> Resource:
    """A resource from an id, a URL (trailing slash and scheme ignored) or an exact title."""
    key = url_key(ref)
    for res in resources:
        if ref in (res.id, res.title) or (res.url and url_key(res.url) == key):
            return res
    raise UserError(f"{ref!r} is not in the catalog; use an id or URL from 'gpuguide catalog --json'")

