"""Index stage: embeddings, the FAISS store and hybrid retrieval.

Public API (imported lazily, so `import index` stays cheap):

* `build_index(chunks, resources, settings, rebuild=False) -> BuildReport`
* `load_searcher(settings) -> Searcher`; `Searcher.search(query, k, mode, tier, topic, kind, exclude_read)
  -> list[ResourceHit]`; `Searcher.outcome(query, hits) -> "answer" | "weak" | "out_of_scope"`;
  `Searcher.abstains(hits) -> bool` (outcome is out_of_scope)
* `run_eval(questions_path, modes, k, settings=..., planner=...) -> dict`
* `GuideRetriever` (LangChain `BaseRetriever`)
* `IndexLoadError` (alias `IndexError_`): the one-line "run `gpuguide index --rebuild`" error
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "build_index": "index.build",
    "load_searcher": "index.search",
    "Searcher": "index.search",
    "ResourceHit": "index.records",
    "BuildReport": "index.records",
    "IndexLoadError": "index.records",
    "IndexError_": "index.records",
    "MODES": "index.records",
    "OUTCOMES": "index.records",
    "run_eval": "index.evaluate",
    "ALL_MODES": "index.evaluate",
    "GuideRetriever": "index.retriever",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'index' has no attribute {name!r}")
