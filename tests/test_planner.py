"""The reading planner: the guide's tier order applied to one learner's progress."""

from __future__ import annotations

import itertools
import json

import pytest

from assistant.planner import plan_next, resolve_mentions, topic_interest
from core.records import Resource

_positions = itertools.count()


def make(topic: str, section: str, tier: int | None, title: str, authors: str = "") -> Resource:
    slug = title.lower().replace(" ", "-")
    return Resource(
        id=slug, title=title, url=f"https://example.com/{slug}", authors=authors, note="", topic=topic,
        section=section, tier=tier, kind="blog", position=next(_positions), list_anchor="#" + section.lower(),
    )


@pytest.fixture
def catalog() -> list[Resource]:
    return [
        make("Fundamentals", "Intro", 1, "Programming Massively Parallel Processors (PMPP)", "Hwu, Kirk"),
        make("Fundamentals", "Intro", 1, "Lecture Series"),
        make("Fundamentals", "Low level", 3, "PTX Manual"),
        make("Matrix Multiplication", "Tutorials", 1, "Matmul Worklog", "siboehm"),
        make("Matrix Multiplication", "Tutorials", 1, "Anatomy of Matmul"),
        make("Matrix Multiplication", "Advanced", 2, "Advanced Matmul"),
        make("Profiling & Optimization", "NVIDIA tools", 1, "Roofline Analysis"),
        make("Profiling & Optimization", "NVIDIA tools", 1, "Occupancy Calculator"),
        make("Profiling & Optimization", "Optimization techniques", 2, "Bank Conflicts"),
        make("Profiling & Optimization", "Advanced topics", 3, "CUDA Graphs"),
        make("The Big Picture", "Communities", None, "Discord"),
    ]


def titles(plan) -> list[str]:
    return [p.resource.title for p in plan.picks]


def test_with_no_history_tier_1_of_every_topic_comes_first_in_list_order(catalog):
    plan = plan_next(catalog, set(), k=7)
    assert titles(plan) == [
        "Programming Massively Parallel Processors (PMPP)", "Lecture Series", "Matmul Worklog",
        "Anatomy of Matmul", "Roofline Analysis", "Occupancy Calculator", "Advanced Matmul",
    ]


def test_tier_2_of_every_topic_comes_before_tier_3_and_untiered_comes_last(catalog):
    plan = plan_next(catalog, set(), k=20)
    tiers = [p.resource.tier for p in plan.picks]
    assert tiers == sorted(tiers, key=lambda t: 99 if t is None else t)


def test_nothing_read_is_ever_recommended(catalog):
    read = {r.id for r in catalog[:6]}
    plan = plan_next(catalog, read, k=20)
    assert not read & {p.resource.id for p in plan.picks}
    assert len(plan.picks) == len(catalog) - 6


def test_a_focus_topic_whose_tier_1_is_done_gets_its_next_tier_first(catalog):
    read = {"roofline-analysis", "occupancy-calculator"}
    plan = plan_next(catalog, read, k=3, interest_scores={"Profiling & Optimization": 1.0})
    assert titles(plan)[0] == "Bank Conflicts"
    assert "next after Tier 1, which you finished" in plan.picks[0].reason


def test_a_focus_topic_goes_on_to_its_next_tiers_before_other_topics(catalog):
    plan = plan_next(catalog, set(), k=4, interest_scores={"Profiling & Optimization": 1.0})
    assert titles(plan) == ["Roofline Analysis", "Occupancy Calculator", "Bank Conflicts", "CUDA Graphs"]


def test_a_started_tier_of_the_focus_is_finished_first(catalog):
    plan = plan_next(catalog, {"occupancy-calculator"}, k=1, interest_scores={"Profiling & Optimization": 1.0})
    assert titles(plan) == ["Roofline Analysis"]
    assert "finishes the tier you started with Occupancy Calculator" in plan.picks[0].reason


def test_someone_who_skipped_ahead_is_pointed_back_to_tier_1(catalog):
    plan = plan_next(catalog, {"ptx-manual"}, k=2)
    assert titles(plan) == ["Programming Massively Parallel Processors (PMPP)", "Lecture Series"]
    assert "back to basics" in plan.picks[0].reason and "PTX Manual" in plan.picks[0].reason


def test_stated_interest_comes_before_the_global_order(catalog):
    plan = plan_next(catalog, set(), interest="I want to get good at profiling", k=2)
    assert titles(plan) == ["Roofline Analysis", "Occupancy Calculator"]
    assert "topic you asked about" in plan.picks[0].reason


def test_with_no_focus_tier_1_of_every_topic_comes_before_the_tier_2_of_a_topic_in_progress(catalog):
    plan = plan_next(catalog, {"matmul-worklog", "anatomy-of-matmul"}, k=3)
    assert titles(plan) == ["Programming Massively Parallel Processors (PMPP)", "Lecture Series", "Roofline Analysis"]


def test_reading_ahead_back_fills_the_lower_tier_before_the_guides_order(catalog):
    plan = plan_next(catalog, {"bank-conflicts"}, k=2)
    assert titles(plan) == ["Roofline Analysis", "Occupancy Calculator"]
    assert "back to basics" in plan.picks[0].reason


def test_a_learner_asking_what_they_skipped_gets_the_focus_lower_tiers_then_the_guides_order(catalog):
    plan = plan_next(catalog, {"cuda-graphs"}, k=4, interest_scores={"Profiling & Optimization": 1.0}, backfill=True)
    assert titles(plan) == ["Roofline Analysis", "Occupancy Calculator", "Bank Conflicts",
                            "Programming Massively Parallel Processors (PMPP)"]


def test_a_backfill_never_continues_to_the_focus_harder_tiers(catalog):
    plan = plan_next(catalog, {"bank-conflicts"}, k=4, interest_scores={"Profiling & Optimization": 1.0}, backfill=True)
    assert "CUDA Graphs" not in titles(plan)


def test_a_backfill_takes_only_the_strongest_focus(catalog):
    plan = plan_next(catalog, set(), k=3, backfill=True,
                     interest_scores={"Profiling & Optimization": 1.0, "Matrix Multiplication": 0.6})
    assert plan.focus_topics == ["Profiling & Optimization"]


def test_the_reason_names_the_tier_that_was_finished_even_when_a_tier_is_missing():
    catalog = [
        make("Attention", "FA", 1, "FlashAttention Paper"),
        make("Attention", "KV", 3, "GQA Paper"),
    ]
    plan = plan_next(catalog, {"flashattention-paper"}, k=1, interest_scores={"Attention": 1.0})
    assert "next after Tier 1, which you finished (FlashAttention Paper)" in plan.picks[0].reason


def test_every_pick_carries_a_one_line_reason_with_tier_and_topic(catalog):
    for pick in plan_next(catalog, {"ptx-manual"}, k=20).picks:
        assert "\n" not in pick.reason
        assert pick.resource.topic in pick.reason


def test_interest_matches_topic_names_through_word_forms(catalog):
    scores = topic_interest("optimizing kernels", catalog)
    assert max(scores, key=scores.get) == "Profiling & Optimization"


def test_mentions_resolve_author_handles_and_title_acronyms(catalog):
    found = resolve_mentions("I've finished siboehm's post and PMPP", catalog)
    assert {r.title for r in found} == {"Matmul Worklog", "Programming Massively Parallel Processors (PMPP)"}


def test_mentions_resolve_urls(catalog):
    found = resolve_mentions("done with https://example.com/cuda-graphs/ already", catalog)
    assert [r.title for r in found] == ["CUDA Graphs"]


def test_next_on_the_command_line_takes_free_text_for_what_was_read(capsys):
    from assistant.cli import main

    assert main(["next", "--read", "the Tier 1 profiling material", "--k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["counted_as_read"]) == 3
    assert not set(out["counted_as_read"]) & {p["id"] for p in out["picks"]}
    # no focus was asked for: the guide's order, Tier 1 of the other topics before Profiling's Tier 2
    assert all(p["topic"] != "Profiling & Optimization" and p["tier"] == 1 for p in out["picks"])


def test_next_names_a_read_reference_it_cannot_resolve_in_one_line(capsys):
    from assistant.cli import main

    assert main(["next", "--read", "https://nowhere.example/x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names nothing in the catalog" in err
