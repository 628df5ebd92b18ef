"""LangChain adapter: the searcher as a `BaseRetriever`, one Document per returned passage.

Documents come in resource rank order (each resource's best passages first), with the metadata a citation
needs: resource id, title, url, topic, section, tier, list anchor, kind, scores and the chunk id.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from index.records import ResourceHit


def hit_documents(hits: list[ResourceHit], passages_per_resource: int = 1) -> list[Document]:
    docs = []
    for rank, hit in enumerate(hits, start=1):
        r = hit.resource
        for chunk, passage_score in hit.passages[:passages_per_resource]:
            docs.append(
                Document(
                    page_content=chunk.text,
                    metadata={
                        "resource_id": r.id, "title": r.title, "url": r.url, "topic": r.topic,
                        "section": r.section, "tier": r.tier, "list_anchor": r.list_anchor, "kind": r.kind,
                        "score": hit.score, "passage_score": passage_score, "confidence": hit.confidence,
                        "rank": rank, "chunk_id": chunk.chunk_id, "heading_path": list(chunk.heading_path),
                        "source_kind": chunk.source_kind, "context": chunk.context,
                    },
                )
            )
    return docs


class GuideRetriever(BaseRetriever):
    """`GuideRetriever(searcher=load_searcher(settings), k=5).invoke("what is TMA?")`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    searcher: Any  # index.search.Searcher (Any keeps pydantic from inspecting it)
    k: int = 5
    mode: str = "hybrid+rerank"
    tier: int | None = None
    topic: str | None = None
    kind: str | None = None
    exclude_read: set[str] = Field(default_factory=set)
    passages_per_resource: int = 1

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.searcher.search(
            query, k=self.k, mode=self.mode, tier=self.tier, topic=self.topic, kind=self.kind,
            exclude_read=self.exclude_read or None,
        )
        return hit_documents(hits, self.passages_per_resource)
