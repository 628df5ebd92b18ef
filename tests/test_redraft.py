"""The second draft: when no sentence of the model's answer holds against the passages, the model writes again
from the most relevant passages alone, and that draft is checked the same way.

The index, evidence and check are real (packaged embedder, real FAISS); the model's drafts are scripted at the
backend's edge, because which wrong sentence a 1.5B model writes cannot be forced: the first draft is an
invented claim, the second restates the narrowed evidence's best passage (the real model's behaviour on both
is measured in bench/answer.py and bench/answer_quality.py, docs/answers.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.index.corpus import assistant_on

from assistant.chain import UNSUPPORTED_NOTE, Assistant, Query, pointer_lead
from assistant.evidence import Evidence, EvidenceSentence, EvidenceSource, estimate_tokens

QUESTION = "How does FlashAttention avoid writing the attention matrix to HBM?"
INVENTED = "FlashAttention stores the whole attention matrix on the host disk between layers [1]."


@pytest.fixture(scope="module")
def assistant(tmp_path_factory: pytest.TempPathFactory) -> Assistant:
    return assistant_on(tmp_path_factory.mktemp("redraft-home"))


class Drafts:
    """The scripted model: each call gets the evidence it was given and writes the next scripted text
    (a callable of that evidence)."""

    def __init__(self, *texts: Any) -> None:
        self.texts = list(texts)
        self.evidence: list[Evidence] = []

    def __call__(self, backend: str, evidence: Evidence, question: str, timing: Any) -> Iterator[str]:
        self.evidence.append(evidence)
        text = self.texts.pop(0)
        yield text(evidence) if callable(text) else text


def best_passage(evidence: Evidence) -> str:
    """The narrowed evidence's most relevant passage, restated as a cited sentence."""
    source, sentence = evidence.ranked()[0]
    return f"{sentence.text.rstrip('.')} [{source.n}]."


@pytest.fixture
def scripted(assistant: Assistant, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    cfg = assistant.settings.llm
    kept = cfg.redraft_tokens
    cfg.redraft_tokens = 60  # the fixture's evidence is short: the narrowed one must be shorter still

    def script(*texts: Any) -> Drafts:
        drafts = Drafts(*texts)
        monkeypatch.setattr(assistant, "_model_stream", drafts)
        return drafts

    yield script
    cfg.redraft_tokens = kept


def test_when_no_sentence_holds_a_second_draft_from_the_closest_passages_is_checked_and_shown(assistant, scripted):
    drafts = scripted(INVENTED, best_passage)
    events = list(assistant.stream(Query(QUESTION, backend="embedded")))
    final = events[-1].answer
    assert [e.kind for e in events].count("redraft") == 1
    standing = next(e.answer for e in events if e.kind == "redraft")  # the answer without the second draft
    assert standing.fallback == UNSUPPORTED_NOTE and standing.text.startswith(pointer_lead(UNSUPPORTED_NOTE))
    assert not final.fallback and final.text.startswith(best_passage(drafts.evidence[1]).split(" [")[0])
    assert final.draft == INVENTED and final.redraft == best_passage(drafts.evidence[1])
    assert [d.text for d in final.dropped] == [INVENTED]  # the first draft's sentence is still shown struck


def test_the_second_draft_times_its_writing_but_not_its_reading(assistant, scripted, monkeypatch):
    """Its prompt starts with passages the first draft read (llama.cpp keeps them), so its first token would
    time a fraction of what it counts and inflate the reading speed the next budget is planned with."""
    observed: list[int] = []
    monkeypatch.setattr(assistant.speed, "observe", lambda key, prompt_tokens, *rest: observed.append(prompt_tokens))
    scripted(INVENTED, best_passage)
    assistant.ask(Query(question=QUESTION, backend="embedded"))
    assert len(observed) == 2 and observed[0] >= 40 and observed[1] == 0


def test_the_second_draft_reads_only_the_most_relevant_passages_under_the_same_numbers(assistant, scripted):
    drafts = scripted(INVENTED, best_passage)
    assistant.ask(Query(QUESTION, backend="embedded"))
    whole, narrow = drafts.evidence
    assert narrow.tokens < whole.tokens
    assert narrow.ranked()[0][1] == whole.ranked()[0][1]
    numbers = {s.n: s.resource.id for s in whole.sources}
    assert all(numbers[s.n] == s.resource.id for s in narrow.sources)


def test_a_large_second_draft_budget_still_reads_less_than_the_first_draft(assistant, scripted):
    drafts = scripted(INVENTED, best_passage)
    assistant.settings.llm.redraft_tokens = 10_000  # half the evidence binds
    assistant.ask(Query(QUESTION, backend="embedded"))
    whole, narrow = drafts.evidence
    assert narrow.tokens < whole.tokens


def test_when_the_second_draft_fails_too_the_answer_points_at_the_guides_resources(assistant, scripted):
    scripted(INVENTED, INVENTED.replace("host disk", "tape drive"))
    final = assistant.ask(Query(QUESTION, backend="embedded"))
    assert final.fallback == UNSUPPORTED_NOTE
    assert len(final.dropped) == 2 and final.redraft


def test_no_second_draft_when_the_model_said_the_sources_do_not_cover_it(assistant, scripted):
    drafts = scripted("The sources do not cover how FlashAttention avoids it.", best_passage)
    events = list(assistant.stream(Query(QUESTION, backend="embedded")))
    assert "redraft" not in [e.kind for e in events] and len(drafts.evidence) == 1


def test_no_second_draft_when_it_is_turned_off(assistant, scripted):
    drafts = scripted(INVENTED, best_passage)
    assistant.settings.llm.redraft_tokens = 0
    final = assistant.ask(Query(QUESTION, backend="embedded"))
    assert len(drafts.evidence) == 1 and final.fallback == UNSUPPORTED_NOTE and not final.redraft


def sentence(text: str, relevance: float, position: int) -> EvidenceSentence:
    return EvidenceSentence(text, 0, (0, position), relevance, f"c:{position}", position)


def test_narrowed_evidence_keeps_whole_passages_best_first_within_the_budget(assistant):
    hit = assistant.searcher.search(QUESTION, k=1)[0]
    run = [sentence("Tiles of Q, K and V are loaded into on-chip SRAM.", 0.9, 0),
           sentence("The softmax is computed block by block with running statistics.", 0.5, 1)]
    far = [sentence("Unrelated remarks about the author's other projects follow here.", 0.2, 5)]
    evidence = Evidence(QUESTION, [EvidenceSource(2, hit, run + far)], tokens=120, best_cosine=0.9)
    budget = estimate_tokens(hit.resource.title) + 2 + estimate_tokens(" ".join(s.text for s in run))
    narrow = evidence.narrowed(budget)
    assert [s.text for s in narrow.sources[0].sentences] == [s.text for s in run]  # the best passage, whole
    assert narrow.sources[0].n == 2 and narrow.tokens <= budget and narrow.best_cosine == 0.9


def test_narrowed_evidence_always_keeps_the_best_passage_even_over_the_budget(assistant):
    hit = assistant.searcher.search(QUESTION, k=1)[0]
    run = [sentence("Tiles of Q, K and V are loaded into on-chip SRAM and never written back.", 0.9, 0)]
    narrow = Evidence(QUESTION, [EvidenceSource(1, hit, run)], tokens=30).narrowed(5)
    assert [s.text for s in narrow.sources[0].sentences] == [run[0].text]
