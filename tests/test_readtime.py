"""Reading time per resource from its extracted words, with the paper/repo rules and unknowns."""

from __future__ import annotations

from dataclasses import replace

from assistant.readtime import (
    PAPER_RULE,
    PAPER_TEXT,
    REPO,
    TEXT,
    UNKNOWN,
    estimate,
    format_minutes,
    page_words,
    total,
)
from core.records import Chunk, Resource
from core.settings import LearningSettings

CFG = LearningSettings(words_per_minute=200, paper_words_per_minute=100, paper_abstract_only_minutes=60,
                       repo_extra_minutes=15)
BLOG = Resource(id="post", title="A post", url="https://example.org/post", authors="", note="", topic="T",
                section="S", tier=1, kind="blog", position=0, list_anchor="#s")


def page(words: int) -> str:
    return " ".join(f"w{i}" for i in range(words))


def chunks_of(text: str, size: int, overlap: int, url: str = "https://example.org/post", kind: str = "html",
              rid: str = "post") -> list[Chunk]:
    """Chunk `text` by words with an overlap, offsets into `text`, as the chunker stores them."""
    words = text.split(" ")
    starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words) + 1)]
    out, i = [], 0
    while i < len(words):
        j = min(len(words), i + size)
        start, end = starts[i], starts[j] - 1
        out.append(Chunk(f"{rid}:{len(out)}", rid, url, (), start, end, text[start:end], "", kind))
        if j == len(words):
            break
        i = j - overlap
    return out


def test_overlapping_chunks_count_each_word_once() -> None:
    chunks = chunks_of(page(1000), size=165, overlap=30)
    assert len(chunks) > 6
    assert page_words(chunks) == {("https://example.org/post", "html"): 1000}


def test_prose_time_is_words_at_the_reading_pace_rounded_up() -> None:
    est = estimate(BLOG, chunks_of(page(1001), 165, 30), CFG)
    assert (est.basis, est.words, est.minutes) == (TEXT, 1001, 6)


def test_the_reading_pace_setting_changes_the_time() -> None:
    est = estimate(BLOG, chunks_of(page(1000), 165, 30), CFG.model_copy(update={"words_per_minute": 100}))
    assert est.minutes == 10


def test_card_only_resource_is_unknown_not_guessed() -> None:
    card = Chunk("post:card", "post", BLOG.url, (), 0, 10, "A post card", "", "card")
    est = estimate(BLOG, [card], CFG)
    assert est.minutes is None and est.basis == UNKNOWN and est.label() == "unknown"


def test_paper_full_text_reads_at_the_paper_pace() -> None:
    paper = replace(BLOG, kind="paper")
    chunks = chunks_of(page(200), 165, 30, kind="html") + chunks_of(page(3000), 165, 30, url="https://example.org/p.pdf", kind="pdf")
    est = estimate(paper, chunks, CFG)
    assert (est.basis, est.words, est.minutes) == (PAPER_TEXT, 3000, 30)


def test_paper_with_only_its_abstract_gets_the_paper_rule() -> None:
    est = estimate(replace(BLOG, kind="paper"), chunks_of(page(180), 165, 30), CFG)
    assert (est.basis, est.minutes) == (PAPER_RULE, 60)


def test_repo_is_its_readme_plus_time_for_the_code() -> None:
    est = estimate(replace(BLOG, kind="repo"), chunks_of(page(400), 165, 30), CFG)
    assert (est.basis, est.minutes) == (REPO, 2 + 15)


def test_a_talk_page_gives_no_time() -> None:
    est = estimate(replace(BLOG, kind="video"), chunks_of(page(400), 165, 30), CFG)
    assert est.minutes is None and est.words == 400


def test_the_opening_page_of_a_multi_page_document_gives_no_time() -> None:
    docs = replace(BLOG, kind="docs")
    est = estimate(docs, chunks_of(page(600), 165, 30), CFG, continued={"example.org/post"})
    assert est.minutes is None and est.basis == UNKNOWN and "first page" in est.why


def test_a_page_that_continues_nowhere_keeps_its_time() -> None:
    est = estimate(replace(BLOG, kind="docs"), chunks_of(page(600), 165, 30), CFG, continued={"example.org/other"})
    assert (est.basis, est.minutes) == (TEXT, 3)


def test_total_sums_known_times_and_counts_unknown_ones() -> None:
    a = estimate(BLOG, chunks_of(page(1000), 165, 30), CFG)
    b = estimate(replace(BLOG, id="other"), [], CFG)
    t = total([a, b, a])
    assert (t.minutes, t.unknown, t.count) == (10, 1, 3)
    assert t.label() == "10 min + 1 unknown"


def test_durations_read_as_hours_and_minutes() -> None:
    assert [format_minutes(m) for m in (8, 60, 135)] == ["8 min", "1 h", "2 h 15 min"]
