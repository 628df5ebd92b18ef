"""The answer chain: follow-up rewrite → retrieve (with filters) → outcome (answer / weak / out of scope) →
evidence (passages of the top resources' page text, within a budget set by the backend's measured reading and
writing speeds, assistant/speed.py) →
the model writes 2-4 sentences freely → each sentence is attributed to the passage that supports it, or
dropped with the reason → the answer with its citations, each carrying the sentence that supports it.

The evidence is both the LLM's context and the extractive answer, so what the model read is what the reader
can check. Sources are shown at once, the draft streams, and the verified answer replaces the draft. When the
page text does not answer (no generated sentence holds, or the top resources have no page text), the answer
says so and points at the guide's resources on the subject, with their place, tier and whether their page
text is indexed: a borrowed, unrelated sentence would be worse. Questions that ask what to read go to the
reading planner instead.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.runnables import RunnableLambda

from assistant import prompt
from assistant.evidence import Evidence, EvidenceSelector, card_sentence, estimate_tokens
from assistant.extractive import extractive_answer, quote
from assistant.fragments import page_of
from assistant.conversation import Resolved, Turn, Vocabulary, conversation_order, resolve
from assistant.planner import (
    NextReads,
    default_next_reads,
    next_reads_for,
)
from assistant.profile import Profile
from assistant.records import Answer, Citation, Dropped
from assistant.sentences import is_sentence_start, points_ahead
from assistant.speed import PromptSpeed, evidence_budget, lead_budget
from assistant.verify import Verdict, Verifier, strip_control
from core.records import Resource, place_label
from core.settings import Settings
from index.records import ResourceHit

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
MAX_EVIDENCE_RESOURCES = 8
_MARKER = re.compile(r"\[(\d{1,2})\]")
WEAK_NOTE = "weak match: the guide's closest sources may not answer this exactly"
NOT_ANSWERED = "The indexed page text does not answer this directly."
# when the model's sentences failed the check, the passages may still hold the answer: say only what is known
NOT_HELD = "No answer written from the indexed passages held up against them."
NO_TEXT_NOTE = "the top resources have no indexed page text; the answer points at them"
CARD_FIRST = "The closest resource in the guide is known here only by its catalog card: its page text is not indexed."
CARD_FIRST_NOTE = "the best match has no indexed page text; the answer points at the guide's resources"
FAR_NOTE = "the indexed passages found are not about the question; the answer points at the guide's resources"
DECLINED_NOTE = "the model found no answer in these passages; the answer points at the guide's resources"
UNSUPPORTED_NOTE = "no generated sentence was supported by the passages; the answer points at the guide's resources"
KEY_PASSAGE_LEAD = "In the source's words:"  # before the quoted key passage (Verifier.key_passage)
PROMPT_OVERHEAD_TOKENS = 16  # "Question:", the turn's end and the assistant's start around the evidence
POINTER_RESOURCES = 3
LEAD_HELD_WORDS = 3  # the lead is shown from its fourth word: a shorter one is no sentence to go on from
LEAD_SHARE = 0.8  # a lead passage this close to the whole evidence saves too little to pay for the second read
__all__ = ["Answer", "AnswerEvent", "Assistant", "Query", "card_sentence", "is_next_question"]


@dataclass
class AnswerEvent:
    """Streamed to a UI: `sources` (the citations; with an LLM backend the text is still empty), then the
    draft's `token`s, then the `final` verified answer. `redraft`: no sentence of the draft held and a second
    one starts (a UI clears the draft shown); its answer is the one that stands without it (the pointer)."""

    kind: str
    answer: Answer | None = None
    token: str = ""


@dataclass
class DraftTiming:
    """What one draft read before its first piece (`read_tokens` of evidence) and how long it paused to read
    the rest after a lead sentence (`pause_s`): the speed estimates must time reading and writing apart."""

    lead_budget: int | None
    read_tokens: int
    pause_s: float = 0.0
    reads_anew: bool = True  # False: the prompt starts with passages just read (kept state), no reading speed


@dataclass
class _Draft:
    """The text of one draft as it streams (a generator's events are the tokens; this keeps their sum)."""

    text: str = ""


@dataclass
class Query:
    question: str
    history: list[Turn] = field(default_factory=list)
    tier: int | None = None
    topic: str | None = None
    kind: str | None = None
    unread_only: bool = False
    backend: str | None = None  # None: settings.llm.backend
    k: int = 3
    route: str = ""  # "search" or "next" when the caller has decided (assistant/guide.py); "": decided here


def is_next_question(question: str) -> bool:
    """Does the learner ask what to read, rather than about a concept? (assistant/route.py decides)"""
    return default_next_reads().is_next(question)


def pointer_lead(fallback: str) -> str:
    """The pointer answer's first sentence for why it is shown: the passages found are far from the question
    or the model said they do not cover it (the text does not answer it), or the model's sentences failed the
    check (the closest passage may still answer it, so nothing is claimed about the text)."""
    return NOT_HELD if fallback == UNSUPPORTED_NOTE else NOT_ANSWERED


class Assistant:
    """Answers questions over one index; cheap to call, expensive parts (index, LLM) loaded once."""

    def __init__(self, settings: Settings, searcher: Any, resources: list[Resource] | None = None,
                 profile: Profile | None = None) -> None:
        self.settings = settings
        self.searcher = searcher
        self.resources = resources if resources is not None else searcher.resources
        self.profile = profile if profile is not None else Profile(settings.profile_file)
        self.retrieve = RunnableLambda(self._rewrite) | RunnableLambda(self._retrieve)
        self.selector = EvidenceSelector(searcher)
        bm25 = getattr(searcher, "bm25", None)
        self.verifier = Verifier(searcher.embedder, settings.llm, bm25.document_share if bm25 is not None else None)
        self.next_reads: NextReads = next_reads_for(settings, self.resources, getattr(searcher, "embedder", None))
        self.speed = PromptSpeed(settings.prompt_speed_file)
        self._vocabulary: Vocabulary | None = None
        self._with_text: set[str] | None = None

    @property
    def vocabulary(self) -> Vocabulary:
        """The guide's naming words (titles, short forms, non-English corpus words) for follow-ups; built once."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary.from_searcher(self.searcher, self.resources)
        return self._vocabulary

    # --- public ------------------------------------------------------------------------------

    def ask(self, query: Query) -> Answer:
        return final_answer(self.stream(query))

    def stream(self, query: Query) -> Iterator[AnswerEvent]:
        asked = time.perf_counter()
        query.question = _clean_question(query.question)
        backend = query.backend or self.settings.llm.backend
        _, resolved = self._rewrite(query)
        # A follow-up is routed by what it asks in context: "more on [2]" is no reading-plan request.
        if query.route == "next" or not query.route and self.next_reads.is_next(
                resolved.standalone if resolved.followup else query.question):
            answer = self._next(query)
            yield AnswerEvent("sources", answer)
            yield AnswerEvent("final", answer)
            return
        standalone, hits = self._retrieve((query, resolved))
        outcome = self._outcome(standalone, hits)
        if outcome == "out_of_scope" or not hits:
            answer = self._abstain(query, standalone, hits)
            yield AnswerEvent("sources", answer)
            yield AnswerEvent("final", answer)
            return
        weak = outcome == "weak"
        if hits[0].resource.id not in self.resources_with_text():
            # the best match is known only by its catalog card: text from the resources below it answers another
            # question ("NVIDIA's write-up on cuDNN's fused attention" got a sentence about matmul kernels)
            answer = _with(self._pointer(query, standalone, hits, self._card_first_evidence(standalone, hits), weak,
                                         backend, CARD_FIRST), fallback=CARD_FIRST_NOTE)
            yield AnswerEvent("sources", answer)
            yield AnswerEvent("final", answer)
            return
        cfg = self.settings.llm
        depth = max(cfg.evidence_resources, min(query.k, MAX_EVIDENCE_RESOURCES))
        evidence = self.selector.select(standalone, hits[:depth], cfg, self.evidence_budget(standalone, backend))
        if not evidence.sources or evidence.best_cosine < cfg.answer_min_cosine:
            note = FAR_NOTE if evidence.sources else NO_TEXT_NOTE
            answer = _with(self._pointer(query, standalone, hits, None, weak, backend), fallback=note)
            yield AnswerEvent("sources", answer)
            yield AnswerEvent("final", answer)
            return
        if backend == "extractive":
            quoted = self._answer(query, standalone, evidence, extractive_answer(evidence), "extractive", weak)
            yield AnswerEvent("sources", quoted)
            yield AnswerEvent("final", quoted)
            return
        # Sources at once (numbered as the model sees them, so the draft's [n] match), no instant text: the
        # verified answer is the only answer shown.
        sources = [self._citation(src.n, evidence, src.n) for src in evidence.sources]
        shell = Answer(text="", citations=sources, abstained=False, route="search", question=query.question,
                       standalone_question=standalone, backend=backend, weak=weak)
        yield AnswerEvent("sources", shell)
        lead = None
        if backend == "embedded":
            question_tokens = estimate_tokens(standalone) + PROMPT_OVERHEAD_TOKENS
            lead = lead_budget(cfg, self.speed.speed(self._speed_key(backend)), question_tokens,
                               time.perf_counter() - asked)
        yield from self._generate(query, standalone, evidence, hits, backend, weak, lead)

    def evidence_budget(self, standalone: str, backend: str) -> int:
        """Evidence tokens for this question on this backend: what its measured prompt speed reads in the answer
        target (assistant/speed.py); the configured budget for the extractive backend or before any measurement."""
        cfg = self.settings.llm
        if backend == "extractive":
            return cfg.evidence_tokens
        question_tokens = estimate_tokens(standalone) + PROMPT_OVERHEAD_TOKENS
        return evidence_budget(cfg, self.speed.speed(self._speed_key(backend)), question_tokens)

    # --- steps -------------------------------------------------------------------------------

    def search_as_asked(self, query: Query) -> tuple[str, list[ResourceHit]]:
        """The standalone question a turn is searched as, and its hits (follow-ups resolved), without answering."""
        return self._retrieve(self._rewrite(query))

    def _rewrite(self, query: Query) -> tuple[Query, Resolved]:
        return query, resolve(query.question, query.history, self.vocabulary if query.history else None)

    def _retrieve(self, inputs: tuple[Query, Resolved]) -> tuple[str, list[ResourceHit]]:
        """Search the standalone question; a follow-up's candidates (twice as many) put the sources it points
        at first (assistant/conversation.py)."""
        query, resolved = inputs
        exclude = self.profile.read_ids() if query.unread_only else None
        k = max(query.k, 5)
        hits = self.searcher.search(
            resolved.standalone, k=2 * k if resolved.followup else k, tier=query.tier, topic=query.topic,
            kind=query.kind, exclude_read=exclude,
        )
        hits = conversation_order(resolved, hits)[:k] if resolved.followup else hits
        return resolved.standalone, hits

    def _outcome(self, standalone: str, hits: list[ResourceHit]) -> str:
        """"answer", "weak" or "out_of_scope" (index/records.py OUTCOMES) from the searcher's scope model."""
        outcome = getattr(self.searcher, "outcome", None)
        if outcome is not None:
            return outcome(standalone, hits)
        return "out_of_scope" if self.searcher.abstains(hits) else "answer"

    def _speed_key(self, backend: str) -> str:
        """Prompt speeds are kept per backend and device (or server and model): each reads at its own pace."""
        cfg = self.settings.llm
        if backend == "embedded":
            from assistant.llm import resolve_gpu_layers

            return f"embedded:{cfg.model_path or 'packaged'}:{'gpu' if resolve_gpu_layers(cfg) else 'cpu'}"
        if backend == "ollama":
            return f"ollama:{cfg.ollama_model}@{cfg.ollama_url}"
        return f"{backend}:{cfg.openai_model}@{cfg.openai_base_url}"

    def _model_stream(self, backend: str, evidence: Evidence, question: str, timing: DraftTiming) -> Iterator[str]:
        """Text pieces from the backend for this evidence, written freely (the embedded model under a light
        prose grammar: one line, no markup); every backend goes through the same attribution."""
        from assistant.llm import chat_model

        cfg = self.settings.llm
        evidence_text = prompt.render_evidence(evidence.blocks())
        settings = self.settings.model_copy(update={"llm": cfg.model_copy(update={"backend": backend})})
        model = chat_model(settings)
        if backend == "embedded":
            lead = evidence.lead(timing.lead_budget) if timing.lead_budget is not None else []
            lead_text = prompt.render_evidence(lead)
            if lead and estimate_tokens(lead_text) < LEAD_SHARE * evidence.tokens:
                yield from self._lead_then_rest(model, lead_text, evidence_text, question, timing)
            else:
                yield from model.stream(prompt.per_question_text(evidence_text, question), prompt.prose_grammar(),
                                        cfg.max_tokens)
            return
        for chunk in model.stream(prompt.messages(evidence_text, question)):
            if isinstance(chunk.content, str):
                yield chunk.content

    def _lead_then_rest(self, model: Any, lead_text: str, evidence_text: str, question: str,
                        timing: DraftTiming) -> Iterator[str]:
        """When reading the whole evidence takes the embedded model longer than the first-token target
        (`timing.lead_budget` tokens, 2 CPU cores), it writes the first sentence from the lead evidence (the
        start of the whole, `Evidence.lead`) alone, then reads the rest after it and continues that
        sentence's answer: the first text comes within the target, and the common start of both prompts is
        read once. The lead is shown from its fourth word, so a page that says "reply only with X" in the
        lead does not get its word on screen."""
        cfg = self.settings.llm
        timing.read_tokens = estimate_tokens(lead_text)
        log.info("first sentence from the lead evidence: %d of %d evidence tokens", timing.read_tokens,
                 estimate_tokens(evidence_text))
        first = ""
        shown = 0
        for piece in model.stream(prompt.per_question_text(lead_text, question), prompt.prose_grammar(),
                                  cfg.max_tokens, one_sentence=True):
            first += piece
            if len(first.split()) > LEAD_HELD_WORDS:
                yield first[shown:]
                shown = len(first)
        if not shown and not is_sentence_start(first):
            first = ""  # a word or two, not shown: no start to build on
        elif shown < len(first):
            yield first[shown:]
        paused = time.perf_counter()
        rest = model.stream(prompt.per_question_text(evidence_text, question),
                            prompt.continuation_grammar() if first else prompt.prose_grammar(),
                            cfg.max_tokens, answer_start=first)
        for n, piece in enumerate(rest):
            if n == 0:
                timing.pause_s = time.perf_counter() - paused
            yield piece

    def _generate(
        self, query: Query, standalone: str, evidence: Evidence, hits: list[ResourceHit], backend: str, weak: bool,
        lead_budget: int | None = None,
    ) -> Iterator[AnswerEvent]:
        """The model's draft as tokens, then one final answer over the sources already shown: same numbers,
        none removed (uncited ones are marked). When no sentence of the draft holds, a second draft from the
        most relevant passages alone (`llm.redraft_tokens`), announced by a `redraft` event; the pointer answer
        when that fails too."""
        draft = _Draft()
        try:
            yield from self._draft(backend, evidence, standalone, DraftTiming(lead_budget, evidence.tokens), draft)
        except Exception as exc:  # any backend failure falls back to the quoted evidence
            log.warning("LLM backend %s failed: %s", backend, exc)
            shown = self._shown(query, standalone, evidence, extractive_answer(evidence), "extractive", weak, {})
            yield AnswerEvent("final", _with(shown, fallback=f"{backend} failed: {str(exc).splitlines()[0][:200]}"))
            return
        verdict: Verdict = self.verifier.attribute(draft.text, evidence, self.settings.llm.answer_sentences)
        dropped = [Dropped(c.render(), c.reason) for c in verdict.dropped]
        redraft = ""
        if not verdict.kept and not verdict.declined and self.settings.llm.redraft_tokens:
            # at most half the evidence: a second read of nearly the same passages would write nearly the same draft
            narrow = evidence.narrowed(min(self.settings.llm.redraft_tokens, evidence.tokens // 2))
            if narrow.tokens < evidence.tokens:
                second = _Draft()
                # the answer as it stands (the pointer): what a UI may keep, what the second draft must beat
                lead = pointer_lead(UNSUPPORTED_NOTE)
                pointer = self._pointer(query, standalone, hits, evidence, weak, backend, lead)
                yield AnswerEvent("redraft", _with(pointer, fallback=UNSUPPORTED_NOTE, dropped=dropped,
                                                   draft=strip_control(draft.text)))
                try:
                    yield from self._draft(backend, narrow, standalone,
                                           DraftTiming(None, narrow.tokens, reads_anew=False), second)
                except Exception as exc:  # the first draft's outcome stands
                    log.warning("LLM backend %s failed on the second draft: %s", backend, exc)
                redraft = strip_control(second.text)
                if second.text:
                    verdict = self.verifier.attribute(second.text, narrow, self.settings.llm.answer_sentences)
                    dropped += [Dropped(c.render(), c.reason) for c in verdict.dropped]
        if verdict.kept:
            quotes: dict[int, str] = {}
            for claim in sorted(verdict.kept, key=lambda c: -c.cosine):
                quotes.setdefault(claim.sources[0], claim.quote)
            shown_text = verdict.text
            if (key := self.verifier.key_passage(evidence, verdict.kept)) is not None:
                n, sentence = key
                shown_text += f" {KEY_PASSAGE_LEAD} {quote(sentence, n)}"
                quotes.setdefault(n, sentence)
            answer = self._shown(query, standalone, evidence, shown_text, backend, weak, quotes)
            yield AnswerEvent("final", _with(answer, dropped=dropped, draft=strip_control(draft.text), redraft=redraft))
            return
        note = DECLINED_NOTE if verdict.declined else UNSUPPORTED_NOTE
        pointer = self._pointer(query, standalone, hits, evidence, weak, backend, pointer_lead(note))
        yield AnswerEvent("final", _with(pointer, fallback=note, dropped=dropped, draft=strip_control(draft.text),
                                         redraft=redraft))

    def _draft(self, backend: str, evidence: Evidence, standalone: str, timing: DraftTiming,
               draft: _Draft) -> Iterator[AnswerEvent]:
        """One draft's tokens as events, its text gathered in `draft`; its reading and writing speeds are
        remembered for the next evidence budget."""
        started = time.perf_counter()
        first: float | None = None
        for piece in self._model_stream(backend, evidence, standalone, timing):
            if first is None:
                first = time.perf_counter() - started
            draft.text += piece
            yield AnswerEvent("token", token=strip_control(piece))
        if first is not None:
            # After a lead sentence the pause read the rest: the whole evidence over both waits times reading as the
            # budget spends it (the lead's ~60 tokens alone time mostly the first token's fixed cost: 45 tokens/s
            # measured where llama.cpp reads 57). A second draft's prompt starts with passages the first one read:
            # llama.cpp keeps that state, so its first token times only the rest (once 113 tokens in 0.58 s).
            read = evidence.tokens if timing.pause_s else timing.read_tokens
            prompt_tokens = read + estimate_tokens(standalone) + PROMPT_OVERHEAD_TOKENS if timing.reads_anew else 0
            writing = time.perf_counter() - started - first - timing.pause_s
            self.speed.observe(self._speed_key(backend), prompt_tokens, first + timing.pause_s,
                               estimate_tokens(draft.text), writing)

    def _shown(self, query: Query, standalone: str, evidence: Evidence, text: str, backend: str, weak: bool,
               quotes: dict[int, str]) -> Answer:
        """An answer over every evidence source, numbered as the sources event showed them: a source never
        disappears or changes number between the draft and the final answer; those not cited say so."""
        used = {int(m) for m in _MARKER.findall(text) if evidence.source(int(m)) is not None}
        text = _MARKER.sub(lambda m: m.group(0) if int(m.group(1)) in used else "", text)
        citations = [replace(self._citation(src.n, evidence, src.n, quotes.get(src.n, "")), cited=src.n in used)
                     for src in evidence.sources]
        return Answer(
            text=re.sub(r"\s+([.,;])", r"\1", strip_control(text)).strip(), citations=citations, abstained=False,
            route="search", question=query.question, standalone_question=standalone, backend=backend, weak=weak,
        )

    def resources_with_text(self) -> set[str]:
        """Resources whose page text is indexed (the others are known by their catalog card only)."""
        if self._with_text is None:
            self._with_text = {c.resource_id for c in self.searcher.chunks if c.source_kind != "card"}
        return self._with_text

    def _card_first_evidence(self, standalone: str, hits: list[ResourceHit]) -> Evidence | None:
        """The page text of the resources listed beside a card-only best match, for a quote only when it is this
        close to the question (`card_first_quote_min_cosine`); below, such text mostly answers another question."""
        cfg = self.settings.llm
        listed = [h for h in hits[:POINTER_RESOURCES] if h.resource.id in self.resources_with_text()]
        evidence = self.selector.select(standalone, listed, cfg) if listed else None
        if evidence is None or evidence.best_cosine < cfg.card_first_quote_min_cosine:
            return None
        return evidence

    def _pointer(self, query: Query, standalone: str, hits: list[ResourceHit], evidence: Evidence | None,
                 weak: bool, backend: str, lead: str = NOT_ANSWERED) -> Answer:
        """When the page text does not answer: say so, quote the closest passage only when it is close to the
        question, and name the guide's resources on the subject with their place, tier and whether their page
        text is indexed. Never a borrowed sentence presented as the answer."""
        with_text = self.resources_with_text()
        listed = hits[:POINTER_RESOURCES]
        parts = [lead]
        citations: list[Citation] = []
        closest = None
        if evidence is not None and evidence.best_cosine >= self.settings.llm.pointer_min_cosine:
            closest = max(evidence.ranked(), key=lambda p: p[1].relevance)
            if points_ahead(closest[1].text):  # "The formula below ...": what it announces is not in the quote
                closest = None
        read = self._read_ids()
        for n, hit in enumerate(listed, start=1):
            res = hit.resource
            page = next((c for c, _ in hit.passages if c.source_kind != "card"), None)
            near = closest[1] if closest is not None and closest[0].resource.id == res.id else None
            near_chunk = self.selector.chunk(near.chunk_id) if near is not None else None
            shown = near_chunk or page
            citations.append(Citation(
                n=n, resource_id=res.id, title=res.title, url=res.url, topic=res.topic, section=res.section,
                tier=res.tier, list_url=self.settings.catalog.list_url + res.list_anchor,
                passage=near.text if near is not None else page.text if page is not None else card_sentence(res),
                score=round(float(hit.confidence or hit.score), 4), kind=res.kind,
                quote=near.text if near is not None else "", read=res.id in read, page_text=shown is not None,
                source_url=shown.url if shown is not None else "",
                page=page_of(shown, near.text if near is not None else "") if shown is not None else None,
            ))
        if closest is not None:
            n = next((c.n for c in citations if c.resource_id == closest[0].resource.id), None)
            if n is not None:
                parts.append(f"The closest passage says: {quote(closest[1].text, n)}")
        places = [
            f"{c.title} ({place_label(c.topic, c.section, c.tier)}; "
            f"{'page text indexed' if c.resource_id in with_text else 'catalog card only, page text not indexed'}) [{c.n}]"
            for c in citations
        ]
        if places:
            parts.append("The guide's resources on it: " + "; ".join(places) + ".")
        return Answer(text=" ".join(parts), citations=citations, abstained=False, route="search",
                      question=query.question, standalone_question=standalone, backend=backend, weak=weak)

    def _read_ids(self) -> set[str]:
        return {i for i, st in self.profile.states().items() if st == "read"}

    def _answer(self, query: Query, standalone: str, evidence: Evidence, text: str, backend: str, weak: bool) -> Answer:
        """Renumber the evidence markers by first use, keep only cited sources, attach their evidence."""
        order: list[int] = []
        for m in _MARKER.finditer(text):
            n = int(m.group(1))
            if evidence.source(n) is not None and n not in order:
                order.append(n)
        mapping = {old: new for new, old in enumerate(order, start=1)}
        text = _MARKER.sub(lambda m: f"[{mapping[int(m.group(1))]}]" if int(m.group(1)) in mapping else "", text)
        citations = [self._citation(mapping[old], evidence, old) for old in order]
        return Answer(
            text=re.sub(r"\s+([.,;])", r"\1", strip_control(text)).strip(), citations=citations, abstained=False,
            route="search", question=query.question, standalone_question=standalone, backend=backend, weak=weak,
        )

    def _citation(self, n: int, evidence: Evidence, source_n: int, quote_text: str = "") -> Citation:
        """Citation [n] for evidence source `source_n`; `quote_text` is the page sentence that supports the
        answer (its link's text fragment), else the source's most relevant sentence."""
        source = evidence.source(source_n)
        assert source is not None
        hit, res = source.hit, source.resource
        best = max(source.sentences, key=lambda x: x.relevance)
        quoted = next((x for x in source.sentences if x.text == quote_text), best)
        chunk = self.selector.chunk(quoted.chunk_id)
        return Citation(
            n=n, resource_id=res.id, title=res.title, url=res.url, topic=res.topic, section=res.section,
            tier=res.tier, list_url=self.settings.catalog.list_url + res.list_anchor, passage=source.text,
            score=round(float(hit.confidence or hit.score), 4), kind=res.kind, quote=quoted.text,
            read=res.id in self._read_ids(), source_url=chunk.url if chunk is not None else "",
            page=page_of(chunk, quoted.text) if chunk is not None else None,
        )

    def _abstain(self, query: Query, standalone: str, hits: list[ResourceHit], backend: str = "") -> Answer:
        """The refusal says what the guide does cover (its topics, in the list's order) rather than naming
        "nearest" topics: out of scope means nothing is near, so a nearest topic would only mislead."""
        covered = list(dict.fromkeys(r.topic for r in sorted(self.resources, key=lambda r: r.position) if r.topic))
        scope = f" It covers GPU performance engineering: {', '.join(covered)}." if covered else ""
        return Answer(
            text=f"The guide has no good source for that question.{scope} Ask about one of those, or browse the "
                 "Guide tab.", citations=[], abstained=True, route="abstain", question=query.question,
            standalone_question=standalone, backend=backend,
        )

    def _next(self, query: Query) -> Answer:
        # Resources the question names count as read for this plan; the profile changes only through
        # `read add`, the Guide's checkboxes or the answer's "add these to my reads".
        states = self.profile.states()  # reading first, read and skipped never picked
        read = {i for i, st in states.items() if st == "read"}
        return self.next_reads.answer(query.question, read, k=max(query.k, 3), states=states)


def final_answer(events: Iterable[AnswerEvent]) -> Answer:
    """The verified answer at the end of a stream (the sources and draft before it are for a UI)."""
    final: Answer | None = None
    for event in events:
        if event.kind == "final":
            final = event.answer
    assert final is not None
    return final


def _with(answer: Answer, **changes: Any) -> Answer:
    return Answer(**{**answer.__dict__, **changes})


def _clean_question(question: str) -> str:
    """Control characters out, whitespace folded, length capped: odd or huge input stays harmless."""
    question = "".join(ch for ch in question if ch.isprintable() or ch in "\n\t")
    question = re.sub(r"\s+", " ", question).strip()
    return question[:MAX_QUESTION_CHARS]
