"""Evidence is page text in passages: what is a candidate, how a pick brings its context, and how picks of one
page become one passage (real embedder and FAISS on the fixture corpus where a searcher is needed)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from fixtures.index.corpus import build, load_corpus, make_settings, searcher

from assistant.evidence import (
    EvidenceSelector,
    EvidenceSentence,
    EvidenceSource,
    introduces,
    passage_match,
    passages_by_mmr,
    refers_back,
    self_contained,
)
from core.records import Chunk
from core.settings import LLMSettings
from index.records import ResourceHit

CFG = SimpleNamespace(evidence_mmr_lambda=1.0, evidence_relevance_span=0.3, evidence_max_sentences=40,
                      evidence_context_span=0.1)


def sentences(*texts: str) -> list[EvidenceSentence]:
    return [EvidenceSentence(t, 0, (0, i), 0.0, "page:0", i) for i, t in enumerate(texts)]


def pick(pool: list[EvidenceSentence], relevance: list[float], budget: int = 1000) -> list[int]:
    vecs = np.eye(len(pool), dtype=np.float32)  # no redundancy between sentences
    return passages_by_mmr(pool, np.array(relevance), vecs, [10] * len(pool), [5], CFG, budget)


@pytest.fixture(scope="module")
def selector(tmp_path_factory: pytest.TempPathFactory) -> EvidenceSelector:
    settings = make_settings(tmp_path_factory.mktemp("evidence-home"))
    build(settings)
    return EvidenceSelector(searcher(settings))


def test_catalog_cards_are_never_evidence(selector):
    hits = selector.searcher.search("How does FlashAttention avoid writing the attention matrix to HBM?", k=5)
    pool = selector.candidates(hits)
    assert pool and not any(c.chunk_id.endswith(":card") for c in pool)
    card_only = [h for h in hits if all(c.source_kind == "card" for c, _ in h.passages)]
    assert all(c.resource_rank != hits.index(h) for h in card_only for c in pool)


def test_a_resource_known_only_by_its_card_gives_no_evidence(selector):
    res = load_corpus()[1][0]
    card = Chunk(chunk_id=f"{res.id}:card", resource_id=res.id, url=res.url, heading_path=(), start=0, end=80,
                 text=f"{res.title} is a Tier 1 blog post on tiling attention through on-chip SRAM memory.",
                 context=res.title, source_kind="card")
    assert selector.select("How is attention tiled?", [ResourceHit(res, 1.0, [(card, 1.0)])], LLMSettings()).sources == []


def page_candidates(selector: EvidenceSelector, text: str) -> list[EvidenceSentence]:
    """The evidence candidates of one page chunk holding `text`."""
    res = load_corpus()[1][0]
    page = Chunk(chunk_id=f"{res.id}:x:0", resource_id=res.id, url=res.url, heading_path=(), start=0, end=len(text),
                 text=text, context=res.title)
    return selector.candidates([ResourceHit(res, 1.0, [(page, 1.0)])], neighbours=False)


def test_a_sentence_with_simple_inline_tex_is_evidence_written_as_the_page_shows_it(selector):
    text = ("Evaluation on four GPUs shows that the kernel achieves up to 1.1$\\times$ speedup over the vendor library. "
            "The loss is $\\frac{a}{b}$ of the whole in the worst case of this design.")
    pool = [c.text for c in page_candidates(selector, text)]
    assert pool == ["Evaluation on four GPUs shows that the kernel achieves up to 1.1× speedup over the vendor library."]


def test_rows_of_a_table_continued_from_the_chunk_before_read_under_that_tables_header():
    res = load_corpus()[1][0]
    first = ("Three ways a matmul kernel reuses data, from the simplest to the most involved one.\n\n"
             "| Technique | What it does |\n|---|---|\n| Coalescing | Neighbouring threads read neighbouring addresses |\n")
    second = ("| Tiling | Each block keeps a tile of both matrices in shared memory |\n"
              "| Register blocking | Each thread computes many outputs from values held in registers |\n")
    chunks = [Chunk(chunk_id=f"{res.id}:t:{i}", resource_id=res.id, url=res.url, heading_path=(), start=i * 100,
                    end=i * 100 + len(t), text=t, context=res.title) for i, t in enumerate((first, second))]
    selector = EvidenceSelector(SimpleNamespace(chunks=chunks))
    pool = selector.candidates([ResourceHit(res, 1.0, [(chunks[1], 1.0)])], neighbours=False)
    assert [c.text for c in pool] == ["Tiling: Each block keeps a tile of both matrices in shared memory.",
                                      "Register blocking: Each thread computes many outputs from values held in registers."]


def test_a_pick_that_refers_back_brings_the_sentence_before_it():
    pool = sentences("Warps read global memory in 32-byte sectors.", "This is why coalesced reads are fast.",
                     "Unrelated closing words about the blog.")
    assert pick(pool, [0.2, 0.9, 0.1]) == [0, 1]


def test_a_neighbour_nearly_as_relevant_as_the_pick_comes_with_it():
    pool = sentences("Tiles are staged in shared memory.", "Each tile is reused by every thread of the block.",
                     "The post ends with a benchmark table.")
    assert pick(pool, [0.55, 0.9, 0.85]) == [1, 2]


def test_context_is_left_out_when_the_budget_has_no_room():
    pool = sentences("Warps read global memory in 32-byte sectors.", "This is why coalesced reads are fast.")
    assert pick(pool, [0.2, 0.9], budget=15) == [1]


def test_sentences_far_below_the_best_are_never_picked_for_themselves():
    pool = sentences("A relevant sentence about tensor cores.", "Filler.", "More filler words here.")
    assert pick(pool, [0.9, 0.0, 0.05]) == [0]


def test_neighbouring_picks_of_one_page_form_one_passage():
    picked = sentences("First fact.", "Second fact.", "Third fact.", "Fourth fact.")
    source = EvidenceSource(1, ResourceHit(load_corpus()[1][0], 1.0), [picked[0], picked[1], picked[3]])
    assert source.passages == ["First fact. Second fact.", "Fourth fact."]


def test_neighbouring_table_rows_stay_items_of_their_own():
    rows = [EvidenceSentence(t, 0, (0, i), 0.0, "page:0", i, row=True)
            for i, t in enumerate(["Pass A: Merges loads into one.", "Pass B: Splits stores in two."])]
    source = EvidenceSource(1, ResourceHit(load_corpus()[1][0], 1.0), rows)
    assert source.passages == ["Pass A: Merges loads into one.", "Pass B: Splits stores in two."]


def test_a_table_row_read_from_a_page_is_marked_as_a_row(selector):
    text = ("| Pass | Description |\n|---|---|\n| Coalesce loads | Merge neighbouring global loads into one wide "
            "transaction per warp |\n")
    assert [(c.text, c.row) for c in page_candidates(selector, text)] == [
        ("Coalesce loads: Merge neighbouring global loads into one wide transaction per warp.", True)]


def test_lead_ins_and_referring_openers_are_recognised():
    assert introduces("And we call it like so:")
    assert not introduces("The kernel is memory bound.")
    assert refers_back("However, the cache is small.") and not refers_back("The cache is small.")


# --- a sentence that stands alone (the key passage's test) -----------------------------------------------------------


def test_a_sentence_with_its_own_subject_stands_alone():
    assert self_contained("A cluster is a group of thread blocks that are guaranteed to be scheduled together.")
    assert self_contained("Instead of waiting for the whole batch, Orca schedules every iteration.")


def test_a_sentence_that_refers_back_does_not_stand_alone():
    assert not self_contained("However, this approach relies heavily on the compiler.")
    assert not self_contained("Within each of the groups, it behaves like multi-query attention.")


def test_a_question_or_the_pages_narrator_does_not_stand_alone():
    assert not self_contained("How often does static batching under-utilize the GPU?")
    assert not self_contained("On the next page we build a serving system on paged memory.")
    assert not self_contained("We've added multiple new features, including a training recipe.")


def test_a_line_of_code_does_not_stand_alone():
    assert not self_contained("tl.store(output_ptr + offsets, output, mask=mask) ```")
    assert self_contained("A kernel entry-point (`__global__` methods) has a well-defined calling convention.")


def two_chunk_hit(first: str, second: str, scores: tuple[float, float]) -> ResourceHit:
    """One resource whose two page chunks retrieval matched with `scores`."""
    res = load_corpus()[1][0]
    chunks = [Chunk(chunk_id=f"{res.id}:m:{i}", resource_id=res.id, url=res.url, heading_path=(), start=i * 200,
                    end=i * 200 + len(t), text=t, context=res.title) for i, t in enumerate((first, second))]
    return ResourceHit(res, 1.0, list(zip(chunks, scores)))


def test_a_sentence_scores_by_its_chunks_retrieval_match_relative_to_the_best_one():
    hit = two_chunk_hit("Tiles of both matrices are staged in shared memory first.",
                        "Every thread of the block then reuses each staged tile many times.", (2.0, 1.0))
    chunk_ids = [chunk.chunk_id for chunk, _ in hit.passages] + ["unmatched-neighbour:9"]
    pool = [EvidenceSentence(f"Sentence {i}.", 0, (0, i), 0.0, chunk_id, i) for i, chunk_id in enumerate(chunk_ids)]
    assert passage_match([hit], pool).tolist() == [1.0, 0.5, 0.0]


@pytest.mark.parametrize(("weight", "first"), [(0.0, "cosine"), (0.7, "matched")])
def test_the_chunk_retrieval_matched_best_leads_the_evidence_when_its_match_is_weighed(selector, weight, first):
    close = "Tiling reduces global memory traffic because each loaded tile is reused by many threads."
    matched = "Each block copies one tile of A and one of B into shared memory before computing on them."
    hit = two_chunk_hit(close, matched, (0.2, 1.0))  # retrieval preferred the second chunk
    cfg = LLMSettings(evidence_passage_weight=weight)
    evidence = selector.select("How does tiling reduce global memory traffic?", [hit], cfg, budget=400)
    top = evidence.ranked()[0][1].text
    assert top == (close if first == "cosine" else matched)
