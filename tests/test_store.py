"""The SQLite chunk store: round trip, per-run atomic replacement, reuse lookups, corrupt files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.errors import UserError
from core.records import Chunk, Document
from ingest.store import ChunkStore, ReportRow, RunInfo, StoreError


def doc(resource_id: str, text: str = "Some text.", kind: str = "html") -> Document:
    return Document(resource_id=resource_id, url=f"https://{resource_id}.example/", title=resource_id.upper(),
                    text=text, authors="A. Author", date="2024-01-02", source_kind=kind, content_hash=f"h-{text}")


def chunk(resource_id: str, n: int, text: str = "Some text.") -> Chunk:
    return Chunk(chunk_id=f"{resource_id}:{n}", resource_id=resource_id, url=f"https://{resource_id}.example/",
                 heading_path=("Intro", f"Part {n}"), start=0, end=len(text), text=text,
                 context=f"{resource_id} — header", extra={"ordinal": n, "words": 2})


def row(resource_id: str, status: str = "ok", chunks: int = 2) -> ReportRow:
    return ReportRow(url=f"https://{resource_id}.example/", resource_id=resource_id, status=status,
                     reason="" if status == "ok" else "timed out", bytes=1234, chunks=chunks, seconds=0.5)


def info() -> RunInfo:
    return RunInfo(started="2024-05-01T10:00:00+00:00", finished="2024-05-01T10:01:00+00:00", extra={"offline": True})


@pytest.fixture
def store(tmp_path: Path) -> ChunkStore:
    return ChunkStore(tmp_path / "store.sqlite3")


def test_round_trip(store: ChunkStore) -> None:
    docs = [doc("a"), doc("b", "Other text.")]
    chunks = [chunk("a", 0), chunk("a", 1), chunk("b", 0, "Other text.")]
    store.replace_run(docs, chunks, [row("a"), row("b", chunks=1)], info())
    assert store.documents() == docs
    assert store.chunks() == chunks
    assert store.chunks("a") == chunks[:2]
    assert store.chunks("a")[1].heading_path == ("Intro", "Part 1")
    assert store.content_hashes() == {"https://a.example/": "h-Some text.", "https://b.example/": "h-Other text."}


def test_last_report_has_rows_and_counts(store: ChunkStore) -> None:
    assert store.last_report() is None
    store.replace_run([doc("a")], [chunk("a", 0)], [row("a"), row("b", "failed", 0), row("c", "skipped-offline", 0)],
                      info())
    report = store.last_report()
    assert report is not None
    assert report.rows[1] == ReportRow("https://b.example/", "b", "failed", "timed out", 1234, 0, 0.5)
    assert report.info.started == "2024-05-01T10:00:00+00:00"
    assert report.info.extra == {"offline": True}
    assert report.info.counts == {"ok": 1, "failed": 1, "skipped-offline": 1, "documents": 1, "chunks": 1}


def test_report_is_replaced_each_run(store: ChunkStore) -> None:
    store.replace_run([doc("a")], [chunk("a", 0)], [row("a"), row("b", "failed")], info())
    store.replace_run([], [], [row("c", "not-modified", 0)], info())
    report = store.last_report()
    assert report is not None and [r.resource_id for r in report.rows] == ["c"]


def test_run_replaces_only_the_resources_it_processed(store: ChunkStore) -> None:
    store.replace_run([doc("a"), doc("b")], [chunk("a", 0), chunk("b", 0)], [row("a"), row("b")], info())
    store.replace_run([doc("a", "New text.")], [chunk("a", 5, "New text.")], [row("a")], info())
    assert [c.chunk_id for c in store.chunks()] == ["a:5", "b:0"]
    assert {d.resource_id: d.text for d in store.documents()} == {"a": "New text.", "b": "Some text."}


def test_explicit_resource_ids_drop_stale_content(store: ChunkStore) -> None:
    store.replace_run([doc("a"), doc("b")], [chunk("a", 0), chunk("b", 0)], [row("a"), row("b")], info())
    store.replace_run([doc("a")], [chunk("a", 0)], [row("a"), row("b", "failed", 0)], info(), resource_ids=["a", "b"])
    assert [d.resource_id for d in store.documents()] == ["a"]
    assert store.chunks("b") == []


def test_failed_write_leaves_the_previous_run_intact(store: ChunkStore) -> None:
    store.replace_run([doc("a"), doc("b")], [chunk("a", 0), chunk("b", 0)], [row("a"), row("b")], info())
    before = (store.documents(), store.chunks(), store.last_report())
    duplicate_ids = [chunk("a", 0, "New."), chunk("a", 0, "New.")]  # second insert violates the primary key
    with pytest.raises(StoreError, match="not saved"):
        store.replace_run([doc("a", "New.")], duplicate_ids, [row("a")], info())
    assert (store.documents(), store.chunks(), store.last_report()) == before


def test_error_raised_mid_run_rolls_back(store: ChunkStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.replace_run([doc("a")], [chunk("a", 0)], [row("a")], info())

    def broken_json(value: object) -> str:
        raise KeyboardInterrupt  # e.g. Ctrl-C while the run is being written

    monkeypatch.setattr("ingest.store._json", broken_json)
    with pytest.raises(KeyboardInterrupt):
        store.replace_run([doc("a", "New.")], [], [row("a")], RunInfo("x", "y"))
    monkeypatch.undo()
    assert [d.text for d in store.documents()] == ["Some text."]
    assert [c.chunk_id for c in store.chunks()] == ["a:0"]


def test_cached_returns_document_and_chunks_for_same_bytes_and_chunker(store: ChunkStore) -> None:
    d, c = doc("a"), [chunk("a", 0), chunk("a", 1)]
    store.replace_run([d], c, [row("a")], info(), source_hashes={d.url: "body-1"}, chunker="v1:165")
    assert store.cached("a", d.url, "body-1", "v1:165") == (d, c)
    assert store.source_hashes() == {d.url: "body-1"}


@pytest.mark.parametrize(("body", "chunker"), [("body-2", "v1:165"), ("body-1", "v2:165"), ("", "v1:165")])
def test_cached_misses_when_bytes_or_chunker_changed(store: ChunkStore, body: str, chunker: str) -> None:
    d = doc("a")
    store.replace_run([d], [chunk("a", 0)], [row("a")], info(), source_hashes={d.url: "body-1"}, chunker="v1:165")
    assert store.cached("a", d.url, body, chunker) is None


def test_cards_are_stored_but_not_reported_as_pages(store: ChunkStore) -> None:
    store.replace_run([doc("a"), doc("a", "# A card", kind="card")], [chunk("a", 0)], [row("a")], info())
    assert sorted(d.source_kind for d in store.documents("a")) == ["card", "html"]
    assert list(store.content_hashes()) == ["https://a.example/"]


def test_lists_and_dicts_are_stored_as_json(store: ChunkStore) -> None:
    store.replace_run([doc("a")], [chunk("a", 3)], [row("a")], info())
    with sqlite3.connect(store.path) as conn:
        path, extra = conn.execute("SELECT heading_path, extra FROM chunks").fetchone()
    assert (path, extra) == ('["Intro", "Part 3"]', '{"ordinal": 3, "words": 2}')


def test_store_uses_wal_mode(store: ChunkStore) -> None:
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_corrupt_file_raises_one_line_store_error(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    path.write_bytes(b"this is not an sqlite database at all " * 200)
    with pytest.raises(StoreError) as excinfo:
        ChunkStore(path)
    message = str(excinfo.value)
    assert "\n" not in message
    assert str(path) in message
    assert "gpuguide ingest" in message


def test_corruption_found_after_opening_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = ChunkStore(path)
    store.replace_run([doc("a")], [chunk("a", 0)], [row("a")], info())
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"\x00" * 100 + path.read_bytes()[100:])  # header destroyed
    with pytest.raises(StoreError, match="gpuguide ingest"):
        store.chunks()


def test_store_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    ChunkStore(path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(UserError, match="schema version 99"):
        ChunkStore(path)
