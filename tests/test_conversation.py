"""Follow-ups in a conversation, end to end on a small real index (packaged embedder, real FAISS): each kind of
follow-up is resolved against the previous question and its sources, searched as a standalone question, and
answered from the resource the conversation points at."""

from __future__ import annotations

import pytest
from fixtures.conversation.corpus import conversation_corpus
from fixtures.index.corpus import assistant_on, load_corpus

from assistant.chain import Assistant, Query
from assistant.conversation import Turn, Vocabulary, resolve
from assistant.records import Answer

FLASH = "How does FlashAttention reduce HBM traffic?"
NCCL = "How does NCCL's ring all-reduce use bandwidth?"


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return assistant_on(tmp_path_factory.mktemp("conversation-home"), *conversation_corpus(*load_corpus()))


def turn(answer: Answer) -> Turn:
    """What the app keeps of an answer for the next question."""
    return Turn(answer.question, answer.standalone_question, [c.title for c in answer.citations],
                [c.resource_id for c in answer.citations])


def converse(assistant: Assistant, *questions: str) -> list[Answer]:
    history: list[Turn] = []
    answers = []
    for question in questions:
        answer = assistant.ask(Query(question, history=list(history), backend="extractive"))
        answers.append(answer)
        history.append(turn(answer))
    return answers


def cited(answer: Answer) -> list[str]:
    return [c.resource_id for c in answer.citations]


def test_and_version_3_after_a_flashattention_question_cites_the_flashattention_3_paper(assistant):
    first, follow = converse(assistant, FLASH, "and what changed in version 3?")
    assert "flashattention" in cited(first) and "flashattention-3" not in cited(first)
    assert cited(follow)[0] == "flashattention-3"
    assert follow.standalone_question == "What changed in FlashAttention-3?"


def test_a_pronoun_is_replaced_by_the_conversations_subject(assistant):
    _, follow = converse(assistant, FLASH, "does it overlap data movement with computation on Hopper?")
    assert follow.standalone_question.startswith("Does FlashAttention overlap")
    assert "flashattention-3" in cited(follow)[:2]


def test_what_about_the_amd_side_keeps_the_topic_and_finds_amds_library(assistant):
    first, follow = converse(assistant, NCCL, "what about the AMD side?")
    _, first_hits = assistant.retrieve.invoke(Query(NCCL))
    assert cited(first)[0] == "nccl" and "rccl" not in {h.resource.id for h in first_hits[:2]}
    assert "NCCL" in follow.standalone_question and "AMD" in follow.standalone_question
    _, hits = assistant.retrieve.invoke(Query("what about the AMD side?", history=[turn(first)]))
    assert {"nccl", "rccl"} <= {h.resource.id for h in hits[:2]}  # the topic kept, its AMD side found


def test_more_on_a_numbered_source_answers_from_that_source(assistant):
    first = assistant.ask(Query(FLASH, backend="extractive"))
    history = [turn(first)]
    target = first.citations[1] if len(first.citations) > 1 else first.citations[0]
    follow = assistant.ask(Query(f"more on [{target.n}]", history=history, backend="extractive"))
    assert follow.standalone_question.startswith(target.title)
    assert cited(follow)[0] == target.resource_id


def test_a_new_self_contained_question_is_searched_as_asked(assistant):
    _, follow = converse(assistant, FLASH, "How does NCCL implement all-gather over NVLink?")
    assert follow.standalone_question == "How does NCCL implement all-gather over NVLink?"
    assert cited(follow)[0] == "nccl"


def test_the_first_question_of_a_conversation_is_never_rewritten(assistant):
    answer = assistant.ask(Query("and what changed in version 3?", backend="extractive"))
    assert answer.standalone_question == "and what changed in version 3?"


# --- the rewrite alone, on the guide's vocabulary ------------------------------------------------------------


@pytest.fixture(scope="module")
def vocabulary(assistant: Assistant) -> Vocabulary:
    return assistant.vocabulary


HISTORY = [Turn(FLASH, FLASH, ["FlashAttention: Fast and Memory-Efficient Exact Attention"], ["flashattention"])]


def test_names_come_from_the_guide_not_from_ordinary_english(vocabulary):
    assert vocabulary.names("does it tile the softmax on Hopper with TMA and FP8?") == ["softmax", "Hopper", "TMA", "FP8"]


def test_a_version_number_becomes_the_catalogs_versioned_name(vocabulary):
    assert vocabulary.versioned("FlashAttention", 2) == "FlashAttention-2"
    assert vocabulary.versioned("FlashAttention", 7) is None
    assert resolve("what is new in the third version?", HISTORY, vocabulary).standalone == "What is new in FlashAttention-3?"


def test_a_short_question_with_nothing_of_its_own_carries_the_subject(vocabulary):
    resolved = resolve("why?", HISTORY, vocabulary)
    assert resolved.followup and "FlashAttention" in resolved.standalone


def test_a_question_naming_its_own_antecedent_is_not_a_follow_up(vocabulary):
    resolved = resolve("How does the TMA unit work and why is it fast?", HISTORY, vocabulary)
    assert not resolved.followup
    assert resolved.standalone == "How does the TMA unit work and why is it fast?"


def test_a_short_pronoun_question_naming_something_else_still_points_back(vocabulary):
    history = [Turn("What does the Hopper TMA unit do?", "What does the Hopper TMA unit do?",
                    ["Deep Dive on the Hopper TMA Unit"], ["hopper-tma"])]
    assert resolve("how does CUTLASS use it?", history, vocabulary).standalone == "How does CUTLASS use Hopper TMA?"


def test_a_bare_why_carries_the_previous_questions_topic(vocabulary):
    history = [Turn("How do warp shuffles speed up reductions?", "How do warp shuffles speed up reductions?",
                    ["Warp Shuffle Tricks"], ["warp"])]
    resolved = resolve("why?", history, vocabulary)
    assert resolved.standalone == "Why (warp shuffles speed up reductions)?"
