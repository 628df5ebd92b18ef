"""The one durable-write helper (core/files.py): a file is replaced whole or not at all, and no temp file stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.files import atomic_open, atomic_path, atomic_write_bytes, atomic_write_json, atomic_write_text


def test_a_write_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "catalog.json"
    target.write_text("old and longer content", encoding="utf-8")
    atomic_write_text(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.json"]


def test_missing_parent_directories_are_made(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "words.json"
    atomic_write_json(target, {"warp": 3}, indent=0)
    assert json.loads(target.read_text(encoding="utf-8")) == {"warp": 3}


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "digest.json"
    atomic_write_bytes(target, b"kept")
    with pytest.raises(RuntimeError), atomic_open(target, "wb") as out:
        out.write(b"half a fi")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"kept"
    assert [p.name for p in tmp_path.iterdir()] == ["digest.json"]


def test_a_value_json_cannot_write_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "aliases.json"
    with pytest.raises(TypeError):
        atomic_write_json(target, {"pairs": {1, 2}})
    assert list(tmp_path.iterdir()) == []


def test_text_is_written_exactly_as_given(tmp_path: Path) -> None:
    target = tmp_path / "cards.csv"
    atomic_write_text(target, "Front,Back\r\nα,β\r\n")
    assert target.read_bytes() == "Front,Back\r\nα,β\r\n".encode()


def test_a_path_the_block_writes_itself_is_renamed_into_place(tmp_path: Path) -> None:
    """For writers that take a file name (llama.cpp's state files): the block gets a temp path beside the target."""
    target = tmp_path / "prefix.llamastate"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp != target
        tmp.write_bytes(b"state")
        assert not target.exists()
    assert target.read_bytes() == b"state"
    assert [p.name for p in tmp_path.iterdir()] == ["prefix.llamastate"]


def test_only_whole_file_modes_are_accepted(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="whole file"), atomic_open(tmp_path / "x", "ab"):
        pass
