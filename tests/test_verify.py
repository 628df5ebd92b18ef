"""Sentence-level verification with the packaged embedder: what survives, what is dropped and why."""

from __future__ import annotations

import pytest
from fixtures.index.corpus import embedder, load_corpus

from assistant.evidence import Evidence, EvidenceSentence, EvidenceSource
from assistant.verify import (
    BORROWED,
    CUT_OFF,
    DANGLING,
    DECLINED,
    LEANS_ON_DROPPED,
    MISBOUND,
    MISCOUNTED,
    NO_SOURCE,
    OFF_SUBJECT,
    POINTS_AHEAD,
    RESTATES,
    STRAY,
    STRAY_CLAUSE,
    UNSUPPORTED,
    Verdict,
    Verifier,
    distinct,
    is_ordinary,
    missing_facts,
    names,
    numbers,
    split_claims,
    strip_control,
    miscounted,
    quantities,
    respelled,
    unbound_numbers,
    without_clauses,
)
from core.settings import Settings
from core.text import terms
from index.bm25 import BM25Index
from index.records import ResourceHit

QUESTION = "How does FlashAttention avoid writing the attention matrix to HBM?"
FLASH = (
    "FlashAttention computes exact attention without writing the full attention matrix to GPU high bandwidth memory.",
    "It splits queries, keys and values into blocks that fit in on-chip SRAM and uses an online softmax.",
)
VLLM = ("vLLM manages attention key and value memory with PagedAttention, which stores the cache in fixed-size blocks.",)


@pytest.fixture(scope="module")
def evidence() -> Evidence:
    resources = {r.id: r for r in load_corpus()[1]}
    sources = []
    for n, (rid, sents) in enumerate([("flashattention", FLASH), ("vllm", VLLM)], start=1):
        sentences = [EvidenceSentence(text, n - 1, (0, i), 1.0) for i, text in enumerate(sents)]
        sources.append(EvidenceSource(n, ResourceHit(resources[rid], 1.0), sentences))
    return Evidence(QUESTION, sources)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory: pytest.TempPathFactory) -> Verifier:
    settings = Settings(home=tmp_path_factory.mktemp("verify-home"))
    return Verifier(embedder(settings), settings.llm)


def test_a_sentence_its_source_supports_is_kept(verifier, evidence):
    verdict = verifier.check("FlashAttention splits queries, keys and values into blocks that fit in SRAM [1].", evidence)
    assert verdict.text == "FlashAttention splits queries, keys and values into blocks that fit in SRAM [1]."
    assert not verdict.dropped


def test_an_unsupported_sentence_is_dropped_and_the_rest_kept(verifier, evidence):
    verdict = verifier.check(
        "FlashAttention never writes the attention matrix to high bandwidth memory [1]. "
        "It was first released for AMD MI300 accelerators in 2015 by a team at Intel [1].",
        evidence,
    )
    assert verdict.text == "FlashAttention never writes the attention matrix to high bandwidth memory [1]."
    assert [(d.render(), d.reason) for d in verdict.dropped] == [
        ("It was first released for AMD MI300 accelerators in 2015 by a team at Intel [1].", UNSUPPORTED)
    ]


def test_a_made_up_marker_never_survives(verifier, evidence):
    verdict = verifier.check("FlashAttention splits queries, keys and values into blocks [7].", evidence)
    assert "[7]" not in verdict.text
    assert verdict.dropped and verdict.dropped[0].reason == NO_SOURCE


def test_a_made_up_marker_next_to_a_real_one_is_removed(verifier, evidence):
    verdict = verifier.check("FlashAttention splits queries, keys and values into blocks that fit in SRAM [1][9].", evidence)
    assert verdict.text == "FlashAttention splits queries, keys and values into blocks that fit in SRAM [1]."


def test_a_sentence_citing_the_wrong_source_is_kept_under_the_one_that_supports_it(verifier, evidence):
    verdict = verifier.check("vLLM stores the key and value cache in fixed-size blocks with PagedAttention [1].", evidence)
    assert verdict.text == "vLLM stores the key and value cache in fixed-size blocks with PagedAttention [2]."
    assert verdict.kept[0].corrected


def test_a_sentence_saying_the_sources_do_not_cover_it_is_a_decline_not_an_answer(verifier, evidence):
    verdict = verifier.check("The sources do not mention how FlashAttention avoids HBM writes [1].", evidence)
    assert not verdict.kept
    assert verdict.declined and verdict.dropped[0].reason == DECLINED


def test_a_sentence_cut_off_by_the_length_limit_is_dropped(verifier, evidence):
    verdict = verifier.check("FlashAttention computes exact attention without writing the matrix to HBM [1]. It then uses an online", evidence)
    assert verdict.text == "FlashAttention computes exact attention without writing the matrix to HBM [1]."
    assert verdict.dropped[0].reason == CUT_OFF


def test_a_marker_written_after_the_full_stop_stays_with_its_sentence():
    claims = split_claims("FlashAttention tiles attention through SRAM. [1] PagedAttention uses blocks. [2]")
    assert [(c.text, c.cited) for c in claims] == [
        ("FlashAttention tiles attention through SRAM", [1]), ("PagedAttention uses blocks", [2])
    ]


def test_an_answer_cut_off_loses_only_its_unfinished_sentence(verifier, evidence):
    verdict = verifier.attribute(
        "FlashAttention computes exact attention without writing the matrix to HBM [1]. It splits queries, keys "
        "and values into blocks that fit in on-chip SRAM. The", evidence)
    assert verdict.text == ("FlashAttention computes exact attention without writing the matrix to HBM [1]. "
                            "It splits queries, keys and values into blocks that fit in on-chip SRAM [1].")
    assert [(d.text, d.reason) for d in verdict.dropped] == [("The", CUT_OFF)]


def test_a_marker_inside_a_sentence_moves_to_its_end():
    claims = split_claims("MQA keeps one key-value head [1], while GQA keeps a few [2]. The formula [1] gives the size.")
    assert [(c.text, c.cited) for c in claims] == [
        ("MQA keeps one key-value head, while GQA keeps a few", [1, 2]), ("The formula gives the size.", [1])
    ]


def test_a_marker_inside_a_sentence_moves_to_its_end_when_no_marker_follows():
    claims = split_claims("The formula [2] gives the size. Larger batches use more of the GPU. It can overfl")
    assert [(c.text, c.cited) for c in claims] == [
        ("The formula gives the size.", [2]), ("Larger batches use more of the GPU.", []), ("It can overfl", [])
    ]


def test_the_word_pointing_at_a_marker_inside_a_sentence_goes():
    claims = split_claims("The formula in [2] provides the size of the KV cache [2].")
    assert [(c.text, c.cited) for c in claims] == [("The formula provides the size of the KV cache", [2])]


def test_a_stray_full_stop_after_a_marker_does_not_end_the_sentence():
    claims = split_claims("The Hopper In-Depth post [1]. states that the engine is a library for Transformers [2].")
    assert [(c.text, c.cited) for c in claims] == [
        ("The Hopper In-Depth post states that the engine is a library for Transformers", [1, 2])]


def test_control_tokens_never_reach_the_text():
    assert strip_control("It tiles [1].<|im_end|><|im_start|>assistant\n</s>") == "It tiles [1].assistant\n"
    assert [c.text for c in split_claims("It tiles SRAM blocks [1].<|im_end|>")] == ["It tiles SRAM blocks"]


def test_a_sentence_that_only_restates_the_question_is_no_answer(verifier, evidence):
    verdict = verifier.check("FlashAttention avoids writing the attention matrix to HBM [1].", evidence)
    assert not verdict.kept and verdict.dropped[0].reason == RESTATES


# --- freely written answers: post-hoc attribution -----------------------------------------------------------


def test_a_sentence_without_a_marker_is_attributed_to_the_source_that_supports_it(verifier, evidence):
    verdict = verifier.attribute("It splits queries, keys and values into blocks that fit in on-chip SRAM.", evidence)
    assert [c.sources for c in verdict.kept] == [[1]]


def test_a_wrong_marker_is_replaced_by_the_supporting_source(verifier, evidence):
    verdict = verifier.attribute("PagedAttention stores the key and value cache in fixed-size blocks [1].", evidence)
    assert [c.sources for c in verdict.kept] == [[2]]
    assert verdict.kept[0].corrected


def test_a_kept_sentence_carries_the_evidence_sentence_that_supports_it(verifier, evidence):
    verdict = verifier.attribute("FlashAttention uses an online softmax over blocks that fit in SRAM [1].", evidence)
    assert verdict.kept[0].quote == FLASH[1]


def test_a_number_its_passage_does_not_hold_drops_the_sentence(verifier, evidence):
    verdict = verifier.attribute("FlashAttention splits queries, keys and values into 128 blocks in SRAM [1].", evidence)
    assert not verdict.kept
    assert verdict.dropped[0].reason == BORROWED.format(facts="128")


def test_a_name_taken_from_the_question_needs_no_passage(verifier, evidence):
    verdict = verifier.attribute("With FlashAttention, queries, keys and values are split into blocks that fit in "
                                 "on-chip SRAM [1].", evidence)
    assert verdict.kept


def test_a_sentence_that_only_points_at_a_source_is_dropped(verifier, evidence):
    verdict = verifier.attribute("An example of blocks that fit in on-chip SRAM is [1].", evidence)
    assert [d.reason for d in verdict.dropped] == [DANGLING]


def test_a_claim_whose_marker_stands_for_its_object_keeps_the_claim_without_the_pointer(verifier, evidence):
    verdict = verifier.attribute("FlashAttention splits queries, keys and values into blocks that fit in on-chip "
                                 "SRAM, as shown in [1].", evidence)
    assert verdict.text == "FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM [1]."


def test_a_pointer_after_a_phrase_with_no_verb_is_still_dropped(verifier, evidence):
    verdict = verifier.attribute("An illustration of the tiling of exact attention in on-chip SRAM, as shown in [1].",
                                 evidence)
    assert [d.reason for d in verdict.dropped] == [DANGLING]


def test_a_pointer_with_too_little_before_it_is_still_dropped(verifier, evidence):
    verdict = verifier.attribute("The blocks are described in [1].", evidence)
    assert [d.reason for d in verdict.dropped] == [DANGLING]


def test_a_sentence_announcing_what_followed_it_on_its_page_is_dropped(verifier, evidence):
    verdict = verifier.attribute("FlashAttention splits queries, keys and values into blocks that fit in on-chip "
                                 "SRAM [1]. The figure below shows the blocks in on-chip SRAM [1].", evidence)
    assert [d.reason for d in verdict.dropped] == [POINTS_AHEAD]
    assert len(verdict.kept) == 1


def test_a_free_sentence_cut_off_by_the_length_limit_is_dropped(verifier, evidence):
    verdict = verifier.attribute("FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM [1]. "
                                 "It then uses an online", evidence)
    assert [d.reason for d in verdict.dropped] == [CUT_OFF]


def test_at_most_the_configured_number_of_sentences_is_kept(verifier, evidence):
    text = ("FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM. "
            "PagedAttention stores the key and value cache in fixed-size blocks.")
    assert len(verifier.attribute(text, evidence, max_sentences=1).kept) == 1


# An index where "GPU" is on every page and "lecture" on one: what makes a question's word specific.
PAGES = BM25Index.build([
    "FlashAttention tiles attention on the GPU.", "PagedAttention manages the GPU cache.",
    "Matmul kernels on the GPU.", "A GPU roofline.", "The lecture notes on CUDA streams and the GPU.",
])


@pytest.fixture(scope="module")
def off_subject(verifier: Verifier) -> Verifier:
    """The module's verifier with the off-subject check over PAGES."""
    cfg = verifier.cfg.model_copy(update={"verify_question_word_max_share": 0.3})  # "lecture": 1 page of 5
    return Verifier(verifier.embedder, cfg, PAGES.document_share)


def answered(verifier: Verifier, question: str, sources: list[EvidenceSource], text: str) -> Verdict:
    return verifier.attribute(text, Evidence(question, sources))


TILES = "FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM [1]."


def test_a_sentence_that_gives_the_questions_named_subject_a_passage_about_something_else_is_dropped(
        off_subject, evidence):
    verdict = answered(off_subject, "How does ThunderKittens tile attention?", evidence.sources,
                       TILES.replace("FlashAttention", "ThunderKittens"))
    assert verdict.kept == []
    assert verdict.dropped[0].reason == OFF_SUBJECT.format(words="“ThunderKittens”", them="it")


def test_two_ordinary_words_of_the_question_its_passage_lacks_drop_the_sentence(off_subject, evidence):
    verdict = answered(off_subject, "What does the lecture teach about tiling?", evidence.sources,
                       f"The lecture teaches that {TILES}")
    assert verdict.kept == []


def test_a_name_the_pages_markdown_escapes_is_the_name_the_model_writes(off_subject):
    resources = {r.id: r for r in load_corpus()[1]}
    page = ("KernelBench introduces a new evaluation metric fast\\_p, which measures the share of generated kernels "
            "that are correct and faster than a threshold.")
    sources = [EvidenceSource(1, ResourceHit(resources["vllm"], 1.0), [EvidenceSentence(page, 0, (0, 0), 1.0)])]
    verdict = answered(off_subject, "What does the fast_p metric measure?", sources,
                       "The fast_p metric measures the share of generated kernels that are correct and faster than a "
                       "threshold [1].")
    assert len(verdict.kept) == 1


def test_one_ordinary_word_the_question_frames_itself_with_needs_no_passage(off_subject, evidence):
    verdict = answered(off_subject, "What is the impact of tiling in FlashAttention?", evidence.sources,
                       f"The impact is that {TILES}")
    assert len(verdict.kept) == 1


def test_an_inflected_ordinary_word_the_question_frames_itself_with_needs_no_passage(off_subject, evidence):
    verdict = answered(off_subject, "Why does tiling keep FlashAttention busier?", evidence.sources,
                       f"It is busier because {TILES}")
    assert len(verdict.kept) == 1


def test_an_inflection_of_an_ordinary_word_is_ordinary_and_a_name_is_not():
    words = {"busy", "batch", "saturate", "big"}
    assert all(is_ordinary(w, words) for w in ("busier", "batching", "saturated", "bigger"))
    assert not is_ordinary("DPX", words)


def test_the_questions_common_words_need_no_passage(off_subject, evidence):
    verdict = answered(off_subject, "How does FlashAttention tile attention on a GPU?", evidence.sources,
                       f"On a GPU, {TILES}")
    assert len(verdict.kept) == 1


def test_a_terms_document_share_is_the_share_of_rows_holding_it():
    assert PAGES.document_share(["gpu", "lectur", "zzz"]) == {"gpu": 1.0, "lectur": 0.2, "zzz": 0.0}


def test_numbers_and_names_are_read_as_written():
    assert numbers("It reached 36.9x on 1,024 tokens.") == {"36.9", "1024"}
    assert names("FlashAttention-2 runs on the H100 with FP8, said Tri Dao.") >= {"FlashAttention-2", "H100", "FP8", "Tri", "Dao"}


def test_a_plural_acronym_matches_its_singular():
    assert missing_facts("Both run on GPUs.", "It runs on one GPU.") == []


def test_a_later_sentence_that_says_an_earlier_one_again_in_other_words_is_left_out(verifier, evidence):
    text = ("FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM. "
            "PagedAttention stores the key and value cache in fixed-size blocks. "
            "FlashAttention divides the queries, keys and values into blocks that fit in on-chip SRAM.")
    assert [c.text for c in verifier.attribute(text, evidence).kept] == [
        "FlashAttention splits queries, keys and values into blocks that fit in on-chip SRAM.",
        "PagedAttention stores the key and value cache in fixed-size blocks.",
    ]


def test_a_near_copy_that_names_something_else_is_not_a_repeat(verifier):
    claims = split_claims("FlashAttention splits the keys into blocks that fit in on-chip SRAM. "
                          "FlashAttention-2 splits the keys into blocks that fit in on-chip SRAM.")
    vecs = verifier.embedder.embed_documents([c.text for c in claims])
    assert len(list(distinct(claims, vecs))) == 2


# --- a number stays with the version its passage says it of ------------------------------------------

VERSIONS = (
    "FlashAttention is still not as fast as GEMM, reaching only 25-40% of the theoretical maximum FLOPs/s.",
    "FlashAttention-2 reaches 50-73% of the theoretical maximum FLOPs/s on A100.",
)


def source_of(*sents: str) -> EvidenceSource:
    resource = load_corpus()[1][0]
    return EvidenceSource(1, ResourceHit(resource, 1.0),
                          [EvidenceSentence(text, 0, (0, i), 1.0, position=i) for i, text in enumerate(sents)])


def test_a_number_said_of_another_version_is_unbound():
    assert unbound_numbers("FlashAttention-2 reaches about 25-40% of the maximum FLOPs/s.", source_of(*VERSIONS)) == (
        "FlashAttention-2", ["25", "40"])


def test_a_number_said_of_its_own_version_is_bound():
    assert unbound_numbers("FlashAttention-2 reaches 50-73% of the maximum FLOPs/s.", source_of(*VERSIONS))[1] == []


def test_a_number_in_a_sentence_that_refers_back_to_the_version_is_bound():
    source = source_of("FlashAttention-2 reworks the parallelism.", "It reaches 50-73% of the maximum FLOPs/s on A100.")
    assert unbound_numbers("FlashAttention-2 reaches 50-73% of the maximum.", source)[1] == []


def test_a_version_the_passage_never_names_binds_nothing():
    assert unbound_numbers("FlashAttention-3 reaches 25-40% of the maximum.", source_of(*VERSIONS)) == ("", [])


LISTED = "The new kernel gives a 3x speedup on GPT-2 (length 1K), and a 2.4x speedup on long-range arena (length 4K)."


def test_a_figure_listed_for_another_item_of_the_sentence_is_unbound():
    assert unbound_numbers("The kernel trains GPT-2 faster by 2.4x.", source_of(LISTED)) == ("GPT-2", ["2.4"])


def test_a_figure_listed_in_the_named_item_is_bound():
    assert unbound_numbers("The kernel trains GPT-2 3x faster.", source_of(LISTED))[1] == []


def test_a_sentence_with_one_figure_binds_it_to_any_name_it_says():
    source = source_of("On GPT-2 the new kernel, written in Triton, gives a 2.4x speedup.")
    assert unbound_numbers("The kernel trains GPT-2 faster by 2.4x.", source)[1] == []


def evidence_of(question: str, *sents: str) -> Evidence:
    """One source holding `sents`, in page order, for `question`."""
    return Evidence(question, [source_of(*sents)])


def test_a_sentence_that_moves_a_number_to_another_version_is_dropped(verifier):
    evidence = evidence_of("What share of peak FLOPs does FlashAttention-2 reach?", *VERSIONS)
    verdict = verifier.attribute("FlashAttention-2 reaches about 25-40% of the theoretical maximum FLOPs/s [1].", evidence)
    assert not verdict.kept
    assert verdict.dropped[0].reason == MISBOUND.format(facts="25, 40", name="FlashAttention-2")


def test_a_number_said_of_a_later_version_is_unbound():
    source = source_of("FlashAttention-2 achieves only 35% utilization on the H100 GPU.",
                       "FlashAttention-3 reaches 740 TFLOPS in FP16.")
    assert unbound_numbers("FlashAttention-3 achieves 35% utilization on the H100.", source) == ("FlashAttention-3", ["35"])


def test_a_number_said_of_no_family_member_is_left_alone():
    source = source_of("Our kernel beats cuBLAS by 7% for N=4096.", "DeepSeek-V2 is a mixture-of-experts model.")
    assert unbound_numbers("DeepSeek-V2 beats cuBLAS by 7% for N=4096.", source)[1] == []


def test_a_name_without_a_family_base_binds_nothing():
    source = source_of("The A100 reaches 312 TFLOPS.", "The H100 has a tensor memory accelerator.")
    assert unbound_numbers("The H100 reaches 312 TFLOPS.", source) == ("", [])


# --- a number counts what its passage says it counts ----------------------------------------------------

LIMITS = ("The register file size is 64K 32-bit registers per SM.",
          "The maximum number of registers per thread is 255.",
          "The maximum number of thread blocks per SM is 32 for devices of compute capability 9.0.")


def test_what_a_number_counts_is_read_from_both_phrasings():
    assert quantities("The maximum number of registers per thread is 255.") == {"255": terms("registers")}
    assert quantities("An SM holds up to 32 thread blocks.")["32"] == terms("thread blocks")


def test_a_version_or_a_label_number_counts_nothing():
    assert quantities("FlashAttention-2 changed the mask; Tier 12 posts follow.") == {}


def test_a_number_the_passage_says_of_another_quantity_is_miscounted():
    assert miscounted("The maximum number of threads per block is 255.", source_of(*LIMITS)) == ["255"]
    assert miscounted("We can keep up to 255 threads active on one multiprocessor.", source_of(*LIMITS)) == ["255"]


def test_a_number_said_of_its_own_quantity_is_not_miscounted():
    assert miscounted("Each thread can use up to 255 registers.", source_of(*LIMITS)) == []
    assert miscounted("An SM can hold 32 blocks at once.", source_of(*LIMITS)) == []


def test_a_number_whose_passage_does_not_say_what_it_counts_is_left_alone():
    assert miscounted("The kernel uses 255 threads.", source_of("The best block size we found was 255.")) == []


def test_a_sentence_that_counts_the_wrong_thing_is_dropped(verifier):
    evidence = evidence_of("How many registers can a Hopper thread use?", *LIMITS)
    verdict = verifier.attribute("The maximum number of threads per block on Hopper is 255 [1].", evidence)
    assert not verdict.kept
    assert verdict.dropped[0].reason == MISCOUNTED.format(facts="255")


# --- a name misspelt by one letter takes the sources' spelling --------------------------------------------


def test_a_name_one_letter_off_a_source_name_takes_its_spelling():
    assert respelled("The Salukova post reaches 80% of peak.", "Salykova's SGEMM post reaches 80% of peak.") == (
        "The Salykova post reaches 80% of peak.")


def test_a_short_name_one_letter_off_is_left_as_written():
    assert respelled("The Mambo paper is fast.", "Mamba is a state space model.") == "The Mambo paper is fast."


def test_a_name_with_two_near_spellings_is_left_as_written():
    assert respelled("Kowalsky wrote it.", "Kowalski and Kowalska wrote it.") == "Kowalsky wrote it."


def test_a_misspelt_name_is_repaired_not_dropped(verifier):
    evidence = evidence_of("How fast is the SGEMM kernel?",
                           "Salykova's SGEMM kernel reaches 80% of the peak FLOPs on the RTX 3090.")
    verdict = verifier.attribute("The Salukova SGEMM kernel reaches 80% of the peak FLOPs on the RTX 3090 [1].", evidence)
    assert [c.text for c in verdict.kept] == ["The Salykova SGEMM kernel reaches 80% of the peak FLOPs on the RTX 3090"]


# --- a clause from nowhere appended to a supported sentence ------------------------------------------------


def test_an_appended_clause_none_of_whose_words_the_passage_holds_is_struck(verifier, evidence):
    verdict = verifier.attribute(
        "FlashAttention splits queries, keys and values into blocks that fit in SRAM, and the gluten network "
        "holds the gas [1].", evidence)
    assert [c.text for c in verdict.kept] == ["FlashAttention splits queries, keys and values into blocks that fit in SRAM"]
    assert [(d.render(), d.reason) for d in verdict.dropped] == [("and the gluten network holds the gas [1].", STRAY_CLAUSE)]


def test_a_joined_clause_the_passage_holds_stays(verifier, evidence):
    verdict = verifier.attribute(
        "FlashAttention splits queries, keys and values into blocks that fit in SRAM, and it uses an online "
        "softmax [1].", evidence)
    assert [c.text for c in verdict.kept] == [
        "FlashAttention splits queries, keys and values into blocks that fit in SRAM, and it uses an online softmax"]


def test_a_sentence_whose_own_clause_comes_from_nowhere_is_dropped_whole(verifier, evidence):
    verdict = verifier.attribute(
        "The gluten network holds the gas while dough proofs, and FlashAttention splits queries, keys and values "
        "into blocks that fit in SRAM [1].", evidence)
    assert not verdict.kept and verdict.dropped[0].reason == STRAY


def test_striking_a_clause_keeps_the_rest_as_written():
    assert without_clauses("A tiles x and the B loads y; the gluten holds gas.", ["the gluten holds gas."]) == (
        "A tiles x and the B loads y.")


# --- the key passage ------------------------------------------------------------------------------------------------


def test_the_key_passage_is_the_most_relevant_sentence_no_kept_sentence_says(verifier, evidence):
    kept = verifier.attribute("It loads blocks of queries, keys and values into on-chip SRAM [1].", evidence).kept
    assert kept
    assert verifier.key_passage(evidence, kept) == (1, FLASH[0])


def test_no_key_passage_when_a_kept_sentence_already_says_it(verifier, evidence):
    kept = verifier.attribute("FlashAttention computes exact attention without writing the full attention matrix to "
                              "GPU high bandwidth memory [1].", evidence).kept
    assert kept
    assert verifier.key_passage(evidence, kept) is None


def test_no_key_passage_when_the_best_sentence_is_not_about_the_question(verifier, evidence):
    far = Evidence("What is the price of a cup of coffee in Lisbon?", evidence.sources)
    assert verifier.key_passage(far, []) is None


def test_no_key_passage_when_it_is_turned_off(verifier, evidence):
    verifier.cfg.key_passage = False
    try:
        assert verifier.key_passage(evidence, []) is None
    finally:
        verifier.cfg.key_passage = True


def test_no_key_passage_when_the_best_sentence_does_not_stand_alone(verifier, evidence):
    first = evidence.sources[0]
    only_it = EvidenceSource(1, first.hit, [EvidenceSentence(FLASH[1], 0, (0, 1), 1.0)])
    assert verifier.key_passage(Evidence(QUESTION, [only_it]), []) is None


MADE_UP = "FlashAttention avoids HBM writes with a 4-bit codebook of 512 entries [1]."
SPLITS = "queries, keys and values into blocks that fit in on-chip SRAM [1]."


def test_a_sentence_leaning_on_a_dropped_one_names_the_subject_itself(verifier, evidence):
    verdict = verifier.attribute(f"{MADE_UP} It splits {SPLITS}", evidence)
    assert verdict.text == f"FlashAttention splits {SPLITS}"


def test_a_sentence_leaning_on_a_kept_one_is_left_as_written(verifier, evidence):
    verdict = verifier.attribute(f"FlashAttention computes exact attention without writing the attention matrix to "
                                 f"HBM [1]. It splits {SPLITS}", evidence)
    assert verdict.kept[1].text.startswith("It splits")


def test_a_sentence_standing_for_a_dropped_claim_is_dropped_with_it(verifier, evidence):
    verdict = verifier.attribute(f"{MADE_UP} This allows it to split {SPLITS}", evidence)
    assert verdict.kept == []
    assert verdict.dropped[1].reason == LEANS_ON_DROPPED


def test_with_reference_resolution_off_a_leaning_sentence_is_left_as_written(verifier, evidence):
    cfg = verifier.cfg.model_copy(update={"verify_resolve_references": False})
    verdict = Verifier(verifier.embedder, cfg).attribute(f"{MADE_UP} It splits {SPLITS}", evidence)
    assert verdict.text == f"It splits {SPLITS}"
