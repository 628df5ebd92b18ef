"""Evidence first: passages of the retrieved resources' page text that answer the question, numbered by source.

The same evidence is the LLM's whole context, what verification checks each generated sentence against, and
the extractive answer's material, so what the model read is what the reader can check. Only page text is
evidence: a catalog card says where a resource sits in the guide, never what is true about the subject (a
small model turns "X is a Tier 1 repository in the guide's Y section" into a claim about Y).

For the top resources, every sentence of their matched passages (and of the neighbouring chunks) is a
candidate, scored by

    relevance = cosine(question, sentence)           (the packaged embedder, already loaded for search)
              + lexical_weight × IDF-weighted share of the question's terms it contains (fitted to 0 by default)
              + rank_weight / (1 + resource rank)     (retrieval's own order, a small prior)
              + passage_weight × its chunk's retrieval score / the best chunk's     (0.7: with 5 resources at
                                                       the native build's ~650 tokens it raised the key points)

Sentences are picked greedily by maximal marginal relevance (relevance − redundancy with the picks; the fitted
λ = 1 is relevance alone, the knob stays for other budgets), and each
pick brings its context: the sentence before it when it opens by referring back ("This", "It", "However",
...), and a neighbour whose own relevance is close to the pick's. Picks of one page that touch are one
passage. All of it under a token budget that follows the backend's measured prompt speed
(`assistant/speed.py`), so the first token stays fast on 2 CPU cores and a GPU reads much more.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from assistant.prompt import EvidenceBlock
from assistant.sentences import open_table_header, plain_math, sentences, starts_inside_table, table_rows, terms
from core.records import Chunk, Resource
from core.settings import LLMSettings
from index.records import ResourceHit

log = logging.getLogger(__name__)

MAX_SENTENCE_WORDS = 60  # a longer "sentence" is a flattened list or table: cut, it still reads as context
MIN_SENTENCE_WORDS = 5
MIN_LETTER_SHARE = 0.75  # below this a "sentence" is code, a table row or numbers
_TEX = re.compile(r"\$|\\[A-Za-z]+")


@dataclass(frozen=True)
class EvidenceSentence:
    text: str
    resource_rank: int  # 0 = retrieval's best resource
    order: tuple[int, int]  # (chunk start, position in the chunk): document order within the resource
    relevance: float
    chunk_id: str = ""
    position: int = 0  # index among the resource's candidate sentences in document order: neighbours differ by 1
    row: bool = False  # a table row: an item of its own, never run together with its neighbours


@dataclass
class EvidenceSource:
    """Source [n]: one resource and the sentences picked from it, in document order."""

    n: int
    hit: ResourceHit
    sentences: list[EvidenceSentence]

    @property
    def resource(self) -> Resource:
        return self.hit.resource

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def passages(self) -> list[str]:
        """The picked sentences as runs of neighbouring page sentences, each run one passage."""
        return [" ".join(x.text for x in run) for run in self._page_runs()]

    def _page_runs(self) -> list[list[EvidenceSentence]]:
        runs: list[list[EvidenceSentence]] = []
        for sent in self.sentences:
            if runs and sent.position == runs[-1][-1].position + 1 and not (sent.row or runs[-1][-1].row):
                runs[-1].append(sent)
            else:
                runs.append([sent])
        return runs

    def runs(self) -> list[list[EvidenceSentence]]:
        """The passages as sentence runs, the run holding the most relevant sentence first, then the others in
        page order: the model reads the best passage first, and on a slow backend reads it alone before it
        writes the first sentence (`Evidence.lead`)."""
        runs = self._page_runs()
        if not runs:
            return runs
        best = max(range(len(runs)), key=lambda i: max(s.relevance for s in runs[i]))
        return [runs[best], *runs[:best], *runs[best + 1:]]


@dataclass
class Evidence:
    question: str
    sources: list[EvidenceSource] = field(default_factory=list)
    tokens: int = 0  # estimated prompt tokens of the rendered evidence
    candidates: int = 0
    best_cosine: float = 0.0  # the closest picked sentence's cosine to the question: how near the text comes

    def blocks(self) -> list[EvidenceBlock]:
        """Each source's title and passages as the prompt shows them, its best passage first."""
        return [EvidenceBlock(s.n, s.resource.title, tuple(" ".join(x.text for x in run) for run in s.runs()))
                for s in self.sources]

    def lead(self, budget: int) -> list[EvidenceBlock]:
        """The start of `blocks()` cut after the last whole sentence that fits `budget` tokens (at least one
        sentence): its rendering is a prefix of the whole evidence's, so a slow backend writes the first
        sentence from it alone, then reads the rest after it and keeps its state (assistant/chain.py)."""
        taken: list[tuple[EvidenceSource, list[list[str]]]] = []
        spent = 0
        for source in self.sources:
            spent += estimate_tokens(source.resource.title)
            for run in source.runs():
                for i, sent in enumerate(run):
                    cost = estimate_tokens(sent.text) - (2 if i else 0)  # a passage's "- " and newline once
                    if taken and spent + cost > budget:
                        return _blocks_of(taken)
                    if not taken or taken[-1][0] is not source:
                        taken.append((source, []))
                    if i == 0:
                        taken[-1][1].append([])
                    taken[-1][1][-1].append(sent.text)
                    spent += cost
        return _blocks_of(taken)

    def narrowed(self, budget: int) -> Evidence:
        """The most relevant passages alone, whole, within `budget` tokens (at least the best one), each source
        keeping its number: what a second draft reads when every sentence of the first failed the check. Over a
        long evidence a 1.5B model often writes a figure no passage holds ("Tawa achieves 1.5x"; the page: 1.1×);
        over the closest passages alone 9 of the 22 second drafts of stop 44's runs held (docs/benchmarks.md)."""
        runs = [(src, run) for src in self.sources for run in src.runs()]
        runs.sort(key=lambda p: -max(s.relevance for s in p[1]))  # the best passage first: always kept
        kept: dict[int, list[EvidenceSentence]] = defaultdict(list)
        spent = 0
        for src, run in runs:
            cost = estimate_tokens(" ".join(s.text for s in run))
            cost += 0 if src.n in kept else estimate_tokens(src.resource.title) + 2
            if kept and spent + cost > budget:
                continue
            kept[src.n].extend(run)
            spent += cost
        sources = [EvidenceSource(src.n, src.hit, sorted(kept[src.n], key=lambda s: s.position))
                   for src in self.sources if src.n in kept]
        return Evidence(self.question, sources, spent, self.candidates, self.best_cosine)

    def source(self, n: int) -> EvidenceSource | None:
        return next((s for s in self.sources if s.n == n), None)

    def ranked(self) -> list[tuple[EvidenceSource, EvidenceSentence]]:
        """Every picked sentence with its source, most relevant first."""
        pairs = [(src, sent) for src in self.sources for sent in src.sentences]
        return sorted(pairs, key=lambda p: -p[1].relevance)


def _blocks_of(taken: list[tuple[EvidenceSource, list[list[str]]]]) -> list[EvidenceBlock]:
    return [EvidenceBlock(source.n, source.resource.title, tuple(" ".join(run) for run in runs))
            for source, runs in taken]


def estimate_tokens(text: str) -> int:
    """Prompt tokens of English technical text for the packaged Qwen tokenizer: about 4 characters each
    (measured on rendered evidence of the real corpus), plus the line's "- " and newline."""
    return math.ceil(len(text) / 4.0) + 2


KIND_NOUNS = {"blog": "blog post", "docs": "documentation page", "repo": "repository", "model": "model card",
              "site": "website", "community": "community"}
CARD_SUFFIX = ":card"  # chunk id of a card sentence: the list's own words about a resource, not the page's


def card_sentence(res: Resource) -> str:
    """A catalog card as one plain sentence a reader (or a small LLM) can quote."""
    by = f" by {res.authors}" if res.authors else ""
    tier = f"Tier {res.tier} " if res.tier is not None else ""
    note = f": {res.note.rstrip('.')}" if res.note else ""
    kind = KIND_NOUNS.get(res.kind, res.kind or "resource")
    return f"{res.title} is a {tier}{kind}{by} in the guide's {res.section} section{note}."


def readable(sentence: str) -> bool:
    """Prose a small model can restate: no TeX (copied TeX comes out garbled), mostly letters and spaces."""
    if _TEX.search(sentence):
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in sentence)
    return letters >= MIN_LETTER_SHARE * len(sentence)


def introduces(sentence: str) -> bool:
    """A lead-in ("And we call it like so:") whose content is the code, list or figure after it: no evidence."""
    return sentence.rstrip().endswith(":")


class EvidenceSelector:
    """Picks evidence over one loaded index (`searcher`: its chunk store and embedder)."""

    def __init__(self, searcher: Any) -> None:
        self.searcher = searcher
        self._neighbours: dict[str, tuple[str | None, str | None]] | None = None
        self._by_id: dict[str, Chunk] | None = None

    # --- candidates ----------------------------------------------------------------------------

    def _index_chunks(self) -> None:
        """Chunk id → chunk, and each page chunk's previous and next chunk of the same page."""
        chunks: list[Chunk] = list(self.searcher.chunks)
        self._by_id = {c.chunk_id: c for c in chunks}
        pages: dict[tuple[str, str], list[Chunk]] = defaultdict(list)
        for c in chunks:
            if c.source_kind != "card":
                pages[(c.resource_id, c.url)].append(c)
        self._neighbours = {}
        for page in pages.values():
            page.sort(key=lambda c: c.start)
            for i, c in enumerate(page):
                prev = page[i - 1].chunk_id if i > 0 else None
                nxt = page[i + 1].chunk_id if i + 1 < len(page) else None
                self._neighbours[c.chunk_id] = (prev, nxt)

    def chunk(self, chunk_id: str) -> Chunk | None:
        """The stored chunk an evidence sentence came from (its page URL, its PDF page)."""
        if self._by_id is None:
            self._index_chunks()
        assert self._by_id is not None
        return self._by_id.get(chunk_id)

    def _page_chunks(self, hit: ResourceHit, neighbours: bool) -> list[Chunk]:
        if self._neighbours is None or self._by_id is None:
            self._index_chunks()
        assert self._neighbours is not None and self._by_id is not None
        out: dict[str, Chunk] = {}
        for chunk, _ in hit.passages:
            if chunk.source_kind == "card":
                continue
            out[chunk.chunk_id] = chunk
            if neighbours:
                for other in self._neighbours.get(chunk.chunk_id, (None, None)):
                    if other and other in self._by_id:
                        out.setdefault(other, self._by_id[other])
        return sorted(out.values(), key=lambda c: c.start)

    def candidates(self, hits: list[ResourceHit], neighbours: bool = True) -> list[EvidenceSentence]:
        """Page sentences of each hit in document order (cards are not evidence: see the module's note)."""
        found: list[EvidenceSentence] = []
        for rank, hit in enumerate(hits):
            seen: set[str] = set()
            position = 0
            for chunk in self._page_chunks(hit, neighbours):
                text = self._with_table_header(chunk)
                rows = table_rows(text)
                for i, sent in enumerate(sentences(text)):
                    row = sent in rows
                    sent = plain_math(sent)
                    words = sent.split()
                    if len(words) < MIN_SENTENCE_WORDS or not readable(sent) or introduces(sent):
                        continue
                    if len(words) > MAX_SENTENCE_WORDS:
                        sent = " ".join(words[:MAX_SENTENCE_WORDS]) + " …"
                    key = sent.lower()
                    if key in seen:  # chunks overlap: the same sentence twice
                        continue
                    seen.add(key)
                    found.append(EvidenceSentence(sent, rank, (chunk.start, i), 0.0, chunk.chunk_id, position, row))
                    position += 1
        return found

    def _with_table_header(self, chunk: Chunk) -> str:
        """The chunk's text, led by the header of the table it continues from the chunk before: without the
        column names its rows say nothing (a question about a table's later rows found no evidence)."""
        if not starts_inside_table(chunk.text):
            return chunk.text
        assert self._neighbours is not None and self._by_id is not None  # indexed by _page_chunks
        before = self._neighbours.get(chunk.chunk_id, (None, None))[0]
        header = open_table_header(self._by_id[before].text) if before in self._by_id else ""
        return f"{header}\n{chunk.text}" if header else chunk.text

    # --- selection -----------------------------------------------------------------------------

    def select(self, question: str, hits: list[ResourceHit], cfg: LLMSettings, budget: int | None = None) -> Evidence:
        """The evidence for `question` from the top `cfg.evidence_resources` hits, within `budget` prompt
        tokens (default `cfg.evidence_tokens`)."""
        hits = hits[: cfg.evidence_resources]
        pool = self.candidates(hits, neighbours=cfg.evidence_neighbours)
        if not pool:
            return Evidence(question)
        embedder = self.searcher.embedder
        q_vec = embedder.embed_query(question)
        vecs = embedder.embed_documents([c.text for c in pool])
        cos = vecs @ q_vec
        relevance = cos + np.array(
            [cfg.evidence_rank_weight / (1 + c.resource_rank) for c in pool]
        )
        if cfg.evidence_passage_weight:
            relevance = relevance + cfg.evidence_passage_weight * passage_match(hits, pool)
        if cfg.evidence_lexical_weight:  # the fitted default is 0: no overlap to compute
            relevance = relevance + cfg.evidence_lexical_weight * lexical_overlap(question, [c.text for c in pool])
        title_cost = [estimate_tokens(h.resource.title) + 2 for h in hits]  # "[n] Title" line
        costs = [estimate_tokens(c.text) for c in pool]
        picked = passages_by_mmr(pool, relevance, vecs, costs, title_cost, cfg, budget or cfg.evidence_tokens)
        return self._number(question, hits, pool, relevance, picked, cos)

    def _number(self, question: str, hits: list[ResourceHit], pool: list[EvidenceSentence], relevance: np.ndarray,
                picked: list[int], cos: np.ndarray) -> Evidence:
        by_rank: dict[int, list[EvidenceSentence]] = defaultdict(list)
        for i in picked:
            c = pool[i]
            by_rank[c.resource_rank].append(replace(c, relevance=float(relevance[i])))
        sources = []
        for n, rank in enumerate(sorted(by_rank), start=1):
            sents = sorted(by_rank[rank], key=lambda s: s.position)
            sources.append(EvidenceSource(n, hits[rank], sents))
        tokens = sum(estimate_tokens(s.resource.title) + 2 + sum(estimate_tokens(p) for p in s.passages) for s in sources)
        best_cosine = float(cos[picked].max()) if picked else 0.0
        return Evidence(question, sources, tokens, len(pool), best_cosine)


# Openings that refer back to the sentence before (general English): such a sentence needs its predecessor.
REFERRING_OPENERS = frozenset({
    "this", "these", "that", "those", "it", "its", "they", "their", "them", "such", "here", "there", "thus",
    "hence", "however", "therefore", "instead", "otherwise", "also", "then", "so", "but", "and", "because",
    "similarly", "likewise", "consequently", "moreover", "furthermore", "additionally", "meanwhile", "finally",
})


def refers_back(sentence: str) -> bool:
    first = sentence.split(maxsplit=1)[0].strip(",;:\"'(").lower() if sentence.strip() else ""
    return first in REFERRING_OPENERS


# Words that, early in a sentence, point at something said before it ("Visually, it looks like ...", "In this
# configuration, ..."); and the voice of a page's own narrative ("we build", "our kernel", "you want").
_EARLY_POINTERS = frozenset({"it", "its", "they", "them", "their", "this", "these", "those", "such"})
_NARRATOR = frozenset({"we", "our", "us", "you", "your", "i", "my", "we've", "we're", "we'll", "we'd", "you've",
                       "you're", "you'll", "you'd", "i'm", "i've", "let's"})
EARLY_WORDS = 6
_FIXED_OPENINGS = ("instead of ", "also known as ")  # openers that start a whole thought of their own


_CODE_TOKEN = re.compile(r"[(){}\[\]=<>;_`]|::|->")
CODE_TOKEN_SHARE = 0.25


def codelike(sentence: str) -> bool:
    """A line of code that passed for a sentence ("tl.store(output_ptr + offsets, output, mask=mask) ```"):
    a quarter or more of its words hold brackets, operators, underscores or backticks."""
    ws = sentence.split()
    return bool(ws) and sum(bool(_CODE_TOKEN.search(w)) for w in ws) >= CODE_TOKEN_SHARE * len(ws)


def self_contained(sentence: str) -> bool:
    """A sentence that says something whole out of its page: no opener or early pronoun that refers back,
    not a question (a heading), not the page's narrator speaking, not code. What a quote needs to stand alone."""
    text = sentence.strip()
    if codelike(text):
        return False
    ws = [w.strip(",;:\"'()*“”‘’").lower() for w in text.split()]
    if not ws or text.rstrip("*").endswith("?"):
        return False
    if refers_back(text) and not text.lower().startswith(_FIXED_OPENINGS):
        return False
    return not (_EARLY_POINTERS & set(ws[:EARLY_WORDS]) or _NARRATOR & set(ws))


def passages_by_mmr(pool: list[EvidenceSentence], relevance: np.ndarray, vecs: np.ndarray, costs: list[int],
                    title_costs: list[int], cfg: Any, budget: int) -> list[int]:
    """Maximal marginal relevance over sentences, each pick with its context, under a token budget.

    A pick is λ·relevance − (1−λ)·(max cosine to the picks so far); candidates far below the best are never
    picked themselves. The pick then takes the sentence before it when it refers back, and each neighbour
    whose relevance is within `cfg.evidence_context_span` of the pick's, when the budget allows (context
    before the budget for another pick: an answer needs the sentence around its fact)."""
    lam = cfg.evidence_mmr_lambda
    floor = float(relevance.max()) - cfg.evidence_relevance_span
    at = {(c.resource_rank, c.position): i for i, c in enumerate(pool)}
    chosen: set[int] = set()
    opened: set[int] = set()
    spent = 0
    redundancy = np.zeros(len(pool))
    available = relevance >= floor

    def cost_of(items: list[int]) -> int:
        groups = {pool[i].resource_rank for i in items} - opened
        return sum(costs[i] for i in items) + sum(title_costs[g] for g in groups)

    def take(items: list[int]) -> None:
        nonlocal spent, redundancy
        spent += cost_of(items)
        for i in items:
            chosen.add(i)
            opened.add(pool[i].resource_rank)
            available[i] = False
            redundancy = np.maximum(redundancy, vecs @ vecs[i])

    while available.any() and len(chosen) < cfg.evidence_max_sentences:
        score = np.where(available, lam * relevance - (1 - lam) * redundancy, -np.inf)
        i = int(np.argmax(score))
        available[i] = False
        if spent + cost_of([i]) > budget and chosen:
            continue  # a shorter one may still fit
        take([i])
        c = pool[i]
        before = at.get((c.resource_rank, c.position - 1))
        after = at.get((c.resource_rank, c.position + 1))
        context = []
        if before is not None and (refers_back(c.text) or relevance[before] >= relevance[i] - cfg.evidence_context_span):
            context.append(before)
        if after is not None and relevance[after] >= relevance[i] - cfg.evidence_context_span:
            context.append(after)
        for j in context:
            if j not in chosen and spent + cost_of([j]) <= budget and len(chosen) < cfg.evidence_max_sentences:
                take([j])
    return sorted(chosen)


def passage_match(hits: list[ResourceHit], pool: list[EvidenceSentence]) -> np.ndarray:
    """Each sentence's chunk as retrieval scored it (BM25 and dense fused, over whole chunks), relative to the
    best passage of these hits, 0..1; 0 for a chunk retrieval did not match (a neighbour). A sentence's own
    cosine to the question misses the sentences that carry a matched passage's answer without its words."""
    scores: dict[str, float] = {}
    for hit in hits:
        for chunk, score in hit.passages:
            scores.setdefault(chunk.chunk_id, score)
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return np.zeros(len(pool))
    return np.array([max(scores.get(c.chunk_id, 0.0), 0.0) / top for c in pool])


def lexical_overlap(question: str, texts: list[str]) -> np.ndarray:
    """IDF-weighted share of the question's terms each text contains (IDF over the texts themselves), 0..1."""
    q_terms = set(terms(question))
    docs = [set(terms(t)) for t in texts]
    df = Counter(t for d in docs for t in d if t in q_terms)
    n = len(docs)
    idf = {t: math.log(1 + n / df[t]) for t in df}
    total = sum(idf.values())
    if not total:
        return np.zeros(len(texts))
    return np.array([sum(idf[t] for t in d & idf.keys()) / total for d in docs])
