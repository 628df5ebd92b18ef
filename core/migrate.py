"""Schema versions for the SQLite stores: `PRAGMA user_version` plus one ordered migration list per store.

Why: a store's layout changes between releases, and the user's data dir (reading progress, the chunk
store, the embedding cache) must survive the upgrade instead of being deleted. Each store declares
`MIGRATIONS = [(1, ...), (2, ...), ...]`; `migrate` applies the steps newer than the file's version in
one transaction, so a failing step leaves the file exactly as it was. Version 1 of every store is the
layout that existed before versions were recorded (written with IF NOT EXISTS), so an existing file
at user_version 0 is recognised and stamped, never recreated.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from core.errors import UserError

log = logging.getLogger(__name__)

Step = str | Callable[[sqlite3.Connection], None]
"""SQL (one or more `;`-separated statements) or a function that gets the open connection."""

Migration = tuple[int, Step]


class MigrationError(UserError):
    """A store file cannot be brought to this code's schema; the message names the file and what to do."""


def latest_version(migrations: Sequence[Migration]) -> int:
    """The version a file has once every step ran; checks the list is numbered 1, 2, 3, ... in order."""
    for expected, (version, _step) in enumerate(migrations, start=1):
        if version != expected:
            raise ValueError(f"migration list out of order: step {expected} is numbered {version}")
    return len(migrations)


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def check_not_newer(conn: sqlite3.Connection, migrations: Sequence[Migration], *, path: Path | str, what: str) -> int:
    """The file's version; raises a one-line error if a newer gpuguide wrote it."""
    found, latest = user_version(conn), latest_version(migrations)
    if found > latest:
        raise MigrationError(
            f"{path}: {what} has schema version {found}, this gpuguide knows up to {latest}; "
            "upgrade gpuguide, or move the file aside to start a new one"
        )
    return found


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration], *, path: Path | str, what: str) -> int:
    """Bring the open database to the newest version in `migrations`; returns the version it had.

    All pending steps and the new `user_version` commit together, so a failure (a bad step, a crash,
    a full disk) rolls back to the file as it was. The version is read again inside the write lock,
    so two processes opening the same file at once migrate it once.
    """
    latest = latest_version(migrations)
    if check_not_newer(conn, migrations, path=path, what=what) == latest:
        return latest
    saved_isolation = conn.isolation_level
    conn.isolation_level = None  # explicit BEGIN/COMMIT: the sqlite3 module must not open or commit on its own
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = check_not_newer(conn, migrations, path=path, what=what)
            for version, step in migrations:
                if version <= found:
                    continue
                log.info("%s: migrating %s to schema version %d", path, what, version)
                _run_step(conn, step)
            conn.execute(f"PRAGMA user_version = {latest:d}")
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, UserError):
                raise
            if isinstance(exc, sqlite3.Error):
                raise MigrationError(
                    f"{path}: could not update {what} to schema version {latest} "
                    f"({exc.__class__.__name__}: {exc}); the file is unchanged; keep it for the previous gpuguide, or move it aside to start afresh"
                ) from None
            raise
    finally:
        conn.isolation_level = saved_isolation
    return found


def _run_step(conn: sqlite3.Connection, step: Step) -> None:
    if callable(step):
        step(conn)
        return
    for statement in split_sql(step):
        conn.execute(statement)


def split_sql(script: str) -> list[str]:
    """Complete statements of a script, one by one (executescript would COMMIT the open transaction)."""
    statements, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                statements.append(pending.strip())
            pending = ""
    if pending.strip(" \t\r\n;"):
        raise ValueError(f"incomplete SQL statement in migration: {pending.strip()[:60]!r}")
    return statements


def require_columns(conn: sqlite3.Connection, table: str, columns: Sequence[str], *, path: Path | str, what: str) -> None:
    """Refuse a pre-versioning file whose `table` lacks columns this code's version 1 expects."""
    have = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
    missing = [c for c in columns if c not in have]
    if missing:
        raise MigrationError(
            f"{path}: {what} table {table!r} lacks column(s) {', '.join(missing)} (unknown older layout); "
            "move the file aside to start a new one"
        )
