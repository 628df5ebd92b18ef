"""The GPU path's tokenizer: the model's own Rust tokenizer called directly, in this process or in worker processes.

Why not the model's `tokenize`: the Python wrapper spends most of its time converting encodings (measured on an
H200 machine: 2.2k texts/s through the wrapper, 6.6k/s for the Rust batch encoding alone, the fp16 forward pass
at 28k/s, 41k/s once measured alone). Calling the Rust tokenizer on a few threads reached 13.5-15.3k texts/s at
200k texts there: the conversion of its output holds the GIL. Worker processes (one core each, no shared GIL)
reached 15.1k with torch's CPU threads held at one (index/embed.py). Small jobs stay in-process: starting
the workers costs about 2 s (20k texts: 4.7k/s in workers, 11k/s on threads).
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Self

import numpy as np

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

_worker_tokenizer: Tokenizer | None = None  # one per worker process, built by _start_worker


def token_ids(tokenizer: Tokenizer, batch: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, all ids end to end) as int32: two flat arrays cross a process boundary cheaply."""
    encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch  # fast: no offsets
    encodings = encode([t.strip() for t in batch])  # as sentence-transformers' own preprocessing does
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int32, count=len(encodings))
    flat = np.fromiter(
        itertools.chain.from_iterable(e.ids for e in encodings), dtype=np.int32, count=int(lengths.sum())
    )
    return lengths, flat


def _start_worker(tokenizer_json: str) -> None:
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the pool is the parallelism: one core per worker
    global _worker_tokenizer
    from tokenizers import Tokenizer

    _worker_tokenizer = Tokenizer.from_str(tokenizer_json)


def _token_ids_in_worker(batch: list[str]) -> tuple[np.ndarray, np.ndarray]:
    assert _worker_tokenizer is not None, "worker started without its tokenizer"
    return token_ids(_worker_tokenizer, batch)


class FastTokenizer:
    """Texts → the model's input tensors (input_ids, attention_mask, token_type_ids when the model takes them).

    Use `for_model` to get one; it answers None for a model this shortcut cannot serve exactly, and the caller
    keeps the model's own `tokenize`. With `processes(n)` as a context manager, batches are tokenized in n
    worker processes (spawned, so a CUDA context is never forked).
    """

    def __init__(self, tokenizer: Tokenizer, pad_id: int, with_types: bool, extras: dict[str, Any]) -> None:
        self._tokenizer = tokenizer
        self._pad_id = pad_id
        self._with_types = with_types
        self._extras = extras
        self._pool: ProcessPoolExecutor | None = None

    @classmethod
    def for_model(cls, model: SentenceTransformer) -> FastTokenizer | None:
        import torch

        backend = getattr(getattr(model, "tokenizer", None), "backend_tokenizer", None)
        prepare = getattr(model, "preprocess", None) or model.tokenize
        max_len = getattr(model, "max_seq_length", None)
        if backend is None or not max_len or getattr(model[0], "do_lower_case", False):
            return None
        try:
            from tokenizers import Tokenizer

            sample = prepare(["a b"])
            tensors = {k for k, v in sample.items() if isinstance(v, torch.Tensor)}
            if not {"input_ids", "attention_mask"} <= tensors <= {"input_ids", "attention_mask", "token_type_ids"}:
                return None
            tokenizer = Tokenizer.from_str(backend.to_str())
            tokenizer.enable_truncation(max_length=int(max_len))
            tokenizer.no_padding()  # padded in one numpy step: per-token Python work is what is slow
            if any(tokenizer.encode("a b").type_ids):
                return None  # a model that marks single texts with non-zero token types: keep the general path
        except Exception as exc:  # noqa: BLE001 - any surprise means the general path, never a wrong vector
            log.info("fast tokenization unavailable (%s); using the model's preprocess", exc)
            return None
        extras = {k: v for k, v in sample.items() if k not in tensors}
        return cls(tokenizer, int(model.tokenizer.pad_token_id or 0), "token_type_ids" in tensors, extras)

    def processes(self, n: int) -> Self:
        """Tokenize in n worker processes until the `with` block ends (n < 2: in this process)."""
        if n >= 2:
            self._pool = ProcessPoolExecutor(
                max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker, initargs=(self._tokenizer.to_str(),),
            )
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __call__(self, batch: list[str]) -> dict[str, Any]:
        if self._pool is not None:  # the calling thread waits with the GIL released
            lengths, flat = self._pool.submit(_token_ids_in_worker, batch).result()
        else:
            lengths, flat = token_ids(self._tokenizer, batch)
        return self._features(lengths, flat)

    def _features(self, lengths: np.ndarray, flat: np.ndarray) -> dict[str, Any]:
        import torch

        mask = np.arange(int(lengths.max())) < lengths[:, None]
        ids = np.full(mask.shape, self._pad_id, dtype=np.int64)
        ids[mask] = flat  # row-major fill: each row's tokens in order, then its padding
        out: dict[str, torch.Tensor] = {
            "input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask.astype(np.int64)),
        }
        if self._with_types:
            out["token_type_ids"] = torch.zeros_like(out["input_ids"])
        return {**out, **self._extras}
