"""Generated learner messages whose read list is true by construction: the seed, the name and rewrite checks."""

from __future__ import annotations

import random

from core.records import Resource
from tools.learner_rewrites import SEED_OPENER, group_key, group_name_ok, item_name_ok, name_lines, rewrite_problem, seed_message


def _r(rid: str, title: str, tier: int = 1, kind: str = "blog", authors: str = "") -> Resource:
    return Resource(id=rid, title=title, url=f"https://example.org/{rid}", authors=authors, note="",
                    topic="Attention", section="Kernels", tier=tier, kind=kind, position=0, list_anchor="")


RESOURCES = {"fa": _r("fa", "FlashAttention paper", kind="paper"), "pa": _r("pa", "Paged attention paper", kind="paper"),
             "mm": _r("mm", "Matmul worklog", tier=2, authors="Boehm")}
HANDLES = {"fa": {"flash"}, "pa": {"paged"}, "mm": {"matmu", "workl", "boehm"}}


def test_a_rewrite_that_keeps_every_name_in_a_read_sentence_is_kept() -> None:
    assert rewrite_problem("so i finished FA1 and boehm's post, what now?", []) == ""
    assert rewrite_problem("I went through FA1 and boehm's post. What now?", ["FA1", "boehm's post"]) == ""


def test_a_rewrite_written_as_the_assistant_is_dropped() -> None:
    assert rewrite_problem("Sure! I read FA1.", ["FA1"]) == "written as the assistant"


def test_a_rewrite_that_changed_a_name_is_dropped() -> None:
    assert rewrite_problem("I read FlashAttention-1.", ["FA1"]) == "a name changed or left out"


def test_a_rewrite_that_turned_a_read_into_a_question_is_dropped() -> None:
    assert rewrite_problem("Should I read FA1?", ["FA1"]) == "a name in a question"


def test_a_rewrite_that_turned_a_read_into_a_wish_or_a_negation_is_dropped() -> None:
    assert rewrite_problem("I want to read FA1 soon.", ["FA1"]) == "a name in a sentence that is not a read"
    assert rewrite_problem("I haven't read FA1.", ["FA1"]) == "a name in a sentence that is not a read"


def test_names_are_matched_without_case_quotes_or_extra_spaces() -> None:
    assert rewrite_problem('i read "fa1" and  boehm\'s post.', ["FA1", "Boehm's post"]) == ""


def test_a_rewrite_that_does_not_say_its_want_is_dropped() -> None:
    assert rewrite_problem("I read FA1. What next?", ["FA1"], must_say=("inference",)) == "the want is not said"


def test_an_item_name_is_kept_only_when_it_points_at_its_own_item() -> None:
    assert item_name_ok("boehm's worklog", "mm", HANDLES)
    assert not item_name_ok("the paged one", "fa", HANDLES)
    assert not item_name_ok("that attention paper", "fa", HANDLES)


def test_a_tier_name_must_say_its_place_and_its_number() -> None:
    ids = ["fa", "pa"]
    assert group_name_ok("attention tier 1", RESOURCES, "tier", ids, {"atten"})
    assert not group_name_ok("attention tier 2", RESOURCES, "tier", ids, {"atten"})
    assert not group_name_ok("tier 1 stuff", RESOURCES, "tier", ids, {"atten"})


def test_a_kind_name_must_say_the_kind() -> None:
    assert group_name_ok("the attention papers", RESOURCES, "kind", ["fa", "pa"], {"atten"})
    assert not group_name_ok("the attention stuff", RESOURCES, "kind", ["fa", "pa"], {"atten"})


def test_name_lines_strip_numbering_bullets_and_quotes() -> None:
    assert name_lines('1. "FA2"\n- boehm\'s post\n\n* the worklog.') == ["FA2", "boehm's post", "the worklog"]


def test_the_seed_names_every_read_unit_and_returns_the_names_to_keep() -> None:
    units = [{"kind": "item", "ids": ["fa"]}, {"kind": "item", "ids": ["mm"]}]
    names = {"fa": ["FA1"], "mm": ["boehm's worklog"]}
    seed, mentions = seed_message(random.Random(0), RESOURCES, units, names, [], "What next?")
    assert len(mentions) == 2 and all(m in seed for m in mentions)
    assert seed.startswith(SEED_OPENER) and seed.endswith("What next?")


def test_the_seed_for_the_bullet_style_is_a_bullet_list() -> None:
    units = [{"kind": "item", "ids": ["fa"]}, {"kind": "item", "ids": ["pa"]}]
    seed, _ = seed_message(random.Random(1), RESOURCES, units, {}, ["Write it as a short bullet list."], "Next?")
    assert seed.count("\n- ") == 2


def test_the_seed_of_a_group_uses_its_kept_name() -> None:
    key = group_key("kind", ["fa", "pa"])
    units = [{"kind": "kind", "ids": ["fa", "pa"]}]
    seed, mentions = seed_message(random.Random(2), RESOURCES, units, {key: ["the attention papers"]}, [], "Next?")
    assert mentions[0].startswith("the attention papers")


def test_a_learner_who_read_nothing_gets_a_seed_with_no_names() -> None:
    seed, mentions = seed_message(random.Random(3), RESOURCES, [], {}, [], "Where do I start?")
    assert mentions == [] and "not read anything" in seed


def test_an_item_name_with_a_word_neither_its_own_nor_the_fields_is_dropped() -> None:
    general = frozenset({"gpu", "post", "paper"})
    assert item_name_ok("boehm's gpu post", "mm", HANDLES, general)
    assert not item_name_ok("boehm's gpu insights", "mm", HANDLES, general)
    assert not item_name_ok("X's worklog", "mm", HANDLES, general)


def test_a_rewrite_in_the_assistants_voice_is_dropped_wherever_it_says_so() -> None:
    assert rewrite_problem("I read FA1. I'd be happy to help you with that.", ["FA1"]) == "written as the assistant"


def test_a_rewrite_that_says_a_name_is_still_being_read_is_dropped() -> None:
    assert rewrite_problem("I'm currently reading FA1.", ["FA1"]) == "a name in a sentence that is not a read"
    assert rewrite_problem("I have just started reading FA1.", ["FA1"]) == "a name in a sentence that is not a read"


def test_a_name_being_read_now_may_be_said_as_still_reading_or_as_read() -> None:
    assert rewrite_problem("I read FA1. At the moment I'm going through FA2.", ["FA1"], (), ["FA2"]) == ""
    assert rewrite_problem("I read FA1 and I'm done with FA2.", ["FA1"], (), ["FA2"]) == ""


def test_a_name_being_read_now_turned_into_a_wish_is_dropped() -> None:
    assert rewrite_problem("I read FA1. I want to read FA2 soon.", ["FA1"], (), ["FA2"]) == (
        "a name being read now in a sentence that is not a read")
    assert rewrite_problem("I read FA1. Should I read FA2?", ["FA1"], (), ["FA2"]) == "a name in a question"


def test_an_item_being_read_now_is_one_the_guide_would_pick_and_never_a_gold_pick() -> None:
    from tools.synth_learners import LearnerState, add_reading_now, expected

    catalog = [Resource(id=f"r{i}", title=f"Item {i}", url=f"https://example.org/{i}", authors="", note="",
                        topic="Attention", section="Kernels", tier=1 + i // 3, kind="blog", position=i, list_anchor="")
               for i in range(6)]
    state = LearnerState(seed=1, index=0, scenario="no-focus", units=[], read_ids=[])
    state.gold, state.accept = expected(catalog, state)
    before = list(state.gold)
    add_reading_now(catalog, state)
    assert state.reading_now[0] in before
    assert state.reading_now[0] not in state.gold and len(state.gold) == 3
