"""Entity linking of what a learner read (assistant/mentions.py and its use in reading.py), on a catalog
written for these tests."""

from __future__ import annotations

import pytest

from assistant.mentions import Linker, looks_like_a_name, quoted_spans, split_mentions
from assistant.planner import NextReads, explain, plan_next
from assistant.reading import CatalogIndex, Reader
from core.records import Resource
from planner_fixture import reader, resources  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def linker(resources: list[Resource]) -> Linker:
    return Linker(CatalogIndex(resources))


def test_a_list_splits_at_commas_and_slashes_and_parentheses():
    assert split_mentions("the Calvin papers (Calvin, Calvin-2) and DIH/Raft") == [
        "the Calvin papers", "Calvin", "Calvin-2", "DIH", "Raft"]


def test_quoted_spans_take_straight_and_curly_quotes_but_not_apostrophes():
    spans = [inner for _, _, inner in quoted_spans("I've read \"Buffer Pool Internals\" and ‘RocksLite’, it's done")]
    assert spans == ["Buffer Pool Internals", "RocksLite"]


def test_a_quoted_title_links_to_its_item_with_a_high_score(linker):
    link = linker.link_title("Vectorization vs Compilation in Query Execution")
    assert [r.title for r in link.resources] == ["Vectorization vs Compilation in Query Execution"]
    assert link.score > 0.9


def test_half_a_title_links_with_a_lower_score(linker):
    full = linker.link_title("Morsel-Driven Parallelism").score
    half = linker.link_title("Morsel parallelism").score
    assert half < full


def test_a_quoted_name_the_catalog_lacks_links_to_nothing(linker):
    assert linker.link_title("Mastering Tensorflow") is None


def test_a_quoted_topic_name_links_to_the_group(linker):
    link = linker.link_title("Query Execution")
    assert link.group is not None and link.group.topic == "Query Execution"


def test_a_quoted_title_with_a_colon_is_one_mention(reader):
    found = reader.understand('I\'ve finished "Bw-Tree: A Latch-Free B-Tree" and "Raft: Understandable Consensus". Next?')
    assert {r.title for r in found.read} == {"Bw-Tree: A Latch-Free B-Tree", "Raft: Understandable Consensus"}


def test_a_title_that_names_nothing_is_said_not_guessed(reader):
    found = reader.understand('I\'ve read "Mastering Tensorflow" and DIH. What next?')
    assert {r.title for r in found.read} == {"Database Internals Handbook (DIH)"}
    assert found.unplaced == ["Mastering Tensorflow"]


def test_the_answer_says_what_it_could_not_place(reader, resources):
    found = reader.understand('I\'ve read "Mastering Tensorflow". What next?')
    text = explain(found, plan_next(resources, found.read_ids, interest_scores=found.interest), set())
    assert "I couldn't place: Mastering Tensorflow" in text


def test_an_unquoted_unknown_name_in_a_history_is_said(reader):
    assert reader.understand("I've read DIH and the Zorblax Handbook. Next?").unplaced == ["the Zorblax Handbook"]


def test_a_name_in_a_wish_is_no_unplaced_read(reader):
    assert reader.understand('Should I read "Mastering Tensorflow" next?').unplaced == []


def test_only_name_like_mentions_are_reported():
    assert looks_like_a_name("the Zorblax Handbook") and not looks_like_a_name("some of the basics")


# --- "anything else about X" ------------------------------------------------------------------------


def test_anything_else_about_a_subject_ranks_items_across_topics(reader):
    found = reader.understand("Is there anything else in the guide about transactions?")
    assert found.subject == "transactions"
    assert set(found.subject_ranking[:2]) == {"papers-example-org-calvin", "papers-example-org-calvin-2"}
    assert found.interest == {}


def test_the_subject_ranking_leaves_out_what_was_read(reader):
    found = reader.understand("I've read Calvin. Anything else about transactions?")
    assert "papers-example-org-calvin" not in found.subject_ranking


def test_the_words_of_a_place_read_whole_are_not_the_subject(reader):
    found = reader.understand("I've read the whole Storage Engines topic. Is there anything else in the guide about "
                              "engines and consensus?")
    assert found.subject == "consensus"
    assert found.subject_ranking == ["papers-example-org-raft"]


def test_the_plan_puts_the_subject_items_first(reader, resources):
    found = reader.understand("Anything else about compaction?")
    plan = plan_next(resources, found.read_ids, k=2, subject=found.subject, subject_ids=found.subject_ranking)
    assert plan.picks[0].resource.title == "Tiered vs Leveled Compaction"
    assert "about compaction" in plan.picks[0].reason


def test_without_a_cue_of_asking_past_it_a_subject_is_an_interest(reader):
    found = reader.understand("I want to learn about transactions next.")
    assert found.subject == "" and found.focus_topics == ["Replication & Consensus"]


def test_a_quoted_titles_author_stays_with_the_title(reader):
    found = reader.understand('I\'ve read "Compiling Queries with LLVM, Part 1" by Neumann. Next?')
    assert {r.title for r in found.read} == {"Compiling Queries with LLVM, Part 1"}



# --- a short name alone beside the question ------------------------------------------------------------------


def test_a_lone_short_name_beside_the_question_is_named_not_read(reader):
    found = reader.understand("The Vectorization post. What should I read next?")
    assert found.read == []
    assert [r.title for r in found.named] == ["Vectorization vs Compilation in Query Execution"]


def test_a_named_item_is_never_picked_and_the_answer_says_so(resources):
    answer = NextReads(resources).answer("The Vectorization post. What should I read next?", set(), k=5)
    assert "Vectorization vs Compilation in Query Execution" not in [c.title for c in answer.citations]
    assert "Named, not counted as read: Vectorization vs Compilation in Query Execution" in answer.text


def test_a_word_of_the_field_alone_names_nothing(reader):
    assert reader.understand("Hey, execution. What should I read next?").named == []


# --- a name that half-spells one title ----------------------------------------------------------------------------


def test_a_read_name_that_half_spells_one_title_sets_that_item_aside(reader):
    found = reader.understand("I've read Morsel Cookbook and Raft. What should I read next?")
    assert [r.title for r in found.read] == ["Raft: Understandable Consensus"]
    assert found.unplaced == ["Morsel Cookbook"]
    assert [r.title for r in found.named] == ["Morsel-Driven Parallelism"]


def test_a_lower_case_name_that_half_spells_one_title_sets_that_item_aside_too(reader):
    found = reader.understand("i've read morsel execution and raft. what should i read next?")
    assert [r.title for r in found.named] == ["Morsel-Driven Parallelism"]


def test_a_name_half_spelling_two_titles_alike_sets_neither_aside(reader):
    assert reader.understand("I've read Clock Partitions. What should I read next?").named == []


def test_a_half_spelt_read_is_never_picked(resources):
    answer = NextReads(resources).answer("I've read Morsel Cookbook. What should I read next?", set(), k=5)
    assert "Morsel-Driven Parallelism" not in [c.title for c in answer.citations]
    assert "Named, not counted as read: Morsel-Driven Parallelism" in answer.text


# --- "did I skip something?" ------------------------------------------------------------------------------------


def test_a_gap_question_is_understood_as_one(reader):
    assert reader.understand("I've read Bw-Tree. Did I skip anything, or am I missing a prerequisite?").gap
    assert not reader.understand("I've read Bw-Tree. What should I read next?").gap


def test_the_answer_to_a_gap_question_says_it_back_fills(resources):
    answer = NextReads(resources).answer("I've read Bw-Tree. I'm eager to dive into the advanced material of Storage "
                                         "Engines and feel a bit lost. Did I skip anything?", set(), k=5)
    assert "its lower tiers first (you got lost there or asked whether you skipped something)" in answer.text
    assert "Optimistic Lock Coupling" not in [c.title for c in answer.citations]
