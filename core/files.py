"""Durable writes, the one way: write a temp file beside the target, fsync it, rename it into place.

Why one helper: a crash or a full disk mid-write must never leave a half-written catalog, index file, digest,
export or model behind, and a failed write must not leave its temp file either. Every product module that
puts a file into place goes through `atomic_path` (or the small writers on top of it); only the index swap
(index/swap.py) renames on its own, because it swaps whole directories. tests/test_architecture.py counts them.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A fresh temp path in `path`'s directory for the block to write; renamed onto `path` when the block
    ends normally, removed when it raises (the target then keeps its old content, or stays absent)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_open(path: Path, mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """An open file whose content replaces `path` (flushed and fsynced) only when the block ends normally.

    `mode` is "wb" or "w" (text: pass `encoding`, and `newline` where it matters, e.g. CSV)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file; mode {mode!r} is not 'w' or 'wb'")
    if mode == "w":
        kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as out:  # noqa: PTH123 - kwargs differ by mode
        yield out
        out.flush()
        os.fsync(out.fileno())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_open(path, "wb") as out:
        out.write(data)


def atomic_write_text(path: Path, text: str) -> None:
    """`text` as UTF-8, exactly as given (no newline translation: a CSV's \r\n stays)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any, **dump_kwargs: Any) -> None:
    """`data` as UTF-8 JSON (`ensure_ascii=False` unless given); other keywords go to `json.dump`."""
    dump_kwargs.setdefault("ensure_ascii", False)
    with atomic_open(path, "w", encoding="utf-8") as out:
        json.dump(data, out, **dump_kwargs)
