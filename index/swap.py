"""Atomic replacement of the index directory: build beside it, then swap with two `os.replace` calls.

The old index is renamed aside (not deleted) until the new one is in place, so a crash at any instant leaves
either the old or the new index loadable; `recover_interrupted_swap` puts the old one back when a crash fell
between the two renames.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

BUILD_PREFIX = ".index-build-"


def _aside(target: Path) -> Path:
    return target.parent / f".{target.name}-previous"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_tree(path: Path) -> None:
    """Flush every file of a finished build before it is renamed into place."""
    for file in path.rglob("*"):
        if file.is_file():
            with open(file, "rb") as handle:
                os.fsync(handle.fileno())
    _fsync_dir(path)


def recover_interrupted_swap(target: Path) -> None:
    """A crash between the two renames left only the old index aside: put it back."""
    aside = _aside(target)
    if not target.exists() and aside.exists():
        log.warning("restoring the previous index after an interrupted swap")
        os.replace(aside, target)


def new_build_dir(target: Path) -> Path:
    """A fresh temporary directory next to `target` (same filesystem, so the final rename is atomic).

    Leftovers of builds killed earlier are removed first.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_interrupted_swap(target)
    for stale in target.parent.glob(f"{BUILD_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=BUILD_PREFIX, dir=target.parent))


def swap_into_place(built: Path, target: Path) -> None:
    fsync_tree(built)
    aside = _aside(target)
    if target.exists():
        if aside.exists():
            shutil.rmtree(aside)
        os.replace(target, aside)
    os.replace(built, target)
    _fsync_dir(target.parent)
    shutil.rmtree(aside, ignore_errors=True)
