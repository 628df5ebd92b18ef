"""The LangChain adapter: Documents carrying what a citation needs."""

from __future__ import annotations

import pytest
from fixtures.index.corpus import build, make_settings, searcher
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from index.retriever import GuideRetriever


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> GuideRetriever:
    settings = make_settings(tmp_path_factory.mktemp("home"))
    build(settings)
    return GuideRetriever(searcher=searcher(settings), k=3)


def test_it_is_a_langchain_retriever_returning_documents(retriever: GuideRetriever) -> None:
    docs = retriever.invoke("What does the Tensor Memory Accelerator do on Hopper?")
    assert isinstance(retriever, BaseRetriever)
    assert len(docs) == 3 and all(isinstance(d, Document) for d in docs)


def test_documents_carry_resource_and_passage_metadata(retriever: GuideRetriever) -> None:
    doc = retriever.invoke("What does the Tensor Memory Accelerator do on Hopper?")[0]
    meta = doc.metadata
    assert meta["resource_id"] == "hopper-tma" and meta["url"] == "https://example.org/blog/hopper-tma"
    assert (meta["title"], meta["tier"], meta["list_anchor"]) == ("Deep Dive on the Hopper TMA Unit", 1, "#tensor-core-fundamentals")
    assert meta["topic"] == "Tensor Cores & Mixed Precision" and meta["section"] == "Tensor core fundamentals"
    assert meta["chunk_id"].startswith("hopper-tma:") and isinstance(meta["score"], float)
    assert doc.page_content in {c.text for c in retriever.searcher.chunks if c.chunk_id == meta["chunk_id"]}


def test_documents_follow_resource_rank_and_honour_filters(retriever: GuideRetriever) -> None:
    filtered = retriever.model_copy(update={"kind": "repo", "k": 2})
    docs = filtered.invoke("ring all-reduce")
    assert [d.metadata["rank"] for d in docs] == [1, 2]
    assert {d.metadata["kind"] for d in docs} == {"repo"}
