"""A sentence that leans on a dropped one: its reference written out in the question's words, or dropped with it."""

from __future__ import annotations

from assistant.antecedents import noun_phrase, resolved, subject

QUESTION = "How does FlashAttention-3 make use of Hopper GPUs?"
DROPPED = "FlashAttention-3 uses Hopper GPUs by leveraging their new capabilities, reaching 35% utilization"


def test_it_takes_the_dropped_sentences_subject_when_the_question_names_it():
    assert resolved("It exploits asynchrony of the Tensor Cores.", DROPPED, QUESTION) == (
        "FlashAttention-3 exploits asynchrony of the Tensor Cores.")


def test_its_takes_the_subject_as_a_possessive():
    assert resolved("Its producer warps issue TMA loads.", DROPPED, QUESTION) == (
        "FlashAttention-3's producer warps issue TMA loads.")


def test_a_subject_the_question_does_not_name_is_not_written_in():
    assert resolved("It exploits asynchrony.", "The new kernel uses Hopper GPUs", QUESTION) is None


def test_the_subject_ends_at_the_auxiliary_not_at_a_plural_noun():
    assert subject("DPX instructions are a new kind of instruction", "What are DPX instructions?") == "DPX instructions"


def test_a_noun_after_this_takes_the_phrase_the_dropped_sentence_named():
    dropped = "Medusa uses a tree-based attention mechanism to combine the heads' options"
    assert resolved("This mechanism is implemented in medusa_model.py.", dropped, "What does Medusa do?") == (
        "The tree-based attention mechanism is implemented in medusa_model.py.")


def test_this_is_because_keeps_only_the_reason():
    assert resolved("This is because TMA computes the addresses.", "TMA frees registers", "Why does TMA help?") == (
        "TMA computes the addresses.")


def test_this_standing_for_the_whole_dropped_claim_goes_with_it():
    assert resolved("This allows developers to try real workloads.", DROPPED, QUESTION) is None


def test_a_verb_of_the_dropped_sentence_is_not_taken_for_a_noun():
    assert noun_phrase("allows", "Tiling allows the kernel to stay in SRAM") == ""


def test_a_noun_the_dropped_sentence_never_named_leaves_nothing_to_stand_for():
    assert resolved("This change unifies the mask.", DROPPED, QUESTION) is None


def test_a_sentence_that_does_not_refer_back_is_unchanged():
    assert resolved("Hopper adds TMA.", DROPPED, QUESTION) == "Hopper adds TMA."


def test_a_joining_word_goes_with_the_sentence_it_joined():
    assert resolved("Additionally, shared memory cuts global loads.", DROPPED, QUESTION) == "Shared memory cuts global loads."


def test_a_joining_word_before_a_pronoun_goes_and_the_pronoun_is_resolved():
    assert resolved("However, it overlaps softmax with matmul.", DROPPED, QUESTION) == (
        "FlashAttention-3 overlaps softmax with matmul.")


def test_also_goes_with_the_sentence_it_added_to():
    assert resolved("It also overlaps softmax with matmul.", DROPPED, QUESTION) == (
        "FlashAttention-3 overlaps softmax with matmul.")
