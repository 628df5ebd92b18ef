"""The operations the CLI, the app and bench/ share, as plain functions over `Settings` (no printing):
an index built from the stored chunks, the reading planner as the evaluator calls it.

They live here rather than in `assistant/cli.py` so that nothing imports the CLI: the CLI is the outer
shell and only calls inwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from core.errors import UserError
from core.settings import Settings
from index.records import BuildReport
from ingest.catalog import current_catalog

if TYPE_CHECKING:
    from ingest.refresh import CatalogRefresh

log = logging.getLogger(__name__)

__all__ = ["build_index_from_store", "current_catalog", "eval_planner", "refresh_and_index"]


def build_index_from_store(settings: Settings, rebuild: bool = False, embedder: Any = None) -> BuildReport:
    """Index every chunk in the store against the catalog in use (incremental unless `rebuild`)."""
    return refresh_and_index(settings, rebuild=rebuild, embedder=embedder)[1]


def refresh_and_index(
    settings: Settings, rebuild: bool = False, embedder: Any = None
) -> tuple[CatalogRefresh, BuildReport]:
    """Bring the store's cards and context headers in line with the catalog in use (a list update needs no
    crawl: `ingest/refresh.py`), then index every stored chunk (incremental unless `rebuild`)."""
    from index.build import build_index
    from ingest.refresh import refresh_from_catalog
    from ingest.store import ChunkStore

    resources = current_catalog(settings)
    refresh = refresh_from_catalog(settings, resources)
    chunks = ChunkStore(settings.store_file).chunks()
    return refresh, build_index(chunks, resources, settings, rebuild=rebuild, embedder=embedder)


def eval_planner(settings: Settings) -> Callable[[str, list[str], int], list[str]]:
    """The reading planner as `index.evaluate.run_eval` calls it: (question, read URLs, k) → picked URLs."""
    from assistant.planner import plan_next
    from assistant.profile import resolve_resource

    resources = current_catalog(settings)

    def planner(question: str, read_urls: list[str], k: int) -> list[str]:
        read = set()
        for url in read_urls:
            try:
                read.add(resolve_resource(url, resources).id)
            except UserError:
                log.warning("eval: read URL %s is not in the catalog", url)
        return [p.resource.url for p in plan_next(resources, read, interest=question, k=k).picks]

    return planner
