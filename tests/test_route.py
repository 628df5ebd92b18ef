"""Routing (planner or search) with the packaged embedder, and the planner's answer, on a catalog written
for these tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assistant.planner import NextReads
from assistant.reading import split_clauses
from assistant.route import FEATURES, concept_feature, fit_logistic, request_feature
from core.records import Resource
from core.settings import PlannerSettings, Settings
from index.embed import Embedder

CATALOG = Path(__file__).parent / "fixtures" / "planner" / "catalog.json"


@pytest.fixture(scope="module")
def resources() -> list[Resource]:
    return [Resource.from_dict(d) for d in json.loads(CATALOG.read_text(encoding="utf-8"))["resources"]]


@pytest.fixture(scope="module")
def next_reads(resources: list[Resource], tmp_path_factory: pytest.TempPathFactory) -> NextReads:
    knobs = PlannerSettings()
    embedder = Embedder(Settings(home=tmp_path_factory.mktemp("route-home")))
    return NextReads(resources, embedder=embedder, route_weights=knobs.route_weights,
                     route_intercept=knobs.route_intercept, route_threshold=knobs.route_threshold,
                     focus_threshold=knobs.focus_threshold, list_url="https://example.org/list")


def by_id(resources: list[Resource], title: str) -> str:
    return next(r.id for r in resources if r.title == title)


# --- routing -----------------------------------------------------------------------------------------


def test_a_reading_history_with_a_request_goes_to_the_planner(next_reads):
    assert next_reads.decide("I've read DIH and the Raft paper. What should I read next?").route == "next"


def test_asking_where_to_start_goes_to_the_planner(next_reads):
    assert next_reads.decide("Where should I start if I want to learn about consensus?").route == "next"


def test_asking_for_a_book_to_get_started_goes_to_the_planner(next_reads):
    assert next_reads.decide("I'm new to databases. Can you recommend a book to help me get started?").route == "next"


def test_get_started_is_a_wish_not_a_history():
    assert [c.role for c in split_clauses("Can you recommend a book to help me get started?")] == ["want"]


def test_a_concept_question_goes_to_search_even_after_a_history(next_reads):
    decision = next_reads.decide("I've read the Raft paper, but why does leader election need randomized timeouts?")
    assert decision.route == "search" and decision.features["concept"] == 1.0


def test_asking_whether_a_prerequisite_was_skipped_goes_to_the_planner(next_reads):
    question = "I started with the tier 3 consensus papers and I'm lost. Did I skip something I needed first?"
    assert next_reads.decide(question).route == "next"


def test_asking_about_a_missing_prerequisite_goes_to_the_planner(next_reads):
    assert next_reads.decide("Am I missing a prerequisite before the storage engine material?").route == "next"


def test_how_a_technique_works_never_goes_to_the_planner(next_reads):
    assert next_reads.decide("How does a buffer pool decide which page to evict?").route == "search"


def test_what_went_wrong_before_a_technique_never_goes_to_the_planner(next_reads):
    question = "What problem did systems have with deterministic ordering before Calvin came along?"
    assert next_reads.decide(question).route == "search"


def test_what_a_thing_is_goes_to_search_even_with_reading_words(next_reads):
    question = "I read about LSM trees in the guide; what is write amplification exactly?"
    assert next_reads.decide(question).route == "search"


def test_a_comparison_naming_a_guide_section_without_a_request_goes_to_search(next_reads):
    question = "why is tiered compaction cheaper than waiting for a whole leveled compaction to finish?"
    assert next_reads.decide(question).route == "search"


def test_what_a_titled_resource_is_used_for_goes_to_search(next_reads):
    assert next_reads.decide("what is optimistic lock coupling used for?").route == "search"


def test_a_passive_question_naming_a_title_never_goes_to_the_planner(next_reads):
    assert next_reads.decide("What latches are used in Optimistic Lock Coupling?").route == "search"


def test_a_yes_no_question_about_a_titled_resource_is_no_history(next_reads):
    decision = next_reads.decide("Can Optimistic Lock Coupling be used in production?")
    assert decision.route == "search" and decision.features["history"] == 0.0


def test_asking_when_something_started_is_no_request(next_reads):
    assert request_feature("When did RocksLite support for column families start?") == 0.0


def test_a_request_word_inside_a_name_is_no_request():
    assert request_feature("Who has been involved in the push for Cloud Next?") == 0.0


def test_asking_for_more_information_is_no_request_for_reading():
    assert request_feature("Can you provide more information on these compaction tips?") == 0.0
    assert request_feature("Any more resources on compaction?") == 1.0


def test_proposing_a_reading_step_with_how_about_is_a_request():
    assert request_feature("I finished the storage topic. How about exploring the indexing section?") == 1.0
    assert request_feature("How about we start with the compaction posts?") == 1.0
    assert request_feature("How about the compaction posts, are they good?") == 0.0  # no verb of reading: asks about them


def test_a_lookup_goes_to_search(next_reads):
    assert next_reads.decide("Which paper describes delta records in a latch-free B-tree?").route == "search"


def test_a_keyword_query_naming_a_title_is_no_history(next_reads):
    assert next_reads.decide("rockslite compaction code").features["history"] == 0.0


def test_request_and_concept_features_read_the_clause_roles():
    assert request_feature("Done with DIH.") == 0.0  # a history alone asks nothing
    assert request_feature("Done with DIH. What comes next?") == 1.0
    assert concept_feature("How does a memtable get flushed?") == 1.0
    assert concept_feature("How should I continue after DIH?") == 0.0


def test_the_routing_model_fits_separable_rows():
    rows = [{f: float(i % 2) for f in FEATURES} for i in range(20)]
    weights, intercept = fit_logistic(rows, [i % 2 for i in range(20)])
    assert sum(weights.values()) + intercept > 0 > intercept


# --- the planner's answer ----------------------------------------------------------------------------


def test_the_answer_says_what_it_counted_as_read_and_the_focus(next_reads):
    answer = next_reads.answer("I've read DIH. I want to get into consensus next.", set())
    first, second = answer.text.splitlines()[:2]
    assert first == "Counting as read: Database Internals Handbook (DIH)."
    assert second == "Focus: Replication & Consensus."
    assert answer.route == "next" and answer.focus_topics == ["Replication & Consensus"]


def test_the_stated_focus_comes_first_in_the_guides_tier_order(next_reads, resources):
    answer = next_reads.answer("I've read DIH. I want to get into consensus next.", set())
    tier_1 = {r.id for r in resources if r.topic == "Replication & Consensus" and r.tier == 1}
    assert {c.resource_id for c in answer.citations[:3]} == tier_1


def test_nothing_the_question_says_was_read_is_recommended(next_reads, resources):
    answer = next_reads.answer("Done with the whole query execution topic and both Jepsen posts. Next?", set(), k=20)
    read = {r.id for r in resources if r.topic == "Query Execution" or r.title.startswith("Jepsen")}
    assert read <= set(answer.read_ids)
    assert not read & {c.resource_id for c in answer.citations}


def test_every_pick_has_a_one_line_reason(next_reads):
    answer = next_reads.answer("I've read Calvin-2. What next?", set(), k=10)
    picks = [line for line in answer.text.splitlines() if line[:1].isdigit()]
    assert len(picks) == len(answer.citations) == 10
    assert all(" — Tier " in line or " — " in line and "›" in line for line in picks)


def test_the_understood_reads_leave_out_what_the_profile_already_has(next_reads, resources):
    dih = by_id(resources, "Database Internals Handbook (DIH)")
    answer = next_reads.answer("I've read DIH and the LSM post. What next?", {dih})
    assert answer.read_ids == [by_id(resources, "LSM Trees Explained")]
    assert dih not in {c.resource_id for c in answer.citations}


def test_with_no_history_the_answer_says_so(next_reads):
    answer = next_reads.answer("Where do I start?", set())
    assert answer.text.startswith("Counting as read: nothing yet")
    assert "Focus: none stated" in answer.text


def test_a_stated_history_leaves_a_vague_wish_to_the_model(next_reads):
    decision = next_reads.decide('I\'ve finished reading "Database Internals Handbook" and want to explore what '
                                 "other guides or books might be useful.")
    assert decision.features["history"] == 1.0 and decision.route == "next"


def test_a_sentence_opening_with_why_is_a_concept_question_whatever_verb_follows(next_reads):
    assert next_reads.decide("why do queries stall until the compaction I read about is finished?").features[
        "concept"] == 1.0


def test_what_the_guide_suggests_reading_next_is_no_concept_question() -> None:
    assert concept_feature("I've not read anything; no focus yet. What does the guide suggest next?") == 0.0


def test_what_is_the_next_book_to_read_is_no_concept_question() -> None:
    assert concept_feature("I haven't read anything yet. What is the next book or article I should explore?") == 0.0
    assert concept_feature("What are some of the most compelling resources that I should consult next?") == 0.0


def test_what_a_named_paper_is_about_is_still_a_concept_question() -> None:
    assert concept_feature("What is the Calvin paper about?") == 1.0
    assert concept_feature("What are some of the papers that inspired the work done by Calvin?") == 1.0


def test_what_the_guide_says_about_a_thing_is_still_a_concept_question() -> None:
    assert concept_feature("What does the guide say about TMA?") == 1.0


def test_asking_whether_to_explore_a_place_goes_to_the_planner(next_reads):
    assert next_reads.decide("I haven't explored Query Execution yet. Should I delve into the JIT material?"
                             ).route == "next"


def test_a_negation_after_other_that_does_not_name_the_learner_still_negates(next_reads):
    question = "Are there any other books on storage engines that do not specifically cover consensus?"
    assert next_reads.decide(question).route == "search"


def test_asking_how_to_learn_more_without_a_subject_goes_to_the_planner(next_reads):
    decision = next_reads.decide("I haven't explored the Query Execution topic yet. How can I learn more?")
    assert decision.route == "next" and decision.features["concept"] == 0.0


def test_asking_how_to_learn_to_do_something_stays_a_concept_question():
    assert concept_feature("How can I learn to tune compaction for a write-heavy load?") == 1.0
    assert concept_feature("How can I avoid latch contention in a B-tree?") == 1.0
