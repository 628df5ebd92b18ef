"""Chunk text, metadata and the catalog inside the index dir, in SQLite (JSON columns, no pickles).

Row order is the BM25 document order; each row also carries the chunk's FAISS id, so a dense hit, a BM25
score and a chunk meet on the same row. Resources live here too, so search works without the catalog.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.migrate import Migration, MigrationError, check_not_newer, latest_version, migrate
from core.records import Chunk, Resource
from index.records import REBUILD_HINT, IndexLoadError
from index.vectors import vector_id

DOCSTORE_FILE = "chunks.sqlite3"

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS chunks (
    row INTEGER PRIMARY KEY, vid INTEGER NOT NULL UNIQUE, chunk_id TEXT NOT NULL UNIQUE,
    resource_id TEXT NOT NULL, url TEXT NOT NULL, heading_path TEXT NOT NULL, start INTEGER NOT NULL,
    "end" INTEGER NOT NULL, text TEXT NOT NULL, context TEXT NOT NULL, source_kind TEXT NOT NULL,
    extra TEXT NOT NULL, content_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS resources (id TEXT PRIMARY KEY, position INTEGER NOT NULL, data TEXT NOT NULL);
"""

MIGRATIONS: list[Migration] = [
    # 1: the layout from before schema versions (IF NOT EXISTS, so an existing index is adopted as it is)
    (1, _SCHEMA_V1),
    # append (2, ...) here; never edit a released step
]


def content_hash(chunk: Chunk) -> str:
    """What decides whether a chunk's vector is still valid: the exact text the model saw."""
    return hashlib.sha256(chunk.indexed_text.encode()).hexdigest()


@dataclass
class DocStore:
    """All chunks and resources of one index, in memory (a few MB for thousands of chunks)."""

    chunks: list[Chunk]
    vids: np.ndarray  # int64 FAISS id per row
    hashes: list[str]
    resources: dict[str, Resource]

    def __post_init__(self) -> None:
        self.row_of_vid = {int(v): i for i, v in enumerate(self.vids)}
        self._vid_order = np.argsort(self.vids, kind="stable")
        self._sorted_vids = self.vids[self._vid_order]
        order = {rid: i for i, rid in enumerate(self.resources)}
        self.resource_rows = np.array([order.get(c.resource_id, -1) for c in self.chunks], dtype=np.int64)
        self.resource_list = list(self.resources.values())

    def rows_of_vids(self, vids: np.ndarray) -> np.ndarray:
        """The row of each FAISS id (all known), in one vectorised lookup (a search returns hundreds)."""
        if len(vids) == 0:
            return np.zeros(0, dtype=np.int64)
        return self._vid_order[np.searchsorted(self._sorted_vids, vids)].astype(np.int64)

    @classmethod
    def from_records(cls, chunks: list[Chunk], resources: list[Resource]) -> DocStore:
        known = {r.id: r for r in resources}
        return cls(
            chunks=list(chunks),
            vids=np.array([vector_id(c.chunk_id) for c in chunks], dtype=np.int64),
            hashes=[content_hash(c) for c in chunks],
            resources=known,
        )

    def write(self, path: Path) -> None:
        db = sqlite3.connect(str(path))
        try:
            migrate(db, MIGRATIONS, path=path, what="chunk table")
            db.executemany(
                "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        row, int(self.vids[row]), c.chunk_id, c.resource_id, c.url,
                        json.dumps(list(c.heading_path), ensure_ascii=False), c.start, c.end, c.text, c.context,
                        c.source_kind, json.dumps(c.extra, ensure_ascii=False, default=str), self.hashes[row],
                    )
                    for row, c in enumerate(self.chunks)
                ],
            )
            db.executemany(
                "INSERT INTO resources VALUES (?,?,?)",
                [(r.id, i, json.dumps(r.to_dict(), ensure_ascii=False)) for i, r in enumerate(self.resources.values())],
            )
            db.commit()
        finally:
            db.close()

    @classmethod
    def read(cls, path: Path) -> DocStore:
        if not path.exists():
            raise IndexLoadError(f"the chunk table {path} is missing; {REBUILD_HINT}")
        _upgrade(path)
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                rows = db.execute(
                    'SELECT vid, chunk_id, resource_id, url, heading_path, start, "end", text, context,'
                    " source_kind, extra, content_hash FROM chunks ORDER BY row"
                ).fetchall()
                res_rows = db.execute("SELECT data FROM resources ORDER BY position").fetchall()
            finally:
                db.close()
            chunks = [
                Chunk(
                    chunk_id=r[1], resource_id=r[2], url=r[3], heading_path=tuple(json.loads(r[4])), start=r[5],
                    end=r[6], text=r[7], context=r[8], source_kind=r[9], extra=json.loads(r[10]),
                )
                for r in rows
            ]
            resources = [Resource.from_dict(json.loads(r[0])) for r in res_rows]
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise IndexLoadError(f"the chunk table {path} is corrupt ({exc.__class__.__name__}); {REBUILD_HINT}") from None
        return cls(
            chunks=chunks,
            vids=np.array([r[0] for r in rows], dtype=np.int64),
            hashes=[r[11] for r in rows],
            resources={r.id: r for r in resources},
        )

    def resource_of(self, row: int) -> Resource | None:
        index = int(self.resource_rows[row])
        return self.resource_list[index] if index >= 0 else None


def _upgrade(path: Path) -> None:
    """Bring an index written by an older gpuguide to this schema in place (read-only until needed)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            found = check_not_newer(db, MIGRATIONS, path=path, what="chunk table")
        finally:
            db.close()
        if found == latest_version(MIGRATIONS):
            return
        db = sqlite3.connect(str(path))
        try:
            migrate(db, MIGRATIONS, path=path, what="chunk table")
        finally:
            db.close()
    except MigrationError as exc:
        raise IndexLoadError(str(exc)) from None
    except sqlite3.Error as exc:
        raise IndexLoadError(
            f"the chunk table {path} cannot be read or upgraded ({exc.__class__.__name__}: {exc}); {REBUILD_HINT}"
        ) from None
