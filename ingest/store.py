"""The durable chunk store: extracted documents, their chunks and the last ingest run's report.

One SQLite file in the data dir (WAL mode). An ingest run is one transaction, so a crash or an
error mid-run leaves the previous run's content as it was. Lists and dicts are stored as JSON,
never pickled. Each call opens its own connection, so readers on other threads are safe.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.migrate import Migration, migrate, require_columns, split_sql
from core.records import Chunk, Document

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1"  # the `meta` row of version 1 files; the schema version itself is PRAGMA user_version
STATUSES = ("ok", "not-modified", "failed", "robots-disallowed", "skipped-offline")

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    resource_id TEXT NOT NULL,
    url TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    authors TEXT NOT NULL,
    date TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_hash TEXT NOT NULL DEFAULT '',
    chunker TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (resource_id, url, source_kind)
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    resource_id TEXT NOT NULL,
    url TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    context TEXT NOT NULL,
    extra TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_resource ON chunks (resource_id, ordinal);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started TEXT NOT NULL,
    finished TEXT NOT NULL,
    counts TEXT NOT NULL,
    info TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS report (
    url TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    seconds REAL NOT NULL
);
"""

_V1_COLUMNS = {
    "documents": ("resource_id", "url", "source_kind", "title", "text", "authors", "date", "content_hash",
                  "source_hash", "chunker"),
    "chunks": ("chunk_id", "resource_id", "url", "source_kind", "ordinal", "heading_path", "start", "end", "text",
               "context", "extra"),
    "runs": ("id", "started", "finished", "counts", "info"),
    "report": ("url", "resource_id", "status", "reason", "bytes", "chunks", "seconds"),
}


def _v1(conn: sqlite3.Connection) -> None:
    """The layout from before schema versions; a file that already has it is adopted as it is."""
    for statement in split_sql(_SCHEMA_V1):
        conn.execute(statement)
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    for table, columns in _V1_COLUMNS.items():
        require_columns(conn, table, columns, path=path, what="chunk store")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
    elif row[0] != SCHEMA_VERSION:
        raise StoreError(
            f"{path}: chunk store has schema {row[0]}, this gpuguide reads {SCHEMA_VERSION}; "
            "move it aside and re-run `gpuguide ingest`"
        )


MIGRATIONS: list[Migration] = [
    (1, _v1),
    # append (2, "ALTER TABLE ..."), ... here; never edit a released step
]


class StoreError(UserError):
    """The store file can't be used; the message is one line naming the file and what to do."""


@dataclass
class ReportRow:
    """What happened to one URL in the last run."""

    url: str
    resource_id: str
    status: str  # ok / not-modified / failed / robots-disallowed / skipped-offline
    reason: str = ""
    bytes: int = 0
    chunks: int = 0
    seconds: float = 0.0


@dataclass
class RunInfo:
    """When a run happened; `counts` is filled in by the store (statuses, documents, chunks)."""

    started: str
    finished: str
    counts: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. chunker version, catalog source, offline


@dataclass
class RunReport:
    info: RunInfo
    rows: list[ReportRow]


def _chunk_rows(chunks: list[Chunk]) -> list[tuple[Any, ...]]:
    """The `chunks` table rows, each chunk numbered in its resource's order."""
    ordinals: Counter[str] = Counter()
    rows = []
    for chunk in chunks:
        rows.append((
            chunk.chunk_id, chunk.resource_id, chunk.url, chunk.source_kind, ordinals[chunk.resource_id],
            _json(list(chunk.heading_path)), chunk.start, chunk.end, chunk.text, chunk.context,
            _json(chunk.extra),
        ))
        ordinals[chunk.resource_id] += 1
    return rows


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class ChunkStore:
    """Documents and chunks by resource, replaced one whole ingest run at a time."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._ready = False
        self._init()

    # --- connection and errors -----------------------------------------------------------------

    def _error(self, exc: sqlite3.Error) -> StoreError:
        if "locked" in str(exc) or "busy" in str(exc):
            return StoreError(f"{self.path}: the chunk store is busy ({exc}); is another `gpuguide ingest` running?")
        return StoreError(
            f"{self.path}: corrupt or unreadable chunk store ({exc}); delete it and re-run `gpuguide ingest`"
        )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            yield conn
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        finally:
            conn.close()

    def _init(self) -> None:
        if self.path.exists() and self.path.is_dir():
            raise StoreError(f"{self.path}: is a directory, not a chunk store; remove it and re-run `gpuguide ingest`")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            migrate(conn, MIGRATIONS, path=self.path, what="chunk store")

    # --- writing -------------------------------------------------------------------------------

    def replace_run(
        self,
        documents: Iterable[Document],
        chunks: Iterable[Chunk],
        report_rows: Iterable[ReportRow],
        run_info: RunInfo,
        *,
        resource_ids: Iterable[str] | None = None,
        source_hashes: Mapping[str, str] | None = None,
        chunker: str = "",
        report_scope: Iterable[str] | None = None,
    ) -> RunInfo:
        """Save one ingest run in one transaction.

        For every resource in `resource_ids` (default: those of the given documents and chunks)
        the stored documents and chunks become exactly the given ones; other resources keep theirs,
        so a page that failed to fetch this time keeps last run's text. The report is replaced.
        `source_hashes` (url → sha256 of the fetched body) and `chunker` let a later run reuse
        unchanged pages (see `cached`). On any error nothing is written.
        With `report_scope` (resource ids; a crawl of part of the catalog) only those resources' report
        rows are replaced and the run's counts cover the whole report.
        """
        documents, chunks, rows = list(documents), list(chunks), list(report_rows)
        replaced = set(resource_ids) if resource_ids is not None else (
            {d.resource_id for d in documents} | {c.resource_id for c in chunks}
        )
        source_hashes = source_hashes or {}
        chunk_rows = _chunk_rows(chunks)
        counts = dict(Counter(row.status for row in rows))
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("DELETE FROM documents WHERE resource_id = ?", [(r,) for r in replaced])
                conn.executemany("DELETE FROM chunks WHERE resource_id = ?", [(r,) for r in replaced])
                conn.executemany(
                    "INSERT INTO documents (resource_id, url, source_kind, title, text, authors, date,"
                    " content_hash, source_hash, chunker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (d.resource_id, d.url, d.source_kind, d.title, d.text, d.authors, d.date, d.content_hash,
                         source_hashes.get(d.url, "") if d.source_kind != "card" else "", chunker)
                        for d in documents
                    ],
                )
                conn.executemany(
                    'INSERT INTO chunks (chunk_id, resource_id, url, source_kind, ordinal, heading_path, start,'
                    ' "end", text, context, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                    chunk_rows,
                )
                if report_scope is None:
                    conn.execute("DELETE FROM report")
                else:
                    scope = set(report_scope) | {r.resource_id for r in rows}
                    conn.executemany("DELETE FROM report WHERE resource_id = ?", [(r,) for r in scope])
                conn.executemany(
                    "INSERT INTO report (url, resource_id, status, reason, bytes, chunks, seconds)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(r.url, r.resource_id, r.status, r.reason, r.bytes, r.chunks, r.seconds) for r in rows],
                )
                if report_scope is not None:
                    counts = dict(conn.execute("SELECT status, count(*) FROM report GROUP BY status").fetchall())
                counts["documents"] = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
                counts["chunks"] = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
                info = RunInfo(run_info.started, run_info.finished, counts, dict(run_info.extra))
                conn.execute(
                    "INSERT INTO runs (started, finished, counts, info) VALUES (?, ?, ?, ?)",
                    (info.started, info.finished, _json(info.counts), _json(info.extra)),
                )
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.rollback()
                if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.OperationalError):
                    raise StoreError(
                        f"{self.path}: ingest run not saved ({exc.__class__.__name__}: {exc}); "
                        "the previous run's content is kept"
                    ) from None
                raise
        log.info("%s: saved run: %s", self.path, counts)
        return info

    def replace_resources(
        self, documents: Iterable[Document], chunks: Iterable[Chunk], resource_ids: Iterable[str],
        *, dropped: Iterable[str] = (),
    ) -> None:
        """Set the documents and chunks of `resource_ids` to exactly the given ones, and remove every trace
        (documents, chunks, report rows) of the `dropped` resources, in one transaction; no run is recorded.
        A catalog update uses it: cards and context headers change, nothing is crawled. Documents keep
        the source hash and chunker they were stored with, so later runs still reuse them."""
        documents, chunks = list(documents), list(chunks)
        replaced, dropped = set(resource_ids), set(dropped)
        chunk_rows = _chunk_rows(chunks)
        with self._connect() as conn:
            kept = {
                (r, u, k): (sh, ck)
                for r, u, k, sh, ck in conn.execute(
                    "SELECT resource_id, url, source_kind, source_hash, chunker FROM documents"
                ).fetchall()
                if r in replaced
            }
            conn.execute("BEGIN IMMEDIATE")
            try:
                for rid in replaced | dropped:
                    conn.execute("DELETE FROM documents WHERE resource_id = ?", (rid,))
                    conn.execute("DELETE FROM chunks WHERE resource_id = ?", (rid,))
                conn.executemany("DELETE FROM report WHERE resource_id = ?", [(r,) for r in dropped])
                conn.executemany(
                    "INSERT INTO documents (resource_id, url, source_kind, title, text, authors, date,"
                    " content_hash, source_hash, chunker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (d.resource_id, d.url, d.source_kind, d.title, d.text, d.authors, d.date, d.content_hash,
                         *kept.get((d.resource_id, d.url, d.source_kind), ("", "")))
                        for d in documents
                    ],
                )
                conn.executemany(
                    'INSERT INTO chunks (chunk_id, resource_id, url, source_kind, ordinal, heading_path, start,'
                    ' "end", text, context, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                    chunk_rows,
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise

    def reported_resources(self) -> set[str]:
        """Resources any stored run has a report row for (crawled or tried)."""
        with self._connect() as conn:
            return {r for (r,) in conn.execute("SELECT DISTINCT resource_id FROM report").fetchall()}

    # --- reading -------------------------------------------------------------------------------

    def documents(self, resource_id: str | None = None) -> list[Document]:
        sql = "SELECT resource_id, url, title, text, authors, date, source_kind, content_hash FROM documents"
        with self._connect() as conn:
            rows = (
                conn.execute(sql + " WHERE resource_id = ? ORDER BY url, source_kind", (resource_id,))
                if resource_id is not None
                else conn.execute(sql + " ORDER BY resource_id, url, source_kind")
            ).fetchall()
        return [Document(*row) for row in rows]

    def chunks(self, resource_id: str | None = None) -> list[Chunk]:
        sql = (
            'SELECT chunk_id, resource_id, url, heading_path, start, "end", text, context, source_kind, extra'
            " FROM chunks"
        )
        with self._connect() as conn:
            rows = (
                conn.execute(sql + " WHERE resource_id = ? ORDER BY ordinal", (resource_id,))
                if resource_id is not None
                else conn.execute(sql + " ORDER BY resource_id, ordinal")
            ).fetchall()
        return [self._chunk(row) for row in rows]

    def _chunk(self, row: tuple[Any, ...]) -> Chunk:
        chunk_id, resource_id, url, path, start, end, text, context, kind, extra = row
        try:
            heading_path, extra_dict = tuple(json.loads(path)), json.loads(extra)
        except ValueError as exc:
            raise StoreError(
                f"{self.path}: corrupt chunk {chunk_id} ({exc}); delete the file and re-run `gpuguide ingest`"
            ) from None
        return Chunk(chunk_id, resource_id, url, heading_path, start, end, text, context, kind, extra_dict)

    def content_hashes(self) -> dict[str, str]:
        """url → sha256 of the stored extracted text (cards excluded)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT url, content_hash FROM documents WHERE source_kind != 'card'").fetchall()
        return dict(rows)

    def source_hashes(self) -> dict[str, str]:
        """url → sha256 of the fetched body the stored text came from (cards excluded)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT url, source_hash FROM documents WHERE source_kind != 'card'").fetchall()
        return dict(rows)

    def cached(self, resource_id: str, url: str, source_hash: str, chunker: str) -> tuple[Document, list[Chunk]] | None:
        """The stored document and chunks of `url` if they came from the same bytes and chunker.

        An incremental run calls this before extracting: a hit means neither extraction nor
        chunking needs redoing.
        """
        if not source_hash:
            return None
        with self._connect() as conn:
            row = conn.execute(
                "SELECT resource_id, url, title, text, authors, date, source_kind, content_hash FROM documents"
                " WHERE resource_id = ? AND url = ? AND source_hash = ? AND chunker = ? AND source_kind != 'card'",
                (resource_id, url, source_hash, chunker),
            ).fetchone()
            if row is None:
                return None
            doc = Document(*row)
            rows = conn.execute(
                'SELECT chunk_id, resource_id, url, heading_path, start, "end", text, context, source_kind, extra'
                " FROM chunks WHERE resource_id = ? AND url = ? AND source_kind = ? ORDER BY ordinal",
                (resource_id, url, doc.source_kind),
            ).fetchall()
        return doc, [self._chunk(r) for r in rows]

    def last_report(self) -> RunReport | None:
        """The last run's metadata and per-URL rows; None before the first run."""
        with self._connect() as conn:
            run = conn.execute("SELECT started, finished, counts, info FROM runs ORDER BY id DESC LIMIT 1").fetchone()
            if run is None:
                return None
            rows = conn.execute(
                "SELECT url, resource_id, status, reason, bytes, chunks, seconds FROM report ORDER BY rowid"
            ).fetchall()
        try:
            info = RunInfo(run[0], run[1], json.loads(run[2]), json.loads(run[3]))
        except ValueError as exc:
            raise StoreError(
                f"{self.path}: corrupt run record ({exc}); delete it and re-run `gpuguide ingest`"
            ) from None
        return RunReport(info, [ReportRow(*r) for r in rows])
