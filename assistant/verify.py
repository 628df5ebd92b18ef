"""Sentence-level verification of a generated answer against the evidence it cites.

Each sentence must end with markers of sources that were given, and be supported by one of them:

    cosine  = max cosine(sentence, an evidence unit of the cited source)   (the packaged embedder; units are
              its sentences, neighbouring pairs, and all of them together)
    lexical = share of the sentence's new content words (stemmed; those the question does not already hold)
              found in that source's evidence or title: what the sentence adds must come from the source

both at least their thresholds (`llm.verify_min_cosine`, `llm.verify_min_lexical`). A sentence its cited
source does not support but another given source does is kept with the marker corrected; markers of sources
that do not exist are removed; a sentence left with no supporting source is dropped, with the reason, so the
reader sees what was taken out. A sentence that says the sources do not cover the question is no answer:
it is dropped and counted as the model declining. A sentence that only restates the question (no content
word the question does not already hold) is dropped too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assistant.evidence import Evidence
from assistant.text import sentences as split_sentences
from assistant.text import terms
from core.settings import LLMSettings

_CONTROL = re.compile(r"<\|[^|<>]{0,40}\|>|</?s>|\[/?INST\]|<</?SYS>>")
_MARKERS = re.compile(r"((?:\s*\[\s*\d{1,3}\s*\])+)")
_NUMBER = re.compile(r"\d{1,3}")
# General English for "the sources/evidence do not say": a refusal phrased as a sentence.
_DECLINE = re.compile(
    r"\b(?:(?:source|evidence|passage|text|context|document)s?\b[^.]{0,60}?\b(?:does not|do not|doesn't|don't|"
    r"did not|never)\b[^.]{0,40}?\b(?:mention|say|state|provide|contain|cover|discuss|explain|specify|include|"
    r"describe|address|answer)"
    r"|\bno (?:information|mention|details?|explanation)\b"
    r"|\bnot (?:mentioned|provided|specified|stated|covered|discussed|explained) in\b"
    r"|\b(?:cannot|can't|unable to) (?:answer|determine|find|tell)\b)",
    re.IGNORECASE,
)


@dataclass
class Claim:
    """One generated sentence: what it cited, what it is kept with, and why it was dropped if it was."""

    text: str  # without markers, ending with its punctuation
    cited: list[int]
    sources: list[int] = field(default_factory=list)  # the markers it is shown with (empty: dropped)
    cosine: float = 0.0
    lexical: float = 0.0
    reason: str = ""  # why dropped, or "" when kept
    corrected: bool = False  # kept, but under another source than it cited

    def render(self) -> str:
        body = self.text.rstrip()
        end = body[-1] if body and body[-1] in ".!?" else "."
        body = body.rstrip(".!? ")
        marks = "".join(f"[{n}]" for n in self.sources or self.cited)
        return f"{body} {marks}{end}" if marks else f"{body}{end}"


@dataclass
class Verdict:
    kept: list[Claim]
    dropped: list[Claim]

    @property
    def text(self) -> str:
        return " ".join(c.render() for c in self.kept)

    @property
    def declined(self) -> bool:
        """The model wrote that the sources do not cover the question, and nothing else survived."""
        return not self.kept and any(c.reason == DECLINED for c in self.dropped)

    @property
    def claims(self) -> int:
        return len(self.kept) + len(self.dropped)


DECLINED = "says the sources do not cover it"
NO_SOURCE = "cites no source that was given"
UNSUPPORTED = "not supported by the source it cites"
CUT_OFF = "cut off at the length limit"
RESTATES = "only restates the question"
MIN_NEW_WORDS = 1  # content words beyond the question's: none, and the sentence says nothing new


def strip_control(text: str) -> str:
    """Chat-template control text (`<|im_end|>`, `</s>`, `[INST]`) never reaches the reader."""
    return _CONTROL.sub("", text)


def split_claims(text: str) -> list[Claim]:
    """Sentences with the markers that end them. A run of sentences closed by one marker shares it; text
    after the last marker (an answer cut off by the token limit) is a claim with no markers."""
    text = strip_control(text).strip()
    # "... cache. [1]" → "... cache [1]." so the marker stays with its sentence.
    text = re.sub(r"([.!?])\s*((?:\[\s*\d{1,3}\s*\]\s*)+)", lambda m: f" {m.group(2).strip()}{m.group(1)} ", text)
    claims: list[Claim] = []
    pos = 0
    for m in _MARKERS.finditer(text):
        unit = text[pos:m.start()].strip()
        pos = m.end()
        if pos < len(text) and text[pos] in ".!?":
            pos += 1
        cited = list(dict.fromkeys(int(n) for n in _NUMBER.findall(m.group(1))))
        if not unit.strip(" .!?"):
            if claims:  # "[1][2]" after "[1]." — extra markers of the previous sentence
                claims[-1].cited.extend(n for n in cited if n not in claims[-1].cited)
            continue
        parts = split_sentences(unit) or [unit]
        if len(" ".join(parts).split()) < len(unit.split()):  # sentence splitting dropped short bits: keep whole
            parts = [unit]
        claims.extend(Claim(p.strip(), list(cited)) for p in parts if p.strip(" .!?"))
    rest = text[pos:].strip()
    if rest.strip(" .!?"):
        claims.append(Claim(rest, []))
    return claims


def stems(text: str) -> set[str]:
    """Content words, stemmed, so inflections meet (pipelined / pipelining, scaled / scaling)."""
    return set(terms(text))  # already stemmed by core/text.py


def support_units(sentences: list[str]) -> list[str]:
    """What a claim is compared with: each evidence sentence, each pair of neighbouring ones (a claim often
    joins two facts, and "It ..." needs the sentence before), and all of them together. Not the title: a
    sentence that merely starts with the source's name would look supported."""
    units = list(sentences)
    units += [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]
    if len(sentences) > 2:
        units.append(" ".join(sentences))
    return units


class Verifier:
    """Checks claims against one Evidence with the embedder that selected it."""

    def __init__(self, embedder: Any, cfg: LLMSettings) -> None:
        self.embedder = embedder
        self.cfg = cfg

    def check(self, text: str, evidence: Evidence) -> Verdict:
        claims = split_claims(text)
        by_n = {s.n: s for s in evidence.sources}
        if not claims:
            return Verdict([], [])
        texts = [c.text for c in claims]
        claim_vecs = self.embedder.embed_documents(texts)
        ev_texts = [(s.n, unit) for s in evidence.sources for unit in support_units([x.text for x in s.sentences])]
        ev_vecs = self.embedder.embed_documents([t for _, t in ev_texts]) if ev_texts else np.zeros((0, claim_vecs.shape[1]))
        source_of = np.array([n for n, _ in ev_texts])
        question_stems = stems(evidence.question)
        source_stems = {n: stems(s.text + " " + s.resource.title) for n, s in by_n.items()}
        kept: list[Claim] = []
        dropped: list[Claim] = []
        seen: set[str] = set()
        for claim, vec in zip(claims, claim_vecs, strict=True):
            key = " ".join(terms(claim.text))
            if key in seen:
                continue
            seen.add(key)
            if _DECLINE.search(claim.text):
                claim.reason = DECLINED
                dropped.append(claim)
                continue
            if not claim.cited:
                claim.reason = CUT_OFF if claim is claims[-1] and not claim.text.rstrip().endswith((".", "!", "?")) else NO_SOURCE
                dropped.append(claim)
                continue
            sims = ev_vecs @ vec if len(ev_vecs) else np.zeros(0)
            new_words = stems(claim.text) - question_stems

            def support(n: int) -> tuple[float, float]:
                mask = source_of == n
                cos = float(sims[mask].max()) if mask.any() else 0.0
                lex = len(new_words & source_stems[n]) / len(new_words) if new_words else 0.0
                return cos, lex

            if len(stems(claim.text) - question_stems) < MIN_NEW_WORDS:
                claim.reason = RESTATES
                dropped.append(claim)
                continue
            valid = [n for n in claim.cited if n in by_n]
            if not valid:
                claim.reason = NO_SOURCE
                dropped.append(claim)
                continue
            scored = {n: support(n) for n in by_n}
            good = [n for n in valid if self._supported(*scored[n])]
            if not good:
                best = max(by_n, key=lambda n: scored[n][0])
                if self._supported(*scored[best]):
                    good, claim.corrected = [best], True
            claim.cosine, claim.lexical = max((scored[n] for n in (good or valid)), key=lambda x: x[0])
            if good:
                claim.sources = good
                kept.append(claim)
            else:
                claim.reason = UNSUPPORTED
                dropped.append(claim)
        return Verdict(kept, dropped)

    def _supported(self, cosine: float, lexical: float) -> bool:
        return cosine >= self.cfg.verify_min_cosine and lexical >= self.cfg.verify_min_lexical
