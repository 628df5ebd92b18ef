"""Schema versions: every SQLite store adopts a file in the layout from before versions, refuses a newer
file with one clear line, and rolls a failed upgrade back to the file as it was.

The "today's schema" fixtures are written out here on purpose (not imported from the stores): they are
the layout user data dirs already hold, and must keep opening however the stores' code changes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import assistant.profile as profile_module
import index.docstore as docstore_module
import index.embed as embed_module
import ingest.store as store_module
from assistant.profile import Profile
from core.errors import UserError
from core.migrate import migrate
from core.records import Resource
from index.docstore import DocStore
from index.embed import EmbeddingCache
from ingest.store import ChunkStore

CHUNK_STORE_V0 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    resource_id TEXT NOT NULL, url TEXT NOT NULL, source_kind TEXT NOT NULL, title TEXT NOT NULL,
    text TEXT NOT NULL, authors TEXT NOT NULL, date TEXT NOT NULL, content_hash TEXT NOT NULL,
    source_hash TEXT NOT NULL DEFAULT '', chunker TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (resource_id, url, source_kind)
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY, resource_id TEXT NOT NULL, url TEXT NOT NULL, source_kind TEXT NOT NULL,
    ordinal INTEGER NOT NULL, heading_path TEXT NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL,
    text TEXT NOT NULL, context TEXT NOT NULL, extra TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_resource ON chunks (resource_id, ordinal);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT NOT NULL, finished TEXT NOT NULL, counts TEXT NOT NULL,
    info TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS report (
    url TEXT NOT NULL, resource_id TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
    bytes INTEGER NOT NULL, chunks INTEGER NOT NULL, seconds REAL NOT NULL
);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO documents VALUES ('occupancy', 'https://a.example/occ', 'html', 'Occupancy', 'Warps hide latency.',
    'A. Author', '2024', 'hash-1', 'body-1', 'v1:165');
"""

EMBED_CACHE_V0 = """
CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB);
"""

DOCSTORE_V0 = """
CREATE TABLE chunks (
    row INTEGER PRIMARY KEY, vid INTEGER NOT NULL UNIQUE, chunk_id TEXT NOT NULL UNIQUE,
    resource_id TEXT NOT NULL, url TEXT NOT NULL, heading_path TEXT NOT NULL, start INTEGER NOT NULL,
    "end" INTEGER NOT NULL, text TEXT NOT NULL, context TEXT NOT NULL, source_kind TEXT NOT NULL,
    extra TEXT NOT NULL, content_hash TEXT NOT NULL
);
CREATE TABLE resources (id TEXT PRIMARY KEY, position INTEGER NOT NULL, data TEXT NOT NULL);
INSERT INTO chunks VALUES (0, 42, 'occupancy#0', 'occupancy', 'https://a.example/occ', '["Intro"]', 0, 19,
    'Warps hide latency.', '', 'html', '{}', 'hash-1');
"""

PROFILE_V0 = """
CREATE TABLE IF NOT EXISTS read (resource_id TEXT PRIMARY KEY, read_at REAL NOT NULL);
INSERT INTO read VALUES ('occupancy', 1700000000.0);
"""

VECTOR = np.arange(4, dtype=np.float32)
RESOURCE = Resource("occupancy", "Occupancy", "https://a.example/occ", "A. Author", "", "Kernels", "Basics", 1,
                    "html", 0, "kernels")


def _fill_embed_cache(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO embeddings VALUES ('key-1', 4, ?)", (VECTOR.tobytes(),))


def _fill_docstore(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO resources VALUES ('occupancy', 0, ?)", (json.dumps(RESOURCE.to_dict()),))


def _read_chunk_store(path: Path) -> object:
    return [(d.resource_id, d.text) for d in ChunkStore(path).documents()]


def _read_embed_cache(path: Path) -> object:
    cache = EmbeddingCache(path)
    try:
        return {k: v.tolist() for k, v in cache.get_many(["key-1"]).items()}
    finally:
        cache.close()


def _read_docstore(path: Path) -> object:
    store = DocStore.read(path)
    return [(c.chunk_id, c.text) for c in store.chunks], list(store.resources)


def _read_profile(path: Path) -> object:
    return Profile(path).read_ids()


@dataclass(frozen=True)
class StoreCase:
    name: str
    module: ModuleType
    list_name: str
    today_sql: str
    fill: Callable[[sqlite3.Connection], None] | None
    open_and_read: Callable[[Path], object]
    expected: object


CASES = [
    StoreCase("chunk store", store_module, "MIGRATIONS", CHUNK_STORE_V0, None, _read_chunk_store,
              [("occupancy", "Warps hide latency.")]),
    StoreCase("embedding cache", embed_module, "CACHE_MIGRATIONS", EMBED_CACHE_V0, _fill_embed_cache,
              _read_embed_cache, {"key-1": [0.0, 1.0, 2.0, 3.0]}),
    StoreCase("index chunk table", docstore_module, "MIGRATIONS", DOCSTORE_V0, _fill_docstore, _read_docstore,
              ([("occupancy#0", "Warps hide latency.")], ["occupancy"])),
    StoreCase("reading profile", profile_module, "MIGRATIONS", PROFILE_V0, None, _read_profile, {"occupancy"}),
]


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest) -> StoreCase:
    return request.param


def _today_file(case: StoreCase, path: Path) -> Path:
    """A file as the code before schema versions left it: today's tables, one row, user_version 0."""
    db = sqlite3.connect(path)
    try:
        db.executescript(case.today_sql)
        if case.fill is not None:
            case.fill(db)
        db.commit()
    finally:
        db.close()
    return path


def _version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()


def _snapshot(path: Path) -> tuple[int, list[str]]:
    """Everything a migration could change: the version and a full SQL dump (schema and rows)."""
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0]), list(db.iterdump())
    finally:
        db.close()


def test_a_file_from_before_versions_is_migrated_in_place_and_keeps_its_rows(case: StoreCase, tmp_path: Path) -> None:
    path = _today_file(case, tmp_path / "store.sqlite3")
    assert _version(path) == 0

    assert case.open_and_read(path) == case.expected

    assert _version(path) == len(getattr(case.module, case.list_name))


def test_opening_a_migrated_file_again_keeps_its_rows(case: StoreCase, tmp_path: Path) -> None:
    path = _today_file(case, tmp_path / "store.sqlite3")
    case.open_and_read(path)
    assert case.open_and_read(path) == case.expected


def test_a_file_from_a_newer_gpuguide_is_refused_with_one_line_naming_it(case: StoreCase, tmp_path: Path) -> None:
    path = _today_file(case, tmp_path / "store.sqlite3")
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 999")
    db.close()
    before = _snapshot(path)

    with pytest.raises(UserError) as excinfo:
        case.open_and_read(path)

    message = str(excinfo.value)
    assert "\n" not in message and str(path) in message
    assert "999" in message and "upgrade gpuguide" in message
    assert _snapshot(path) == before


def test_a_failing_migration_rolls_back_and_leaves_the_file_as_it_was(
    case: StoreCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _today_file(case, tmp_path / "store.sqlite3")
    before = _snapshot(path)
    steps = getattr(case.module, case.list_name)
    broken = (len(steps) + 1, "CREATE TABLE added_by_step (x); DELETE FROM sqlite_master_no_such_table")
    monkeypatch.setattr(case.module, case.list_name, [*steps, broken])

    with pytest.raises(UserError) as excinfo:
        case.open_and_read(path)

    assert str(path) in str(excinfo.value) and "unchanged" in str(excinfo.value)
    assert _snapshot(path) == before  # version 0, no new table, the row still there


def test_a_new_file_starts_at_the_newest_version(case: StoreCase, tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite3"
    if case.module is docstore_module:
        DocStore.from_records([], [RESOURCE]).write(path)
    else:
        case.open_and_read(path)
    assert _version(path) == len(getattr(case.module, case.list_name))


def test_a_chunk_store_in_an_unknown_older_layout_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE documents (resource_id TEXT, url TEXT)")
    db.execute("INSERT INTO documents VALUES ('occupancy', 'https://a.example/occ')")
    db.commit()
    db.close()
    before = _snapshot(path)

    with pytest.raises(UserError, match="lacks column"):
        ChunkStore(path)

    assert _snapshot(path) == before


def test_steps_run_in_order_once_each(tmp_path: Path) -> None:
    ran: list[int] = []
    steps = [
        (1, "CREATE TABLE t (x)"),
        (2, lambda db: ran.append(2)),
        (3, "INSERT INTO t VALUES (3)"),
    ]
    db = sqlite3.connect(tmp_path / "t.sqlite3")
    assert migrate(db, steps[:2], path="t", what="test store") == 0
    assert migrate(db, steps, path="t", what="test store") == 2
    assert migrate(db, steps, path="t", what="test store") == 3
    assert ran == [2] and db.execute("SELECT x FROM t").fetchall() == [(3,)]


def test_a_misnumbered_migration_list_is_a_programming_error(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "t.sqlite3")
    with pytest.raises(ValueError, match="out of order"):
        migrate(db, [(1, "SELECT 1"), (3, "SELECT 1")], path="t", what="test store")
