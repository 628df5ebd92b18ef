"""Records the index stage hands out: resource-level hits, build reports, and the one load error."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import UserError
from core.records import Chunk, Resource

MODES = ("bm25", "dense", "hybrid", "hybrid+rerank")
# What a search means for the learner: "answer" (a confident match), "weak" (answer anyway, marked as a weak match,
# with the nearest resources shown) or "out_of_scope" (nothing in the guide is near; the only refusal).
OUTCOMES = ("answer", "weak", "out_of_scope")
REBUILD_HINT = "run `gpuguide index --rebuild`"


class IndexLoadError(UserError):
    """The index on disk cannot be used (missing, corrupt, built for another model); one line, names the fix."""


IndexError_ = IndexLoadError  # the name the issue uses; kept as an alias so both import


@dataclass
class ResourceHit:
    """One resource of the list with the passages that matched, best first.

    `score` orders hits within one search (its scale depends on the mode); `confidence` is the best passage's
    cosine similarity to the query, comparable across queries. `query` is the search that found the hit, so
    `Searcher.outcome` can judge a hit list on its own.
    """

    resource: Resource
    score: float
    passages: list[tuple[Chunk, float]] = field(default_factory=list)
    confidence: float = 0.0
    query: str = field(default="", repr=False, compare=False)

    @property
    def url(self) -> str:
        return self.resource.url

    @property
    def chunk_ids(self) -> list[str]:
        return [chunk.chunk_id for chunk, _ in self.passages]


@dataclass
class BuildReport:
    """What `build_index` did; `encoded` is how many chunks needed the model (the rest came from the cache)."""

    path: str
    index_type: str
    chunks: int
    resources: int
    added: int
    removed: int
    encoded: int
    cached: int
    full_rebuild: bool
    reason: str
    seconds: float
