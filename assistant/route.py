"""Which part of the assistant answers a question: the reading planner or search.

A question that asks for reading recommendations (what to read, in which order, where to start, what
comes after what the learner has read) goes to the planner; everything else to search. The decision is a
small logistic model over general features, not phrase lists:

* `intent`: how much closer the question's embedding is to descriptions of a recommendation request than
  to descriptions of a technical question or a look-up (the descriptions below are written in general
  terms; the embedder is the one the searcher already loaded);
* `request`: a clause asks for something next (the general words of asking for a recommendation, or an
  asking "read/study/learn");
* `history`: a clause says what the learner has read and it resolves to catalog resources;
* `concept`: the question asks how or why something works, or what something is. A concept question
  with no request for reading is search's, whatever the model's probability (issue 23): only a request
  for reading advice goes to the planner.

Weights and threshold come from the settings (`planner.route_*`), fitted by `bench/next_reads.py
--calibrate` on our own written questions (bench/data/next-questions.jsonl), never on the dev set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assistant.reading import (LEARNER_WORDS, Reader, Understanding, asks_about_gaps, kind_of, split_clauses, stem,
                               surface_words, words)
from core.logistic import fit_logistic as core_fit_logistic
from core.logistic import logistic

NEXT_INTENTS = (
    "Recommend what I should read next in the reading list.",
    "Which resources should I study next, given what I have already read?",
    "Where should a beginner start, and in what order should the material be read?",
    "Suggest the next papers, posts or tutorials to continue my learning path.",
    "I have finished some of the material; what comes after it?",
    "Plan my reading: what to learn first and what to leave for later.",
)
SEARCH_INTENTS = (
    "Explain how this GPU technique works.",
    "Why is this kernel faster, and what limits its performance?",
    "What does this term mean in GPU programming?",
    "Find the resource that describes a specific method or result.",
    "Which paper or post covers this particular topic?",
    "How do I implement or configure this in CUDA?",
    "Compare two approaches and their trade-offs.",
)
# the general words of asking for something next (single words; their roles, not anyone's wording)
REQUEST_WORDS = frozenset({
    "next", "recommend", "recommendation", "recommendations", "suggest", "suggestion", "suggestions", "start",
    "begin", "order", "roadmap", "path", "curriculum", "prerequisite", "prerequisites", "continue", "else",
    "after", "afterwards", "then", "more", "further", "onward", "onwards", "now", "plan", "follow",
    "followup", "left", "remaining",
})
_ASKING_VERBS = frozenset({"read", "study", "learn", "tackle", "pick", "cover", "explore", "delve", "dive", "consult"})
_MODALS = frozenset({"should", "to", "can", "could", "would", "must", "shall", "do"})
# "how about exploring X?": the asking verbs and the request words that are verbs, in any form
_ASKING_STEMS = frozenset(stem(w) for w in _ASKING_VERBS | {"start", "begin", "continue", "follow"})
_CONCEPT_OPENERS = frozenset({"why", "explain", "define", "describe", "compare"})
_WHAT_VERBS = frozenset({"is", "are", "does", "do", "causes", "makes", "happens", "limits", "determines", "means"})
_THING_SUBJECTS = frozenset({"it", "they", "this", "that", "these", "those", "the"})
_AUXILIARIES = frozenset({"is", "are", "does", "do", "did", "can", "could", "would", "to", "much", "many", "exactly"})
FEATURES = ("intent", "request", "history", "concept")
# the intent embedding reads the message's first words: the request is stated early, and a long message
# costs the model time on 2 cores, not meaning (bench/next_latency.py)
INTENT_WORDS = 64


@dataclass
class RouteDecision:
    """`route` is `next` or `search`; `probability` the model's P(next); `features` why."""

    route: str
    probability: float
    features: dict[str, float]


def request_feature(question: str) -> float:
    """1 when a clause asks for something next: a request word, or an asking read/study/learn."""
    for clause in split_clauses(question):
        ws = [w.rstrip("?") for w in words(clause.text)]
        if asks_about_gaps(clause):  # "Am I missing a prerequisite?" asks for reading in any clause
            return 1.0
        if clause.role != "want" or _asks_when_or_who(ws):
            continue
        if _has_request_word(_common_words(clause.text)):
            return 1.0
        for i, w in enumerate(ws):
            if w in _ASKING_VERBS and any(b in _MODALS for b in ws[max(0, i - 4):i]):
                return 1.0
            if w in {"how", "what"} and ws[i + 1:i + 2] == ["about"] and _proposes_reading(ws[i + 2:i + 4]):
                return 1.0  # "How about exploring X?", "how about I dive into Y?": a step proposed, asked about
    return 0.0


def _proposes_reading(after: list[str]) -> bool:
    """The words after "how about": an asking verb in any form, with or without its subject ("we explore")."""
    verb = after[1:2] if after[:1] and after[0] in {"i", "we", "you"} else after[:1]
    return bool(verb) and stem(verb[0]) in _ASKING_STEMS


# "more information on these tips": more of an explanation asked for, not more reading
_INFO_NOUNS = frozenset({"information", "info", "detail", "details", "explanation", "explanations", "context",
                         "clarification", "insight", "insights"})


def _has_request_word(ws: list[str]) -> bool:
    """A request word, except "more/further" before a word for an explanation ("more details on X")."""
    return any(w in REQUEST_WORDS and not (w in {"more", "further"} and ws[i + 1:i + 2] and ws[i + 1] in _INFO_NOUNS)
               for i, w in enumerate(ws))


def _common_words(text: str) -> list[str]:
    """The clause's words, lower-cased, without those capitalised inside it: a capital after the first word
    makes a request word part of a name ("the push for Cloud Next", "Next.js")."""
    tokens = surface_words(text)
    return [t.lower() for i, t in enumerate(tokens) if i == 0 or not t[:1].isupper() or t.lower() in _FIRST_PERSON]


def _asks_when_or_who(ws: list[str]) -> bool:
    """"When did CuTe DSL support start?", "who began the project?": a time or a person of the field asked for;
    its verbs of starting are the thing's, not a request ("when should I start X?" names the learner)."""
    return bool(ws) and ws[0] in {"when", "who"} and not any(w in LEARNER_WORDS for w in ws)


_THE_LIST_WORDS = frozenset({"guide", "list", "catalog", "catalogue", "curriculum"})


def _asks_the_list(ws: list[str], sentence: list[str]) -> bool:
    """"what does the guide want me to read next": the reading list is asked for reading, not about a thing
    of the field ("what does the guide say about TMA?" still asks about TMA)."""
    return any(w in _THE_LIST_WORDS for w in ws) and any(w in REQUEST_WORDS or w in _ASKING_VERBS for w in sentence)


# nouns that name reading material in general (the catalog's kinds are added by reading.kind_of)
_READING_NOUNS = frozenset({"resource", "resources", "read", "reads", "reading", "readings", "material", "materials"})
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


def _names_reading(sentence: str, verb: str) -> bool:
    """"What is the next book I should explore", "what are some good resources to ...": after "what is/are"
    comes reading material and no name at all, so the sentence asks for reading, not what a thing is ("What is
    the FlashAttention paper about?", "what are the papers behind EvoEngineer?" name one)."""
    tokens = re.findall(r"[\w'-]+", sentence)
    lowered = [t.lower() for t in tokens]
    start = next((i + 2 for i, t in enumerate(lowered[:-1]) if t == "what" and lowered[i + 1] == verb), None)
    if start is None or any(re.search(r"[A-Z0-9]", t) and t.lower() not in _FIRST_PERSON for t in tokens[start:]):
        return False
    return any(t in _READING_NOUNS or kind_of(t) for t in lowered[start:start + 7])


# what may follow "how can I learn" in a request that names no subject of its own
_NO_SUBJECT = frozenset({"more", "further", "next", "now", "first", "deeper", "it", "this", "that", "these", "those",
                         "them", "here", "there", "about", "on", "into", "from", "topic", "area", "section"})


def _asks_own_path(after: list[str]) -> bool:
    """The words after "how can / should": the learner, a verb of reading and no subject of its own ("How can I
    learn more?", "how should I start?") ask for a way in; "how can I avoid bank conflicts?" and "how can I learn to
    benchmark X?" ask how something is done."""
    return (bool(after[:1]) and after[0] in _FIRST_PERSON | {"we"} and bool(after[1:2])
            and stem(after[1]) in _ASKING_STEMS and all(w in _NO_SUBJECT for w in after[2:]))


def concept_feature(question: str) -> float:
    """1 when a clause asks how or why something works, or what a thing is."""
    for sentence in re.split(r"[.?!\n]+", question):
        # how a sentence opens says it asks about a thing, whatever verb of reading follows ("Why is X cheaper
        # than waiting for Y to finish?", "what is X used for?")
        ws = words(sentence)
        if ws and (ws[0] in _CONCEPT_OPENERS or ws[0] == "how" and ws[1:2] and ws[1] in _AUXILIARIES - {"do"}
                   and not _asks_own_path(ws[2:]) or (
                ws[0] == "what" and ws[1:2] and ws[1] in _WHAT_VERBS and not (ws[2:3] and ws[2] in {"next", "i", "we", "you"})
                and not _asks_the_list(ws[2:4], ws) and not _names_reading(sentence, ws[1]))):
            return 1.0
    for clause in split_clauses(question):
        ws = [w for w in words(clause.text) if w not in {"exactly", "actually", "really", "even"}]
        if not ws or clause.role == "read":
            continue
        for i, w in enumerate(ws):
            if w in _CONCEPT_OPENERS:
                return 1.0
            if w == "how" and ws[i + 1:i + 2] and ws[i + 1] in _AUXILIARIES and not _asks_own_path(ws[i + 2:]):
                return 1.0
            if (w == "what" and i + 1 < len(ws) and ws[i + 1] in _WHAT_VERBS
                    and not (ws[i + 2:i + 3] and ws[i + 2] in {"next", "i", "we", "you"})  # not "what do I ..."
                    and not _asks_the_list(ws[i + 2:i + 4], ws)  # nor "what does the guide suggest"
                    and not _names_reading(clause.text, ws[i + 1])):  # nor "what is the next book to read"
                return 1.0
            if w in {"what", "which", "how"} and any(  # "what gain did it report": a fact about a thing
                    a in _AUXILIARIES and b in _THING_SUBJECTS and not _asks_the_list(ws[j + 1:j + 2], ws)
                    and not (j == i + 2 and _names_reading(clause.text, a))
                    for j, (a, b) in enumerate(zip(ws[i + 1:], ws[i + 2:]), start=i + 2)):
                return 1.0
    return 0.0


class Router:
    """Decides the route of each question; the intent vectors are computed once."""

    def __init__(self, reader: Reader, weights: dict[str, float], intercept: float, threshold: float = 0.5,
                 embed_query: Callable[[str], np.ndarray] | None = None,
                 embed_documents: Callable[[Sequence[str]], np.ndarray] | None = None) -> None:
        self.reader = reader
        self.weights = weights
        self.intercept = intercept
        self.threshold = threshold
        self.embed_query = embed_query
        self.embed_documents = embed_documents
        self._intents: tuple[np.ndarray, np.ndarray] | None = None

    def intent_feature(self, question: str) -> float:
        """Max similarity to the recommendation descriptions minus max to the question/look-up ones."""
        if self.embed_query is None or self.embed_documents is None:
            return 0.0
        if self._intents is None:
            self._intents = (np.asarray(self.embed_documents(list(NEXT_INTENTS)), np.float32),
                             np.asarray(self.embed_documents(list(SEARCH_INTENTS)), np.float32))
        q = np.asarray(self.embed_query(" ".join(question.split()[:INTENT_WORDS])), np.float32)
        nxt, srch = self._intents
        return float((nxt @ q).max() - (srch @ q).max())

    def features(self, question: str, understanding: Understanding | None = None) -> dict[str, float]:
        understanding = understanding or self.reader.understand(question)
        return {
            "intent": self.intent_feature(question),
            "request": request_feature(question),
            "history": 1.0 if understanding.read else 0.0,
            "concept": concept_feature(question),
        }

    def decide(self, question: str, understanding: Understanding | None = None) -> RouteDecision:
        feats = self.features(question, understanding)
        z = self.intercept + sum(self.weights.get(name, 0.0) * value for name, value in feats.items())
        p = logistic(z)
        if not feats["request"] and (feats["concept"] or feats["intent"] < 0 and not feats["history"]):
            # how/why something works, what something is, or anything closer to a technical question than to a
            # request for reading advice: search answers it, never the planner, even when it names resources
            # of the guide ("why is continuous batching better ...?" names a section, it asks no reading plan).
            # A learner saying what they have read is left to the model: a history is the planner's context.
            return RouteDecision("search", p, feats)
        return RouteDecision("next" if p >= self.threshold else "search", p, feats)


def fit_logistic(rows: list[dict[str, float]], labels: list[int], l2: float = 0.01) -> tuple[dict[str, float], float]:
    """The routing model's weights and intercept (3 decimals) by the one logistic fit (core/logistic.py): mean
    log-loss plus l2/2 of the squared weights on max-abs-scaled features (a few features, a few hundred rows)."""
    x = np.array([[row[f] for f in FEATURES] for row in rows], dtype=np.float64)
    y = np.array(labels, dtype=np.float64)
    scale = np.maximum(np.abs(x).max(axis=0), 1e-9)
    w, b = core_fit_logistic(x, y, l2 * len(y), scale=scale)
    return {f: round(float(v), 3) for f, v in zip(FEATURES, w, strict=True)}, round(b, 3)
