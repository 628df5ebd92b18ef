"""The dense index on disk: exact vs HNSW, incremental updates, persistence, and failing loudly but cleanly."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import faiss
import numpy as np
import pytest
from fixtures.index.corpus import build, load_corpus, make_settings, searcher

from core.settings import IndexSettings
from index import build as build_module
from index.records import IndexLoadError
from index.vectors import (
    FLAT,
    HNSW,
    MANIFEST_FILE,
    VectorIndex,
    choose_index_type,
    vector_id,
)


def unit(rows: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_search_up_to_the_threshold_and_hnsw_above() -> None:
    settings = IndexSettings(hnsw_threshold=100)
    assert choose_index_type(100, settings) == FLAT
    assert choose_index_type(101, settings) == HNSW


def test_build_writes_hnsw_when_the_corpus_exceeds_the_threshold(isolated_home: Path) -> None:
    report = build(make_settings(isolated_home, hnsw_threshold=10))
    manifest = json.loads((isolated_home / "index" / MANIFEST_FILE).read_text())
    assert report.index_type == manifest["index_type"] == HNSW
    assert isinstance(faiss.downcast_index(searcher(make_settings(isolated_home, hnsw_threshold=10)).vectors.index.index), faiss.IndexHNSWFlat)


def test_flat_index_adds_and_removes_by_id() -> None:
    index = VectorIndex.new(8, FLAT, IndexSettings())
    x = unit(5)
    ids = np.array([vector_id(f"c{i}") for i in range(5)])
    index.add(ids, x)
    assert index.remove(ids[:2]) == 2
    scores, found = index.search(x[0], k=5)
    assert index.ntotal == 3 and set(found) == set(ids[2:])


def test_hnsw_refuses_removal_so_builds_rebuild_instead() -> None:
    index = VectorIndex.new(8, HNSW, IndexSettings(hnsw_threshold=1))
    index.add(np.array([1, 2]), unit(2))
    with pytest.raises(NotImplementedError):
        index.remove(np.array([1]))


def test_filtered_search_only_returns_allowed_ids() -> None:
    for kind in (FLAT, HNSW):
        index = VectorIndex.new(8, kind, IndexSettings())
        x = unit(50, seed=1)
        index.add(np.arange(50), x)
        _, found = index.search(x[0], k=10, allowed=np.array([7, 9, 11]))
        assert set(found) == {7, 9, 11}


def test_search_restores_the_openmp_thread_count() -> None:
    index = VectorIndex.new(8, FLAT, IndexSettings())
    index.add(np.arange(3), unit(3))
    before = faiss.omp_get_max_threads()
    index.search(unit(1)[0], k=2, threads=1)
    assert faiss.omp_get_max_threads() == before


def test_rebuilding_with_one_chunk_changed_and_one_removed_encodes_only_the_change(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    chunks, resources = load_corpus()
    build(settings, chunks, resources)
    edited = [replace(c, text=c.text + " Edited.") if c.chunk_id == "gqa:1" else c for c in chunks]
    edited = [c for c in edited if c.chunk_id != "vllm:1"]
    report = build(settings, edited, resources)
    assert (report.added, report.removed, report.encoded, report.full_rebuild) == (1, 2, 1, False)
    loaded = searcher(settings)
    assert loaded.vectors.ntotal == len(edited) == len(loaded.chunks)
    assert "vllm:1" not in {c.chunk_id for c in loaded.chunks}


def test_a_removal_from_hnsw_rebuilds_the_index_without_re_encoding(isolated_home: Path) -> None:
    settings = make_settings(isolated_home, hnsw_threshold=10)
    chunks, resources = load_corpus()
    build(settings, chunks, resources)
    report = build(settings, chunks[:-1], resources)
    assert report.full_rebuild and "HNSW" in report.reason and report.encoded == 0


def test_a_saved_index_loads_with_the_same_chunks_catalog_and_results(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    chunks, resources = load_corpus()
    build(settings, chunks, resources)
    loaded = searcher(settings)
    assert loaded.chunks == chunks
    assert loaded.resources == resources
    first = [h.url for h in loaded.search("ring all-reduce bandwidth", k=3, mode="dense")]
    again = [h.url for h in searcher(settings).search("ring all-reduce bandwidth", k=3, mode="dense")]
    assert first == again and first[0] == "https://github.com/example/nccl"


def test_a_corrupt_vector_file_is_a_one_line_error_naming_the_rebuild(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    build(settings)
    (isolated_home / "index" / "vectors.faiss").write_bytes(b"not a faiss index")
    with pytest.raises(IndexLoadError) as err:
        searcher(settings)
    assert "gpuguide index --rebuild" in str(err.value) and "\n" not in str(err.value)


def test_an_index_built_for_another_model_is_refused_with_the_rebuild_command(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    build(settings)
    manifest_path = isolated_home / "index" / MANIFEST_FILE
    manifest = json.loads(manifest_path.read_text())
    manifest["model_id"] = "some-other-model@0123456789ab"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexLoadError, match=r"some-other-model.*run `gpuguide index --rebuild`") as err:
        searcher(settings)
    assert "\n" not in str(err.value)


def test_a_missing_index_says_how_to_build_one(isolated_home: Path) -> None:
    with pytest.raises(IndexLoadError, match="no search index .*gpuguide index --rebuild"):
        searcher(make_settings(isolated_home))


def test_an_interrupted_build_leaves_the_previous_index_loadable(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(isolated_home)
    chunks, resources = load_corpus()
    build(settings, chunks, resources)

    def crash(*args: object, **kwargs: object) -> None:  # after the vectors and chunk table were written
        raise RuntimeError("killed mid-build")

    monkeypatch.setattr(build_module.BM25Index, "build", crash)
    with pytest.raises(RuntimeError, match="killed mid-build"):
        build(settings, chunks[:4], resources)

    assert len(searcher(settings).chunks) == len(chunks)
    assert [p.name for p in isolated_home.iterdir() if p.name.startswith(".index")] == []


def test_a_crash_between_the_two_renames_restores_the_previous_index(isolated_home: Path) -> None:
    settings = make_settings(isolated_home)
    build(settings)
    os.replace(isolated_home / "index", isolated_home / ".index-previous")  # the first rename happened, the second not
    assert len(searcher(settings).chunks) == 30
