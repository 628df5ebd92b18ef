"""Understanding what a learner says they have read and what they want, on a catalog written for these tests."""

from __future__ import annotations

import pytest

from assistant.planner import NextReads
from assistant.reading import Reader, split_clauses, stem
from core.records import Resource
from planner_fixture import reader, resources  # noqa: F401 - fixtures


def read_titles(reader: Reader, text: str) -> set[str]:
    return {r.title for r in reader.understand(text).read}


# --- titles and their short forms ------------------------------------------------------------------


def test_a_full_title_is_read(reader):
    assert read_titles(reader, "I've read Optimistic Lock Coupling. What next?") == {"Optimistic Lock Coupling"}


def test_an_acronym_in_the_title_names_it(reader):
    assert read_titles(reader, "Finished DIH, now what?") == {"Database Internals Handbook (DIH)"}


def test_a_version_number_picks_that_version(reader):
    assert read_titles(reader, "I read Calvin-2 last week; next?") == {"Calvin-2: Faster Deterministic Transactions"}


def test_the_x_paper_without_a_number_is_the_original(reader):
    assert read_titles(reader, "Done with the Calvin paper. What else?") == {"Calvin: Deterministic Transactions"}


def test_initials_of_a_title_name_it(reader):
    assert read_titles(reader, "I've read MDP. What next?") == {"Morsel-Driven Parallelism"}


def test_a_url_names_its_resource(reader):
    assert read_titles(reader, "done with https://papers.example.org/raft/ already") == {"Raft: Understandable Consensus"}


# --- authors, possessives, hosts ---------------------------------------------------------------------


def test_an_author_possessive_with_a_plural_kind_is_all_their_posts(reader):
    found = read_titles(reader, "I went through Neumann's posts, what should I read next?")
    assert found == {"Compiling Queries with LLVM, Part 1", "Compiling Queries with LLVM, Part 2"}


def test_an_author_possessive_and_a_topic_word_pick_one_post(reader):
    assert read_titles(reader, "I've read Mira Chen's LSM post. Next?") == {"LSM Trees Explained"}


def test_a_first_name_can_stand_for_an_authors_handle(reader):
    assert read_titles(reader, "I read Tobias's buffer pool post. Next?") == {"Buffer Pool Internals"}
    assert read_titles(reader, "I read Tobias's adaptive execution notes. Next?") == {"Adaptive Execution Notes"}


def test_a_host_names_its_site(reader):
    assert read_titles(reader, "Finished the jepsen clock skew write-up.") == {"Jepsen: Clock Skew"}


# --- kinds -------------------------------------------------------------------------------------------


def test_a_kind_narrows_a_section_to_its_papers(reader):
    found = read_titles(reader, "I've read the papers in the deterministic transactions section.")
    assert found == {"Calvin: Deterministic Transactions", "Calvin-2: Faster Deterministic Transactions"}


def test_the_docs_of_a_topic_are_its_docs_resources(reader):
    assert read_titles(reader, "I've read the docs in the replication topic.") == {"Spanner Operations Guide"}


# --- groups ------------------------------------------------------------------------------------------


def test_a_tier_of_a_topic_is_every_item_of_it(reader):
    found = read_titles(reader, "Done with the Tier 2 query material. What next?")
    assert found == {"Compiling Queries with LLVM, Part 1", "Compiling Queries with LLVM, Part 2"}


def test_a_whole_topic_is_every_item_of_it(reader, resources):
    found = read_titles(reader, "I finished the whole replication section; what now?")
    assert found == {r.title for r in resources if r.topic == "Replication & Consensus"}


def test_every_item_of_a_tier_across_the_guide(reader, resources):
    found = read_titles(reader, "I've read all of Tier 1 across the guide. What comes after?")
    assert found == {r.title for r in resources if r.tier == 1}


def test_a_counted_set_takes_that_many_matching_items(reader):
    assert read_titles(reader, "Both Jepsen posts are done.") == {"Jepsen: Testing Partitions", "Jepsen: Clock Skew"}


def test_a_loose_section_name_finds_the_section(reader):
    found = read_titles(reader, "I've gone through the vectorized-engines reading. Next?")
    assert found == {"Vectorization vs Compilation in Query Execution", "Morsel-Driven Parallelism"}


def test_tiers_joined_by_and_share_their_topic(reader, resources):
    found = read_titles(reader, "Done with the Tier 1 and Tier 2 storage material.")
    assert found == {r.title for r in resources if r.topic == "Storage Engines" and r.tier in (1, 2)}


def test_except_leaves_the_named_part_unread(reader, resources):
    found = read_titles(reader, "I've read the whole Storage Engines topic except compaction.")
    assert found == {r.title for r in resources if r.topic == "Storage Engines" and r.section != "Compaction"}


def test_the_whole_guide_except_a_tier_is_every_other_item(reader, resources):
    found = read_titles(reader, "I've read the whole guide except the Tier 3 material. What's left?")
    assert found == {r.title for r in resources if r.tier != 3}


def test_a_version_number_is_not_a_count(reader):
    found = read_titles(reader, "I read the Calvin-2 paper and the Raft paper. Next?")
    assert found == {"Calvin-2: Faster Deterministic Transactions", "Raft: Understandable Consensus"}


def test_a_partial_word_alone_names_nothing(reader):
    assert read_titles(reader, "I read some compac notes elsewhere. What next?") == set()


# --- the sentence's roles ----------------------------------------------------------------------------


def test_what_was_not_read_is_not_counted(reader):
    assert read_titles(reader, "I haven't read DIH yet; where do I start?") == set()


def test_a_place_the_learner_decided_to_skip_is_not_read(reader):
    found = read_titles(reader, 'I read Raft, I decided to skip "Vectorized engines", what next?')
    assert found == {"Raft: Understandable Consensus"}


def test_asking_whether_to_skip_is_a_question_not_a_history():
    assert split_clauses("Should I skip the compaction section?")[0].role == "want"


def test_items_listed_before_are_done_count_as_read(reader):
    found = read_titles(reader, "Raft, Calvin-2 and Optimistic Lock Coupling are done.")
    assert found == {"Raft: Understandable Consensus", "Calvin-2: Faster Deterministic Transactions",
                     "Optimistic Lock Coupling"}


def test_what_comes_after_after_is_read(reader):
    assert read_titles(reader, "What should I read after the Raft paper?") == {"Raft: Understandable Consensus"}


def test_a_wish_is_not_a_reading_history(reader):
    clauses = split_clauses("I've read DIH. I want to learn query compilation next.")
    assert [c.role for c in clauses] == ["read", "want"]
    assert read_titles(reader, "I've read DIH. I want to learn query compilation next.") == {
        "Database Internals Handbook (DIH)"}


def test_the_first_two_tiers_of_a_topic(reader, resources):
    found = read_titles(reader, "I've knocked out the first two tiers of the storage topic. Where to now?")
    assert found == {r.title for r in resources if r.topic == "Storage Engines" and r.tier in (1, 2)}


def test_my_reading_introduces_a_history(reader):
    assert read_titles(reader, "My reading so far: DIH and the Raft paper. Next?") == {
        "Database Internals Handbook (DIH)", "Raft: Understandable Consensus"}


def test_what_follows_after_ends_where_a_clause_of_its_own_starts(reader):
    understanding = reader.understand("Recommend something after the Raft paper if I want to learn compaction.")
    assert {r.title for r in understanding.read} == {"Raft: Understandable Consensus"}
    assert understanding.focus_topics == ["Storage Engines"]


def test_a_clause_with_its_own_subject_ends_the_name_before_it(reader):
    found = read_titles(reader, "I've read Optimistic Lock Coupling as it seemed to be the main topic of the Storage "
                                "Engines section. What next?")
    assert found == {"Optimistic Lock Coupling"}


def test_a_quoted_group_is_the_group_not_the_title_its_words_touch(reader):
    assert read_titles(reader, 'I\'ve read "every tier 2 deterministic transactions paper". Next?') == {
        "Calvin: Deterministic Transactions", "Calvin-2: Faster Deterministic Transactions"}


def test_the_read_thing_sits_between_the_cue_words(reader):
    assert read_titles(reader, "I've read Neumann's part 1 already. Next?") == {"Compiling Queries with LLVM, Part 1"}


def test_names_in_parentheses_refer_back_to_the_set_just_named(reader):
    found = read_titles(reader, "I've read the two Calvin papers (Calvin, Calvin-2). Next?")
    assert found == {"Calvin: Deterministic Transactions", "Calvin-2: Faster Deterministic Transactions"}


def test_a_new_subject_after_and_starts_a_wish(reader, resources):
    understanding = reader.understand(
        "I've gone through every resource in the consensus basics tier and I'm curious about compaction.")
    assert {r.title for r in understanding.read} == {r.title for r in resources if r.section == "Consensus basics"}
    assert understanding.focus_topics == ["Storage Engines"]


def test_read_as_a_noun_is_no_history():
    assert split_clauses("Suggest a first read on consensus. I'm new.")[0].role == "want"


# --- interest ----------------------------------------------------------------------------------------


def test_interest_names_the_topic_it_asks_about(reader):
    understanding = reader.understand("I've read DIH. I want to get into consensus next.")
    assert understanding.focus_topics == ["Replication & Consensus"]


def test_interest_in_a_section_word_points_at_its_topic(reader):
    understanding = reader.understand("Anything on compaction I should read?")
    assert understanding.focus_topics[0] == "Storage Engines"


def test_a_titles_own_name_points_at_its_topic(reader):
    assert reader.understand("I'd like to study RocksLite eventually; what first?").focus_topics == ["Storage Engines"]


def test_a_question_with_no_topic_words_has_no_focus(reader):
    assert reader.understand("I've read DIH. What should I read next?").interest == {}


def test_a_word_of_the_whole_field_alone_gives_no_focus():
    # "database" names every topic here, as "GPU" runs through the real guide ("Hey GPU, what next?")
    items = [("Database Storage", "Page Layouts"), ("Database Storage", "Buffer Pools"),
             ("Database Queries", "Join Algorithms"), ("Database Queries", "Cost Models"),
             ("Database Replication", "Quorums"), ("Database Replication", "Leader Leases")]
    reader = Reader([Resource.from_dict({
        "id": f"r{i}", "title": title, "url": f"https://example.org/{i}", "authors": "", "note": "", "list_anchor": "",
        "topic": topic, "section": "Basics", "tier": 1, "kind": "blog", "position": i})
        for i, (topic, title) in enumerate(items)])
    assert reader.understand("Hey database, what should I read next?").focus_topics == []
    assert reader.understand("I want to learn about join algorithms next.").focus_topics == ["Database Queries"]


def test_an_adverb_is_an_ordinary_word_not_a_product_name(resources):
    reader = Reader(resources, english={"efficiently", "quickly", "help", "write"})
    assert not reader._name_like(stem("efficiently"))  # "efficientli"
    assert reader._name_like(stem("RocksLite"))


def test_went_alone_is_no_reading_but_went_over_is(reader):
    assert read_titles(reader, "What went wrong with locking before Optimistic Lock Coupling?") == set()
    assert read_titles(reader, "I went over Optimistic Lock Coupling. What next?") == {"Optimistic Lock Coupling"}
    assert read_titles(reader, "I went through Optimistic Lock Coupling, what now?") == {"Optimistic Lock Coupling"}


def test_a_question_about_things_that_never_names_the_learner_reads_nothing(reader):
    assert read_titles(reader, "What techniques are used in Optimistic Lock Coupling?") == set()
    assert read_titles(reader, "Which systems covered Optimistic Lock Coupling first?") == set()


def test_are_done_after_a_list_still_says_what_was_read(reader):
    question = "LSM Trees Explained and Optimistic Lock Coupling are done. Which is next?"
    assert read_titles(reader, question) == {"LSM Trees Explained", "Optimistic Lock Coupling"}


def test_a_clause_of_its_own_in_such_a_question_still_says_what_was_read(reader):
    question = "What comes next now that Optimistic Lock Coupling is done?"
    assert read_titles(reader, question) == {"Optimistic Lock Coupling"}


def test_a_typo_in_a_name_still_names_the_item(reader):
    assert read_titles(reader, "i finished rcokslite, what next?") == {"RocksLite"}


def test_a_title_that_reads_like_a_request_is_still_a_read(resources):
    how_to = Resource(id="howto", title="How to Build a Buffer Manager", url="https://example.org/howto", authors="",
                      note="", topic="Storage Engines", section=resources[0].section, tier=3, kind="blog",
                      position=99, list_anchor="")
    text = "I've explored RocksLite, How to Build a Buffer Manager, and LSM Trees Explained."
    assert read_titles(Reader([*resources, how_to]), text) == {"RocksLite", "How to Build a Buffer Manager",
                                                               "LSM Trees Explained"}


def test_a_full_title_with_a_part_number_names_that_part_alone(reader):
    assert read_titles(reader, "I read Compiling Queries with LLVM, Part 1 and LSM Trees Explained") == {
        "Compiling Queries with LLVM, Part 1", "LSM Trees Explained"}


def test_a_name_spelled_out_is_not_taken_for_the_item_mentioned_just_before(resources):
    def paper(rid: str, title: str) -> Resource:
        return Resource(id=rid, title=title, url=f"https://example.org/{rid}", authors="", note="",
                        topic="Query Execution", section=resources[8].section, tier=3, kind="paper", position=90,
                        list_anchor="")

    reader = Reader([*resources, paper("evo", "EvoEngineer: Automated Kernel Evolution"), paper("kllm", "KernelLLM")])
    assert read_titles(reader, "i read evoengineer and kernelllm.") == {"EvoEngineer: Automated Kernel Evolution",
                                                                       "KernelLLM"}


def test_a_tier_after_a_colon_belongs_to_the_name_before_it(reader):
    assert read_titles(reader, "I have read storage engines: tier 1, and Raft. What next?") == {
        "Database Internals Handbook (DIH)", "LSM Trees Explained", "Buffer Pool Internals",
        "Raft: Understandable Consensus"}


def test_a_place_not_yet_started_is_the_focus_when_nothing_else_is_asked(reader):
    understanding = reader.understand("I haven't started the Query Execution topic yet. Where do I go from here?")
    assert understanding.focus_topics == ["Query Execution"] and not understanding.read


def test_a_place_not_yet_started_must_be_named_word_for_word(reader):
    understanding = reader.understand("I haven't got the execution of queries yet. Where do I go from here?")
    assert understanding.interest.get("Query Execution", 0.0) < 1.0


def test_a_place_the_learner_jumped_into_is_not_read(reader):
    understanding = reader.understand("I read Raft. I've jumped into the Storage Engines tier 2 and got lost. Did I "
                                      "skip something?")
    assert {r.title for r in understanding.read} == {"Raft: Understandable Consensus"}


def test_a_bullet_list_under_i_have_read_lists_what_was_read(reader):
    text = "- I've read:\n  - Mira Chen's LSM post\n  - rockslite\n- Did I miss something?"
    assert read_titles(reader, text) == {"RocksLite", "LSM Trees Explained"}


def test_what_follows_else_refers_back_to_the_reads_and_names_none(reader):
    understanding = reader.understand("I've read the whole Replication & Consensus topic. Is there anything else "
                                      "about Compaction besides what I've already read?")
    assert {r.topic for r in understanding.read} == {"Replication & Consensus"} and understanding.subject


def test_i_would_like_to_know_asks_and_reads_nothing(reader):
    assert read_titles(reader, "I'd like to know if there's anything else in the guide about Jepsen.") == set()


def test_titles_joined_by_slashes_inside_one_pair_of_quotes_are_each_read(reader):
    assert read_titles(reader, 'I finished "RocksLite/LSM Trees Explained/Raft: Understandable Consensus". Next?') == {
        "RocksLite", "LSM Trees Explained", "Raft: Understandable Consensus"}


def test_a_group_named_in_a_sentence_that_says_more_than_names_is_not_read(reader):
    text = "I read RocksLite. My curiosity is piqued by the Query Execution topic. What other topics would you suggest?"
    assert read_titles(reader, text) == {"RocksLite"}



def test_a_topic_read_ahead_in_is_where_they_skipped_not_a_focus(reader):
    understanding = reader.understand("I read Bw-Tree: A Latch-Free B-Tree. I jumped into the advanced Storage "
                                      "Engines material and got lost. Did I skip something?")
    assert understanding.focus_topics == [] and understanding.read_ids == {
        r.id for r in reader.resources if r.title == "Bw-Tree: A Latch-Free B-Tree"}


def test_an_item_the_learner_jumped_into_is_read_and_the_place_is_not(reader):
    text = "I jumped into RocksLite and the advanced Storage Engines material and got lost. Did I skip something?"
    assert read_titles(reader, text) == {"RocksLite"}


# --- names with "&" and groups narrowed by kind ----------------------------------------------------------


def test_a_place_name_with_an_ampersand_is_one_name_not_a_list(reader):
    found = read_titles(reader, "I've read Morsel-Driven Parallelism & all the paper resources of the "
                                "Deterministic transactions section of Replication & Consensus. What next?")
    assert found == {"Morsel-Driven Parallelism", "Calvin: Deterministic Transactions",
                     "Calvin-2: Faster Deterministic Transactions"}


def test_a_group_narrowed_by_kind_in_a_bare_list_of_names_is_read(reader):
    found = read_titles(reader, "Raft: Understandable Consensus; all the blog resources of the Consensus basics "
                                "section of Replication & Consensus. What should I read next?")
    assert found == {"Raft: Understandable Consensus", "Jepsen: Testing Partitions", "Jepsen: Clock Skew"}


def test_this_area_in_a_wish_that_names_its_own_place_means_that_place(reader):
    understood = reader.understand("I've read all the Tier 1 items of Storage Engines. I'm keen on the Query "
                                   "Execution topic, so what should I read to learn more about this area?")
    assert understood.focus_topics == ["Query Execution"]


# --- questions and places not yet started ----------------------------------------------------------------


def test_a_question_without_a_verb_is_a_wish_not_a_reading_history(reader):
    text = "I've read the Consensus basics section. Anything else that stands out? Like a section about compaction?"
    assert read_titles(reader, text) == {"Raft: Understandable Consensus", "Jepsen: Testing Partitions",
                                         "Jepsen: Clock Skew"}


@pytest.mark.parametrize(("wish", "focus"), [
    pytest.param("Can you recommend some good posts for practice?", "Replication & Consensus",
                 id="a wish naming no place: the place not yet started"),
    pytest.param("Can you recommend some good posts about LLVM?", "Query Execution",
                 id="a wish naming a product: the product's place"),
    pytest.param("But I want to learn Query Execution first. What should I read?", "Query Execution",
                 id="a wish naming its own place: that place"),
])
def test_the_focus_beside_a_place_not_yet_started(reader, wish, focus):
    understood = reader.understand(f"I haven't been diving into the Replication & Consensus topic yet. {wish}")
    assert understood.focus_topics == [focus]


def test_an_item_the_learner_has_been_reading_is_read_and_not_a_wish(reader):
    understood = reader.understand("I've been reading Raft: Understandable Consensus. Now I want to go deeper into the Query "
                                   "Execution topic. What should I read next?")
    assert {r.title for r in understood.read} == {"Raft: Understandable Consensus"}
    assert understood.focus_topics == ["Query Execution"]


def _entry(position: int, title: str, section: str, kind: str) -> Resource:
    slug = title.lower().replace(" ", "-").replace(":", "")
    return Resource(id=slug, title=title, url=f"https://{slug}.example.org/", authors="", note="",
                    topic="Serving", section=section, tier=1 if section == "Engines" else 2, kind=kind,
                    position=position, list_anchor="#" + section.lower())


def test_names_after_a_group_are_its_members_not_groups_of_their_own():
    # "vLLM" alone also names the vLLM TPU post: after the group it means the group's own vLLM
    reader = Reader([_entry(0, "vLLM", "Engines", "repo"), _entry(1, "SGLang", "Engines", "repo"),
                     _entry(2, "Engines Handbook", "Engines", "book"),
                     _entry(3, "vLLM TPU: a JAX backend for vLLM", "Backends", "blog")])
    found = read_titles(reader, "I've read all the repo resources of the Engines section (vLLM, SGLang). Next?")
    assert found == {"vLLM", "SGLang"}


def test_a_title_after_a_quantified_group_is_that_title_not_all_of_its_words():
    # "all the repo resources of the Engines section, SGLangBench": SGLangBench is one item, not "all SGLang"
    reader = Reader([_entry(0, "vLLM", "Engines", "repo"), _entry(1, "SGLang", "Engines", "repo"),
                     _entry(2, "SGLang Router", "Routers", "repo"), _entry(3, "SGLangBench", "Routers", "paper")])
    found = read_titles(reader, "I've read all the repo resources of the Engines section, SGLangBench, and more. Next?")
    assert found == {"vLLM", "SGLang", "SGLangBench"}


# --- names listed before the wish -------------------------------------------------------------------------


def test_names_listed_before_the_wish_in_one_sentence_are_read(reader):
    text = ("Optimistic Lock Coupling, Morsel-Driven Parallelism and all the Tier 1 items of Replication & Consensus, "
            "I am interested in the Query Execution topic now. Which one should I take?")
    assert read_titles(reader, text) == {"Optimistic Lock Coupling", "Morsel-Driven Parallelism",
                                         "Raft: Understandable Consensus", "Jepsen: Testing Partitions",
                                         "Jepsen: Clock Skew"}


def test_a_name_the_wish_points_back_to_is_its_object_not_a_read(reader):
    assert read_titles(reader, "Bw-Tree: A Latch-Free B-Tree, I would like to read it next. Any thoughts?") == set()


# --- what was begun ----------------------------------------------------------------------------------------


def test_a_versioned_title_begun_is_the_item_not_the_place_it_shares_words_with(reader):
    text = "I started Calvin-2: Faster Deterministic Transactions and got lost. Did I skip something?"
    assert read_titles(reader, text) == {"Calvin-2: Faster Deterministic Transactions"}


def test_a_verb_of_beginning_is_not_part_of_the_name_it_is_about(reader):
    assert [m.phrase.strip() for m in reader.mentions("I started Optimistic Lock Coupling")] == [
        "Optimistic Lock Coupling"]


def test_the_one_word_name_a_title_gives_itself_names_it_when_begun(reader):
    text = "I jumped into Raft and got lost in the advanced Replication & Consensus material. Did I skip something?"
    assert read_titles(reader, text) == {"Raft: Understandable Consensus"}


def test_a_whole_title_begun_is_the_item_even_where_it_holds_a_places_name(reader):
    text = ("I started Vectorization vs Compilation in Query Execution and got lost in the advanced Storage Engines "
            "material. Did I skip something?")
    assert read_titles(reader, text) == {"Vectorization vs Compilation in Query Execution"}


def test_the_place_in_a_begun_titles_words_is_not_where_the_learner_got_lost(reader):
    text = ("I started Vectorization vs Compilation in Query Execution and got lost in the advanced Storage Engines "
            "material. Did I skip something?")
    assert "Query Execution" not in reader.understand(text).interest


def test_diving_into_a_title_is_a_history_not_a_wish(reader):
    found = read_titles(reader, "I've been diving into Morsel-Driven Parallelism. What next?")
    assert found == {"Morsel-Driven Parallelism"}


def test_a_whole_topic_one_has_been_reading_counts_as_read(reader):
    text = "So far I've been reading the whole Storage Engines topic. What should I read next?"
    assert read_titles(reader, text) == {r.title for r in reader.resources if r.topic == "Storage Engines"}


def test_a_place_one_got_lost_in_while_diving_into_it_is_back_filled_not_a_focus(reader):
    understood = reader.understand("I read Optimistic Lock Coupling. I got lost while diving into the more advanced "
                                   "material in Storage Engines. Did I miss anything?")
    assert understood.focus_topics == []


# --- what is being read now ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "I'm currently reading Optimistic Lock Coupling. What should I read next?",
    "Right now I am working through Optimistic Lock Coupling, what comes after it?",
    "I'm halfway through Optimistic Lock Coupling. Any suggestions?",
    "I've read Raft: Understandable Consensus and am currently diving into Optimistic Lock Coupling. Next?",
    "Working on Optimistic Lock Coupling. What should I read next?",
])
def test_an_item_being_read_now_is_planned_past_not_wished_for(reader, text):
    assert "Optimistic Lock Coupling" in read_titles(reader, text)


def test_the_answer_says_what_is_being_read_now_and_does_not_offer_it_as_read(resources):
    answer = NextReads(resources).answer("I've read Raft: Understandable Consensus. I'm currently reading Optimistic "
                                         "Lock Coupling. What should I read next?", set(), k=5)
    assert "Optimistic Lock Coupling" not in [c.title for c in answer.citations]
    assert "Counting as read: Raft: Understandable Consensus." in answer.text
    assert "Reading now: Optimistic Lock Coupling (the picks come after it)." in answer.text
    assert [r.title for r in resources if r.id in answer.read_ids] == ["Raft: Understandable Consensus"]


def test_an_item_one_has_been_reading_by_a_short_name_is_planned_past(reader):
    understood = reader.understand("I've been reading the Raft paper. What should I read next?")
    assert {r.title for r in understood.read} == {"Raft: Understandable Consensus"}
    assert [m.label for m in understood.reading_now] == ["Raft: Understandable Consensus"]


def test_names_after_especially_narrow_the_reading_they_follow(reader):
    text = "I've been reading a lot lately, especially the Raft paper and Optimistic Lock Coupling. Next?"
    assert read_titles(reader, text) == {"Raft: Understandable Consensus", "Optimistic Lock Coupling"}


def test_a_place_being_read_now_is_where_the_learner_is_interested(reader):
    understood = reader.understand("I'm currently going through the Query Execution topic. What should I read next?")
    assert understood.read == [] and understood.focus_topics == ["Query Execution"]


def test_a_place_one_has_been_reading_is_planned_past(resources):
    answer = NextReads(resources).answer("I've been reading the Consensus basics section. What should I read next?",
                                         set(), k=3)
    assert not {c.title for c in answer.citations} & {r.title for r in resources if r.section == "Consensus basics"}


def test_now_after_the_last_item_of_a_list_is_no_wish(reader):
    understood = reader.understand("I've been reading Raft, Calvin, and DIH now and it feels like I hit a wall. Next?")
    assert [m.label for m in understood.reading_now] == [
        "Raft: Understandable Consensus", "Calvin: Deterministic Transactions", "Database Internals Handbook (DIH)"]


@pytest.mark.parametrize("text", [
    "I'm going to read Optimistic Lock Coupling. Is that a good start?",
    "What am I reading next, Optimistic Lock Coupling?",
    "I'm working on a lock manager and want to read Optimistic Lock Coupling. Good idea?",
    "Am I reading Optimistic Lock Coupling too early?",
])
def test_a_plan_or_question_about_reading_is_no_reading_now(reader, text):
    assert read_titles(reader, text) == set()


# --- asking whether the guide covers a subject --------------------------------------------------------------


def test_asking_whether_the_assistant_covered_a_subject_reads_nothing(reader):
    assert read_titles(reader, "Have you covered compaction in the guide?") == set()


def test_asking_whether_the_guide_covers_a_subject_after_a_whole_topic_asks_about_it(reader):
    understood = reader.understand("I've read the whole Storage Engines topic. Have you covered JIT in the guide?")
    assert understood.subject == "jit"
    assert [r.title for r in reader.resources if r.id == understood.subject_ranking[0]] == ["Engine JIT Reference"]


def test_the_subject_is_what_the_wish_asks_about_not_why(reader):
    understood = reader.understand("I have read the whole Storage Engines topic. Anything related to consensus outside "
                                   "what I have read? Any other resources to help me improve my understanding?")
    assert understood.subject == "consensus"


def test_the_place_one_got_lost_in_after_a_read_is_begun_not_read(reader):
    text = "I read Optimistic Lock Coupling and got lost in the advanced material of Storage Engines. Did I skip something?"
    assert read_titles(reader, text) == {"Optimistic Lock Coupling"}


def test_a_section_name_said_beside_another_topics_name_is_no_place_of_its_own(reader):
    assert reader.index.places_named("the compaction part of Query Execution") == ["Query Execution"]
    assert reader.index.places_named("the compaction part") == ["Storage Engines"]


def test_an_adverb_between_ive_and_the_participle_still_says_done(reader):
    assert read_titles(reader, "I've thoroughly explored the Raft paper. What next?") == {
        "Raft: Understandable Consensus"}


def test_a_capitalised_kind_word_after_a_name_is_no_unknown_name_word(reader):
    found = reader.understand("I've read the Raft Paper and the RocksLite Repo. What should I read next?")
    assert {r.title for r in found.read} == {"Raft: Understandable Consensus", "RocksLite"}


def test_a_wish_pointing_back_at_a_read_makes_its_topic_the_focus(reader):
    assert reader.understand("I've read Raft. What else is there around this?").focus_topics == ["Replication & Consensus"]


def test_a_wish_to_explore_the_topic_further_points_back_at_the_read(reader):
    found = reader.understand("I've read Raft. I would like to explore the topic further. What do you recommend?")
    assert found.focus_topics == ["Replication & Consensus"]


def test_saying_there_is_no_focus_keeps_a_pointing_wish_from_making_one(reader):
    found = reader.understand("I've read Raft. I don't have a particular focus right now, but I'd love to get "
                              "started on it. What should I read next?")
    assert found.focus_topics == []


def test_saying_there_is_no_focus_still_lets_a_named_place_be_the_focus(reader):
    found = reader.understand("I've read Raft. I have no particular focus, but I am curious about the "
                              "Storage Engines topic. What next?")
    assert found.focus_topics == ["Storage Engines"]


def test_a_relative_that_or_the_picks_pronoun_points_at_nothing_read(reader):
    assert reader.understand("I've read Raft. I need a read that focuses now.").focus_topics == []
    assert reader.understand("I've read Raft. What comes next, and how should I approach them?").focus_topics == []


def test_a_last_list_item_with_its_own_determiner_lends_no_group_noun_to_the_others(reader):
    found = reader.understand("I've read Raft, Calvin and the whole Storage Engines topic. What next?")
    assert "Calvin-2: Faster Deterministic Transactions" not in {r.title for r in found.read}
    assert {"Raft: Understandable Consensus", "Calvin: Deterministic Transactions", "RocksLite"} <= {r.title for r in found.read}


def test_already_diving_into_a_place_is_being_there_not_having_read_it(reader):
    found = reader.understand("I've read Raft. I'm already diving into the advanced material of the Storage Engines "
                              "topic and feel lost. Did I miss anything?")
    assert {r.title for r in found.read} == {"Raft: Understandable Consensus"}
    assert found.gap and found.focus_topics == ["Storage Engines"]


def test_reading_about_them_names_what_the_sentence_before_named(reader):
    found = reader.understand("I'm really excited to learn about the Consensus basics section. I've been reading about "
                              "them for a bit. What should I read next?")
    assert {r.title for r in found.read} == {"Raft: Understandable Consensus", "Jepsen: Testing Partitions",
                                             "Jepsen: Clock Skew"}


def test_continuing_to_work_through_an_item_is_reading_it_now(reader):
    found = reader.understand("As I continue to work through Raft: Understandable Consensus, what should I read next?")
    assert [m.label for m in found.reading_now] == ["Raft: Understandable Consensus"]


def test_wanting_to_continue_with_an_item_is_no_reading(reader):
    assert reader.understand("I want to continue with Raft. What next?").reading_now == []


def test_a_clause_of_its_own_after_but_is_no_part_of_the_read_list(reader):
    found = reader.understand("I've read Raft, but I'm still wondering about the Storage Engines topic. What next?")
    assert {r.title for r in found.read} == {"Raft: Understandable Consensus"}
    assert found.focus_topics == ["Storage Engines"]


def test_aside_from_what_was_read_points_back_at_the_reads_and_reads_nothing_new(reader, resources):
    found = reader.understand("I've read the whole Storage Engines topic. Anything else in the guide, aside from what "
                              "I've already read, that may be related to consensus?")
    assert found.subject == "consensus"
    assert {r.id for r in found.read} == {r.id for r in resources if r.topic == "Storage Engines"}


def test_beyond_what_was_read_about_a_subject_asks_about_it_and_reads_nothing_new(reader, resources):
    found = reader.understand("I've read the whole Storage Engines topic. Is there anything else in the guide beyond "
                              "what I read about consensus?")
    assert found.subject == "consensus"
    assert {r.id for r in found.read} == {r.id for r in resources if r.topic == "Storage Engines"}


def test_more_about_a_subject_after_a_whole_topic_asks_past_the_topic(reader, resources):
    found = reader.understand("I've read the whole Storage Engines topic. I want to know more about consensus.")
    assert found.subject == "consensus"
    assert {r.id for r in found.read} == {r.id for r in resources if r.topic == "Storage Engines"}


def test_more_about_a_subject_after_single_items_is_an_interest_not_a_search_past_them(reader):
    found = reader.understand("I've read Raft. I want to know more about consensus.")
    assert found.subject == ""
    assert found.focus_topics == ["Replication & Consensus"]


def test_the_reading_list_itself_is_never_the_subject_of_other(reader):
    found = reader.understand("I've read Raft. Which other books come next in the recommended order guide?")
    assert found.subject == ""


def test_a_negation_after_other_points_back_at_the_reads_and_still_asks(reader):
    found = reader.understand("I've read the whole Storage Engines topic. Are there other sections in the guide not "
                              "covered by what I've already read about consensus?")
    assert found.subject == "consensus"


def test_additional_information_on_a_subject_asks_about_it_across_the_guide(reader):
    found = reader.understand("I've read the whole Storage Engines topic. Can you provide additional information on "
                              "consensus?")
    assert found.subject == "consensus"


def test_additional_reading_without_an_object_asks_about_no_subject(reader):
    found = reader.understand("I want to go deeper into the Storage Engines topic. Could you recommend any additional "
                              "reading like the Raft paper?")
    assert found.subject == ""


def test_struggling_in_a_place_read_ahead_in_is_a_gap(reader):
    found = reader.understand("I've read DIH and RocksLite. But I got overwhelmed trying to dive into the "
                              "Storage Engines topic. What should I start with now?")
    assert found.gap and found.focus_topics == ["Storage Engines"]


def test_struggling_where_nothing_was_read_ahead_is_no_gap(reader):
    found = reader.understand("I've read Raft and I'm stuck on LSM Trees Explained. Could you recommend something "
                              "on the Storage Engines topic?")
    assert not found.gap
