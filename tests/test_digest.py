"""Summaries and self-checks made from one resource's own extracted text, on the fixture corpus's pages, with
the packaged embedder (and, once, the packaged model)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from fixtures.index.corpus import embedder, load_corpus, make_settings

from assistant.digest import (
    BLANK,
    EXTRACTED,
    GENERATED,
    NO_TEXT,
    SELF_CHECK,
    SUMMARY,
    DigestMaker,
)
from assistant.llm import assemble_packaged_gguf
from core.records import Chunk, Resource
from core.settings import Settings

MODELS_DIR = Path(os.environ["GPUGUIDE_MODEL_CACHE"])  # the one shared model cache (tests/conftest.py)


def extractive_settings(home: Path) -> Settings:
    settings = make_settings(home)
    settings.learning.digest_backend = "extractive"
    return settings


def maker(settings: Settings, chunks: list[Chunk] | None = None, resources: list[Resource] | None = None) -> DigestMaker:
    default_chunks, default_resources = load_corpus()
    return DigestMaker(settings, resources or default_resources, chunks if chunks is not None else default_chunks,
                       embedder(settings))


def page_chunks_of(resource_id: str) -> dict[str, Chunk]:
    chunks, _ = load_corpus()
    return {c.chunk_id: c for c in chunks if c.resource_id == resource_id and c.source_kind != "card"}


def test_summary_points_cite_passages_of_that_resource_only(isolated_home: Path) -> None:
    m = maker(extractive_settings(isolated_home))
    _, resources = load_corpus()
    for res in resources:
        digest = m.digest(res.id, SUMMARY)
        own = page_chunks_of(res.id)
        assert digest.mode == EXTRACTED and digest.points, res.id
        for point in digest.points:
            assert point.cite.chunk_id in own, (res.id, point.cite.chunk_id)
            assert point.cite.quote in own[point.cite.chunk_id].text
            assert point.text == point.cite.quote  # extracted: the page's own sentence, quoted


def test_summary_has_the_configured_number_of_distinct_points(isolated_home: Path) -> None:
    digest = maker(extractive_settings(isolated_home)).digest("flashattention", SUMMARY)
    assert len(digest.points) == 3 and len({p.text for p in digest.points}) == 3


def test_self_check_hides_a_word_of_its_passage_and_answers_with_it(isolated_home: Path) -> None:
    digest = maker(extractive_settings(isolated_home)).digest("hopper-tma", SELF_CHECK)
    own = page_chunks_of("hopper-tma")
    assert digest.mode == EXTRACTED and len(digest.questions) == 3
    for qa in digest.questions:
        assert BLANK in qa.question and BLANK not in qa.answer
        restored = qa.question.removeprefix("Fill in the blank: ").replace(BLANK, qa.answer, 1)
        assert restored == qa.cite.quote and qa.cite.quote in own[qa.cite.chunk_id].text


def test_a_self_check_cached_under_its_old_name_quiz_is_read_as_a_self_check(isolated_home: Path) -> None:
    settings = extractive_settings(isolated_home)
    made = maker(settings).digest("hopper-tma", SELF_CHECK)
    new_file = maker(settings).cache_file("hopper-tma", SELF_CHECK)
    old = {**json.loads(new_file.read_text(encoding="utf-8")), "kind": "quiz"}  # as an older version wrote it
    new_file.unlink()
    maker(settings).cache_file("hopper-tma", "quiz").write_text(json.dumps(old), encoding="utf-8")
    cached = maker(settings).cached("hopper-tma", SELF_CHECK)
    assert cached is not None and cached.kind == SELF_CHECK and cached.questions == made.questions


def test_a_card_only_resource_says_there_is_no_text_to_summarise(isolated_home: Path) -> None:
    chunks, resources = load_corpus()
    cards_only = [c for c in chunks if not (c.resource_id == "gqa" and c.source_kind != "card")]
    digest = maker(extractive_settings(isolated_home), cards_only, resources).digest("gqa", SUMMARY)
    assert digest.mode == NO_TEXT and not digest.points
    assert "no extracted text to summarise" in digest.note


def test_an_unknown_resource_is_one_clear_line(isolated_home: Path) -> None:
    with pytest.raises(Exception, match="'nope' is not in the catalog"):
        maker(extractive_settings(isolated_home)).digest("nope", SUMMARY)


def test_a_digest_is_cached_as_json_and_reused(isolated_home: Path) -> None:
    settings = extractive_settings(isolated_home)
    first = maker(settings).digest("nccl", SUMMARY)
    path = settings.digests_dir / "nccl.summary.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["content_hash"] == first.content_hash and saved["mode"] == EXTRACTED
    assert [p.name for p in settings.digests_dir.iterdir()] == ["nccl.summary.json"]  # no temp file left
    again = maker(settings).digest("nccl", SUMMARY)  # a new process: read back from the data dir
    assert again.created == first.created and again.points == first.points


def test_changed_text_makes_the_digest_again(isolated_home: Path) -> None:
    settings = extractive_settings(isolated_home)
    first = maker(settings).digest("nccl", SUMMARY)
    chunks, resources = load_corpus()
    edited = [replace(c, text=c.text + " NCCL also offers a point-to-point send and receive API for pipelines.")
              if c.chunk_id == "nccl:1" else c for c in chunks]
    second = maker(settings, edited, resources).digest("nccl", SUMMARY)
    assert second.content_hash != first.content_hash and second.created >= first.created


def test_a_corrupt_cache_file_is_made_again(isolated_home: Path) -> None:
    settings = extractive_settings(isolated_home)
    settings.digests_dir.mkdir(parents=True)
    (settings.digests_dir / "vllm.summary.json").write_text("{not json", encoding="utf-8")
    assert maker(settings).digest("vllm", SUMMARY).points


def test_generated_summary_points_are_supported_by_the_passage_they_cite(isolated_home: Path) -> None:
    """The one generation with the packaged model: whatever it writes, each kept point cites a passage of this
    resource and is close to the sentence it quotes; a result with nothing verifiable says so and is extracted."""
    settings = make_settings(isolated_home)
    settings.llm.model_path = str(assemble_packaged_gguf(MODELS_DIR))
    settings.learning.summary_points = 2
    settings.learning.digest_max_tokens = 90
    m = maker(settings)
    digest = m.digest("flashattention", SUMMARY)
    own = page_chunks_of("flashattention")
    assert digest.backend == "embedded" and digest.seconds > 0
    assert digest.points
    for point in digest.points:
        assert point.cite.chunk_id in own and point.cite.quote in own[point.cite.chunk_id].text
    if digest.mode == GENERATED:
        vecs = m.embedder.embed_documents([x for p in digest.points for x in (p.text, p.cite.quote)])
        cosines = [float(np.dot(vecs[i], vecs[i + 1])) for i in range(0, len(vecs), 2)]
        assert min(cosines) >= settings.llm.verify_min_cosine - 0.1
    else:
        assert digest.mode == EXTRACTED and "supported" in digest.note


def test_the_setting_s_old_name_quiz_questions_still_sets_the_self_check_questions(isolated_home: Path) -> None:
    assert Settings(home=isolated_home, learning={"quiz_questions": 2}).learning.self_check_questions == 2
