"""Plain-function spellings of a few front-object operations (assistant/guide.py), for callers that hold
only `Settings`: an index built from the stored chunks, the reading planner as the evaluator calls it.

Each is one call on a `Guide`, so there is still one implementation of every operation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assistant.guide import Guide
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
    """`Guide.index`: the store's cards and context headers in line with the catalog in use (a list update
    needs no crawl), then every stored chunk indexed (incremental unless `rebuild`)."""
    return Guide(settings, embedder=embedder).index(rebuild=rebuild)


def eval_planner(settings: Settings) -> Callable[[str, list[str], int], list[str]]:
    """The reading planner as `index.evaluate.run_eval` calls it: (question, read URLs, k) → picked URLs.
    `Guide.plan` with no profile: only what the question's record says was read."""
    guide = Guide(settings)

    def planner(question: str, read_urls: list[str], k: int) -> list[str]:
        read = set()
        for url in read_urls:
            try:
                read.add(guide.resolve(url).id)
            except UserError:
                log.warning("eval: read URL %s is not in the catalog", url)
        return [p.resource.url for p in guide.plan(interest=question, k=k, read=read, states={}).plan.picks]

    return planner
