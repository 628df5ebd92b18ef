"""What a learner's sentence says about their reading: what they have read and what they want next.

Everything is resolved against the catalog's own structure, never against lists of example phrases:
titles (and their short forms: a version number, an acronym or abbreviation built from the title's
words, "the X paper"), authors and hosts (possessives included), kinds, and groups: a tier of a topic or
section, a whole section or topic, every item of a tier, counted sets ("both ... posts"). The words that
glue a sentence together (stop words, verbs of having read or of wanting) are general English, grouped
by role below; the only vocabulary that names anything comes from the catalog.

Interest (what the learner wants next) maps to topics by IDF-weighted overlap with the catalog's topic,
section, title and note words, blended with embedding similarity to each section's description when an
embedder is at hand.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np

from assistant.mentions import Group, Linker, looks_like_a_name, quoted_spans
from assistant.spelling import Speller, quote_titles
from core.records import Resource, place_label
from core.text import STOP_WORDS
from core.text import stem as stem_word
from core.urls import url_key

# --- general-English word classes (roles in a sentence, not names of anything) ---------------------
STOP = STOP_WORDS | {"i'm", "i've", "i'd", "i'll", "im", "ive", "id", "also", "plus", "etc", "really",
                                        "pretty", "quite", "much", "get", "got", "bit", "lot", "like", "one", "ones"}
# having read it: the verbs and adverbs of completion
DONE_WORDS = frozenset({
    "read", "reread", "finished", "finish", "done", "completed", "complete", "covered", "worked",
    "studied", "skimmed", "watched", "know", "knew", "familiar", "comfortable", "already", "mastered", "past",
    "digested", "absorbed", "consumed", "tackled", "wrapped", "through", "after", "having",
    "background", "far", "did", "learned", "learnt", "seen", "saw", "used",
})
# not having read it
NEGATION_WORDS = frozenset({"not", "never", "haven't", "hasn't", "didn't", "don't", "without", "yet", "nothing",
                            "haven", "didn", "havent", "didnt", "skipped", "none", "neither", "nor", "no"})
# having begun, not finished: the items started count as read, a whole place started does not ("I jumped
# into DeepGEMM and the advanced material of X"); past forms only, so "where should I start?" still asks
BEGUN_WORDS = frozenset({"started", "began", "begun", "commenced", "jumped", "dove", "dived", "plunged"})
FINISHED_WORDS = frozenset({"read", "finished", "completed", "done", "covered"})
# wanting something next, or asking
WANT_WORDS = frozenset({
    "want", "wanna", "would", "love", "interested", "interest", "focus", "focused", "focusing", "next",
    "recommend", "recommendation", "suggest", "suggestion", "should", "learn", "learning", "go", "move", "dive",
    "deeper", "explore", "curious", "looking", "need", "keen", "aim", "goal", "stay", "staying", "stick",
    "sticking", "continue", "keep", "switch", "pivot", "branch", "what", "where", "which", "how", "anything",
    "more", "start", "begin", "point", "hoping", "plan", "planning", "care", "into", "understand", "toward",
    "towards", "onto", "get", "getting", "study", "studying", "read", "reading", "look", "check", "pick", "tackle",
    "try", "advice", "else", "first", "beginner", "newcomer", "new", "good", "best", "follow", "followup", "step",
    "steps", "tell", "give", "show", "help", "please", "thanks", "recommendations", "suggestions", "mostly",
    "especially", "particularly", "mainly", "most", "better", "well", "once", "someone", "people", "write",
    "writing", "build", "building", "make", "making", "use", "using", "do", "doing", "work", "working",
    "why", "when", "who", "explain", "left", "remaining", "remains",
})
# a set of resources rather than one
GROUP_WORDS = frozenset({
    "tier", "tiers", "section", "sections", "topic", "topics", "material", "materials", "reading", "readings",
    "stuff", "part", "parts", "track", "chapter", "chapters", "everything", "all", "whole", "entire", "every",
    "rest", "set", "list", "items", "entries", "resources", "things", "category",
})
_GROUP_STEMS = frozenset(stem_word(w) for w in GROUP_WORDS)
# the learner asking whether they skipped something ("Am I missing a prerequisite?"): the planner back-fills
GAP_QUESTION_WORDS = frozenset({"skip", "skipped", "missing", "miss", "gap", "gaps", "prerequisite", "prerequisites"})
# "... and got overwhelmed", "I'm stuck in X": a learner who struggled in a place is back-filled there, like one who
# asks whether they skipped something (never sent on to its harder tiers)
DIFFICULTY_WORDS = frozenset({"lost", "overwhelmed", "overwhelming", "stuck", "confused", "confusing", "struggled",
                              "struggling", "challenging", "difficult"})
# the object a wish asks about: the words after "about", "on", "related to", … up to where the sentence goes on
_ASKED_ABOUT = re.compile(r"\b(?:about|on|regarding|concerning|related to|relating to|covering)\s+"
                          r"((?:(?!\b(?:outside|beyond|besides|aside from|other than|apart from|except|that|which|as|in the "
                          r"guide|from the guide)\b)[^.?!,;])+)", re.IGNORECASE)
# "anything else about X": the learner asks past what they have, across the guide, by subject
SUBJECT_CUES = frozenset({"else", "other", "beyond", "outside", "besides", "aside", "elsewhere"})
# "I have no particular focus", "I'm not really focused": negated, these say the learner has no focus
FOCUS_NOUNS = frozenset({"focus", "focused", "preference"})
# "additional information on X": asks past the reads only with such an object ("additional reading" alone is any)
OBJECT_SUBJECT_CUES = frozenset({"additional"})
# "Have you covered X?", "Does the guide include X?": a yes/no question whether the guide holds X
_COVER_VERBS = frozenset({"cover", "covers", "covered", "include", "includes", "included", "explored"})
_YES_NO_OPENERS = frozenset({"have", "has", "does", "do", "did", "is", "are"})
TIER_NUMBERS = {"one": 1, "two": 2, "three": 3, "first": 1, "second": 2, "third": 3, "1": 1, "2": 2, "3": 3}
# the catalog's kinds, and the general nouns a learner uses for them
KIND_NOUNS = {
    "paper": "paper", "article": "blog", "post": "blog", "blog": "blog", "blogpost": "blog", "writeup": "blog",
    "repo": "repo", "repository": "repo", "codebase": "repo", "doc": "docs", "docs": "docs",
    "documentation": "docs", "manual": "docs", "book": "book", "textbook": "book", "video": "video",
    "talk": "video", "site": "site", "website": "site",
}
# host parts every site has
_HOST_NOISE = frozenset({"www", "com", "org", "net", "io", "ai", "dev", "co", "html", "blog", "blogs", "docs",
                         "readme", "md", "p", "posts", "post", "article", "articles", "abs", "pdf", "index"})

# every word the rules above look for: a typo of one is mended like a typo of a title (assistant/spelling.py)
RULE_WORDS = (DONE_WORDS | NEGATION_WORDS | BEGUN_WORDS | WANT_WORDS | GROUP_WORDS | GAP_QUESTION_WORDS
              | DIFFICULTY_WORDS | SUBJECT_CUES | frozenset(KIND_NOUNS))

# the interest clause embedded: its first words (a long message costs the model time, not meaning)
FOCUS_SCORE = 0.5  # an interest score from which a topic is a focus (the planner's default focus threshold)
DENSE_WORDS = 48
WHOLE_TITLE = 0.9  # share of a title's weight a phrase covers to say that title itself, not a place its words name
ITEM_VECTORS = True  # topics are also matched through their items' title + note
NAMED_TOPIC_FIRST = False  # a topic said by its whole name outranks the others: off, it lost on unseen seeds
# a quoted title's "by <names>" belongs to the title, not a mention of its own
_BY_NAMES = re.compile(r"^\s*,?\s*by\s+(?:[\w.'’-]+(?:\s+(?:et al\.?|[A-Z][\w.'’-]*))*)", re.UNICODE)

_RAW_WORD = re.compile(r"\d+(?:\.\d+)?[a-z]*\+?|[a-z][a-z0-9]*(?:'[a-z]+)?", re.IGNORECASE)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def stem(word: str) -> str:
    word = word.lower().replace("’", "'")
    word = word.removesuffix("'s")
    if _NUMBER.match(word):
        return word
    return stem_word(word)


def surface_words(text: str) -> list[str]:
    """The words as written, possessive 's kept."""
    return _RAW_WORD.findall(text.replace("’", "'"))


def words(text: str) -> list[str]:
    """Surface words, lower-cased (roles are decided on these)."""
    return [w.lower() for w in surface_words(text)]


def content_terms(text: str) -> list[str]:
    """Stemmed words that can name something: no stop words, no role words."""
    out = []
    for w in words(text):
        base = w.removesuffix("'s")
        if base in STOP or base in DONE_WORDS or base in WANT_WORDS or base in GROUP_WORDS:
            continue
        if kind_of(base) or len(base) < 2 and not base.isdigit():
            continue
        out.append(stem(base))
    return out


def kind_of(word: str) -> str | None:
    word = word.lower()
    return KIND_NOUNS.get(word) or KIND_NOUNS.get(word.removesuffix("s"))


def _name_words(text: str) -> list[str]:
    """A name's words for abbreviations: camel case split ("FlashAttention" → flash, attention)."""
    return [w.lower() for w in _CAMEL.findall(re.sub(r"[^A-Za-z0-9]+", " ", text))]


def _abbreviates(token: str, name: Sequence[str]) -> bool:
    """Is `token` built from prefixes of two or more consecutive words of `name` (PMPP, matmul, fa2)?"""
    token = token.lower()
    if len(token) < 2 or not token.isalnum():
        return False

    @functools.cache
    def fits(pos: int, i: int, used: int) -> bool:
        if pos == len(token):
            return used >= 2
        if i >= len(name):
            return False
        word = name[i]
        if word.isdigit():  # a number must be spelt whole
            return token.startswith(word, pos) and fits(pos + len(word), i + 1, used + 1)
        for n in range(min(len(word), len(token) - pos), 0, -1):
            if token[pos:pos + n] == word[:n] and fits(pos + n, i + 1, used + 1):
                return True
        return False

    return any(fits(0, start, 0) for start in range(len(name)) if name[start][:1] == token[:1])


# --- the catalog's structure ---------------------------------------------------------------------------


@dataclass(eq=False)
class CatalogIndex:
    """Name terms of every resource, section and topic, with IDF over the catalog; built once per catalog."""

    resources: list[Resource]
    extra_authors: dict[str, str] = field(default_factory=dict)  # resource id → names found on its page
    content_terms = staticmethod(content_terms)  # how a mention's words are compared (the linker uses it too)

    def __post_init__(self) -> None:
        self.by_id = {r.id: r for r in self.resources}
        self._abbrev_cache: dict[tuple[str, str], bool] = {}
        self.strong: dict[str, set[str]] = {}  # title, acronym, authors, host: full weight
        self.weak: dict[str, set[str]] = {}  # note, URL path: half weight
        self.numbers: dict[str, set[str]] = {}
        self.name_words: dict[str, list[list[str]]] = {}
        for res in self.resources:
            host, path = _url_parts(res.url)
            authors = f"{res.authors} {self.extra_authors.get(res.id, '')}"
            self.strong[res.id] = set(content_terms(f"{res.title} {authors} {host}")) | self._joined(res.title)
            self.weak[res.id] = set(content_terms(f"{res.note} {path}")) - self.strong[res.id]
            self.numbers[res.id] = {w for w in content_terms(res.title) if _NUMBER.match(w)}
            self.name_words[res.id] = [_name_words(part) for part in re.split(r"[:(),]| - ", res.title) if part.strip()]
        df = Counter(t for rid in self.strong for t in self.strong[rid] | self.weak[rid])
        n = len(self.resources)
        self.idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self.max_idf = math.log(1 + n)
        self.topics = list(dict.fromkeys(r.topic for r in sorted(self.resources, key=lambda r: r.position)))
        self.sections: dict[tuple[str, str], list[Resource]] = defaultdict(list)
        for res in sorted(self.resources, key=lambda r: r.position):
            self.sections[(res.topic, res.section)].append(res)
        self.topic_terms = {t: set(content_terms(t)) for t in self.topics}
        self.section_terms = {key: set(content_terms(key[1])) for key in self.sections}
        # a word most of a section's titles share stands for the section ("the NCCL material")
        self.section_alias: dict[tuple[str, str], dict[str, float]] = {}
        for key, items in self.sections.items():
            counts = Counter(t for r in items for t in self.strong[r.id])
            self.section_alias[key] = {t: c / len(items) for t, c in counts.items() if c >= 2 and c / len(items) >= 0.5}
        self.topic_alias: dict[str, dict[str, float]] = {}
        for topic in self.topics:
            items = [r for r in self.resources if r.topic == topic]
            counts = Counter(t for r in items for t in self.strong[r.id])
            self.topic_alias[topic] = {t: c / len(items) for t, c in counts.items() if c >= 2 and c / len(items) >= 0.3}
        # how distinctive a word is among the names of topics and sections ("kernel" names two topics)
        group_names = [self.section_terms[key] | self.topic_terms[key[0]] for key in self.sections]
        name_df = Counter(t for names in group_names for t in names)
        self.name_idf = {t: math.log(1 + len(group_names) / c) for t, c in name_df.items()}
        self.stem_text = {r.id: " " + " ".join(content_terms(f"{r.title} {r.note}")) + " " for r in self.resources}
        self.name_text = {key: " " + " ".join(content_terms(key[0])) + " " + " ".join(content_terms(key[1])) + " "
                          for key in self.sections}
        self.name_like = {stem(w) for r in self.resources for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9+]*", f"{r.title} {r.authors}")
                          if re.search(r"\d|[A-Z].*[A-Z]|^[a-z]+[A-Z]", w)}
        for res in self.resources:  # a title's own name ("Mojo", "Medusa: ...", "Horovod") is a name
            head = res.title.split(":")[0].split("(")[0].strip()
            if len(head.split()) == 1:
                self.name_like |= set(content_terms(head))
        # the one-word name a "Name: subtitle" title gives itself ("Orca", "Medusa"), when it is no word of the field
        heads = {r.id: content_terms(r.title.split(":")[0]) if ":" in r.title else [] for r in self.resources}
        self.own_name = {rid: h[0] for rid, h in heads.items()
                         if len(h) == 1 and h[0] in self.name_like and not self.generic(h[0])}
        self.surface = {w for r in self.resources for w in words(f"{r.title} {r.authors}")}
        self.place_terms = {t for r in self.resources for t in content_terms(f"{r.topic} {r.section}")}
        # topic and section names as stemmed word runs, for "said word for word" (places_named)
        self.topic_seqs = {t: _word_seq(t) for t in self.topics if _word_seq(t).strip()}
        self.section_seqs = {key: _word_seq(key[1]) for key in self.sections if _word_seq(key[1]).strip()}
        self.vocabulary = set(self.idf) | {t for terms in self.topic_terms.values() for t in terms} | {
            t for terms in self.section_terms.values() for t in terms}

    @staticmethod
    def _joined(title: str) -> set[str]:
        """A hyphenated or spaced version joins its name: "FlashAttention-2" also answers to flashattention2."""
        out = set()
        for m in re.finditer(r"([A-Za-z][A-Za-z0-9]+)[- ](\d+(?:\.\d+)?)\b", title):
            out.add(f"{m.group(1)}{m.group(2)}".lower())
        return out

    def canon(self, term: str) -> str:
        """An acronym's plural as the acronym: "GPUs" → gpu, "TPUs" → tpu."""
        return term[:-1] if term.endswith("s") and term[:-1] in self.name_like and len(term) <= 6 else term

    def generic(self, term: str) -> bool:
        """A word of the whole field, not of one place in it: in two or more topic names, or in the
        titles, authors and notes of more than an eighth of the catalog ("kernel", "CUDA", "optimize")."""
        in_topics = sum(1 for names in self.topic_terms.values() if term in names)
        share = sum(1 for rid in self.strong if term in self.strong[rid] or term in self.weak[rid]) / max(1, len(self.resources))
        return in_topics >= 2 or share > 0.125

    def weight(self, term: str) -> float:
        return self.idf.get(term, self.max_idf)

    def known(self, term: str) -> bool:
        if term in self.vocabulary or len(term) >= 4 and any(
                v.startswith(term) or len(v) >= 5 and term.startswith(v) for v in self.vocabulary):
            return True
        return any(self._abbrev_hit(term, rid) for rid in self.by_id) or any(
            _abbreviates(term, _name_words(name)) for name in [*self.topics, *(s for _, s in self.sections)])

    def _abbrev_hit(self, term: str, rid: str) -> bool:
        key = (term, rid)
        hit = self._abbrev_cache.get(key)
        if hit is None:
            hit = not (term.isdigit() or term in self.vocabulary and term not in self.strong[rid]) and any(
                _abbreviates(term, name) for name in self.name_words[rid])
            self._abbrev_cache[key] = hit
        return hit

    def resource_score(self, terms: Sequence[str], rid: str) -> float:
        """Share of the terms' IDF weight the resource's names carry; a title's version number the
        learner did not say costs a little (the plain "FlashAttention" is not "FlashAttention-2")."""
        total = sum(self.weight(t) for t in terms)
        if not total:
            return 0.0
        got = 0.0
        for t in terms:
            if t in self.strong[rid] or self._abbrev_hit(t, rid):
                got += self.weight(t)
            elif t in self.weak[rid]:
                got += 0.5 * self.weight(t)
            elif len(t) >= 4 and any(s.startswith(t) or len(s) >= 5 and t.startswith(s) for s in self.strong[rid]):
                got += 0.8 * self.weight(t)  # "intro" / "introduction" for "Introducing"
        return got / total

    def missing_numbers(self, terms: Sequence[str], rid: str) -> int:
        """Version numbers of the title the learner did not say (the plain "FlashAttention" is not
        "FlashAttention-2"): a tie-break between titles the words match equally."""
        said = set(terms)
        return sum(1 for n in self.numbers[rid] if n not in said and not any(n in t for t in said))

    def handle_of(self, name: str, rid: str) -> bool:
        """Could a first name belong to the author behind a one-word handle ("simon" → "siboehm")?
        Weak evidence: the handle starts with the name's first two letters."""
        res = self.by_id[rid]
        handles = [a for a in re.split(r"[,;&]", res.authors.lower()) if a.strip() and " " not in a.strip()]
        return any(len(h.strip()) >= 5 and h.strip()[:2] == name[:2] and h.strip() != name for h in handles)

    def spelled_out(self, terms: Sequence[str], rid: str) -> bool:
        """Do the words name this title outright: most of it, its acronym ("PMPP", "MDP"), or the one-word name
        a "Name: subtitle" title gives itself ("Orca", "Medusa")?"""
        title = self.by_id[rid].title
        acronyms = {stem(a) for a in re.findall(r"\(([A-Za-z0-9-]{2,})\)", title)}
        return self.coverage(terms, rid) >= 0.5 or self.own_name.get(rid) in terms or any(
            t in acronyms or t not in self.vocabulary and self._abbrev_hit(t, rid) for t in terms)

    def coverage(self, terms: Sequence[str], rid: str) -> float:
        """Share of the resource's title weight the terms cover (tie-break: the closest title)."""
        title = set(content_terms(self.by_id[rid].title))
        total = sum(self.weight(t) for t in title)
        return sum(self.weight(t) for t in title if t in terms) / total if total else 0.0

    def section_score(self, terms: Sequence[str], key: tuple[str, str]) -> float:
        return self._group_score(terms, self.section_terms[key] | self.topic_terms[key[0]],
                                 self.section_alias[key], [key[1], key[0]])

    def topics_named(self, text: str) -> list[str]:
        """The topics whose whole name the text says word for word."""
        said = _word_seq(text)
        return [t for t, name in self.topic_seqs.items() if name in said]

    def places_named(self, text: str) -> list[str]:
        """The topics whose whole name, or one of whose sections' whole name, the text says word for word
        ("Advanced topics" is not "advanced concepts")."""
        said = _word_seq(text)
        named = [t for t, name in self.topic_seqs.items() if name in said]
        # "the advanced topic of X": a section name said beside a topic's name is that topic's, or no place
        named += [key[0] for key, name in self.section_seqs.items() if name in said and (not named or key[0] in named)]
        return list(dict.fromkeys(named))

    def topic_score(self, terms: Sequence[str], topic: str) -> float:
        return self._group_score(terms, self.topic_terms[topic], self.topic_alias[topic], [topic])

    def _group_score(self, terms: Sequence[str], names: set[str], alias: dict[str, float], labels: list[str]) -> float:
        weight = {t: self.name_idf.get(t, self.weight(t)) for t in terms}
        total = sum(weight.values())
        if not total:
            return 0.0
        got = 0.0
        for t in terms:
            if t in names or any(_abbreviates(t, _name_words(label)) for label in labels):
                got += weight[t]
            elif t in alias:
                got += 0.8 * alias[t] * weight[t]
        return got / total


def read_ahead(items: Sequence[Resource], read_ids: set[str]) -> bool:
    """Something read among these items sits above a tier with unread items (the planner back-fills it)."""
    tiered = [r for r in items if r.tier is not None]
    top = max((r.tier for r in tiered if r.id in read_ids), default=0)
    return any(r.tier < top and r.id not in read_ids for r in tiered)


def _word_seq(text: str) -> str:
    """The text's stemmed words between spaces, "and" / "&" left out: a name said word for word is a substring."""
    return " " + " ".join(stem(w) for w in words(text) if w not in {"and", "&"}) + " "


def _url_parts(url: str) -> tuple[str, str]:
    if not url:
        return "", ""
    parts = urlsplit(url if "://" in url else "https://" + url)
    host = " ".join(p for p in re.split(r"[.\-]", parts.hostname or "") if p and p not in _HOST_NOISE)
    segments = [s for s in parts.path.split("/") if s][:2]
    path = " ".join(p for s in segments for p in re.split(r"[-_.]", s) if p and p.lower() not in _HOST_NOISE)
    return host, path


# --- the sentence ---------------------------------------------------------------------------------------


@dataclass
class Clause:
    text: str
    # "read" (what they have read), "not-read", "begun" (items started count as read, a whole place does not),
    # "reading" (being read now, or "I've been reading": items and whole groups count as read, a place does
    # not), "maybe" (a bare list, read if it names titles), "want"
    role: str


_THROUGH_VERBS = frozenset({"gone", "went", "worked", "been", "got", "read", "i'm", "im", "am", "are", "is", "be",
                            "made", "make"})
_SENTENCES = re.compile(r"[!?;]+|\.+(?=\s|$)|\n+")
_PARTS = re.compile(r",|\s[-–—]\s|\s[–—]|[–—]\s|\(|\)|:\s|\bbut\b|\bthough\b|\balthough\b|(?=\bwhile\b)"
                    r"|\band\b(?=\s+(?:i|i'm|i'd|i've|i'll|we|now|have|haven't|am|want|would|got)\b)", re.IGNORECASE)
_AFTER = re.compile(r"\b(after|beyond|since|once)\b", re.IGNORECASE)
_NARROWING = frozenset({"especially", "particularly", "mainly", "mostly", "including", "notably"})  # "..., especially A"
_PERFECT = re.compile(r"\b(?:i've|ive|i have|we've|we have)\s+(?:\w+\s+)?been\b", re.IGNORECASE)  # "I've been reading"
_SUBORDINATE = re.compile(r"\b(?:if|because|as|so|when|where|whereas|since)\b(?=\s+(?:i|i'm|i'd|we|my)\b)",
                          re.IGNORECASE)
_PREPOSITIONS = frozenset({"for", "to", "on", "in", "about", "into", "with", "that", "this", "it", "i", "we"})
_EXCEPT = re.compile(r"\b(?:except(?: for)?|excluding|apart from|other than|but not|minus)\b", re.IGNORECASE)
_ANAPHOR = re.compile(r"\b(?:this|these|that|those|it|them)\b(?!\s+(?:guide|list|topic|section|tier)\b)", re.IGNORECASE)
# a wish pointing back at what was read: a pronoun after a preposition ("systems around this", "more on that");
# "a read that focuses" (a relative "that") and "how should I approach them" (the picks) point at nothing read
_POINTS_BACK = re.compile(r"\b(?:about|on|upon|around|like|to|with|beyond|of|in|into|from|after|than|near|behind|past)\s+"
                          r"(?:this|these|that|those|it|them)\b(?!\s+(?:guide|list|topic|section|tier)\b)"
                          # "explore the topic further", "more about this area": the place just read
                          r"|\b(?:this|that|these|those|the same)\s+(?:[a-z]+\s+)?(?:topic|area|subject|field|domain)s?\b"
                          r"|\bthe\s+(?:topic|area|subject|field|domain)\b(?!\s+of\b)", re.IGNORECASE)
# a reading verb's object said as a pronoun only ("I've been reading about them", "I finished it")
_PRONOUN_OBJECT = re.compile(r"\b(?:about|through|into|on|read|finished|covered)\s+(?:them|it|these|those)\b", re.IGNORECASE)
_WHOLE = re.compile(r"\b(?:whole|entire|all of)\b", re.IGNORECASE)
_WHOLE_LIST = re.compile(r"\b(?:whole|entire|all(?: of)? the|everything in the|every(?:thing| item)? (?:of|in) the)\s+"
                         r"(?:guide|list|catalog|catalogue|curriculum)\b", re.IGNORECASE)
_THE_LIST = re.compile(r"\b(?:the|this|your|whole|entire)\s+(?:guide|list|catalog|catalogue|curriculum)\b", re.IGNORECASE)
# "which other books come next in the recommended order guide?": the reading list itself is never the subject
_LIST_STEMS = frozenset(stem(w) for w in ("guide", "list", "catalog", "catalogue", "curriculum"))


def _unquoted(text: str) -> str:
    """The text with quoted spans blanked: a quoted title's words ("How to ...", "Understanding ...") are
    no verbs of the sentence."""

    for start, end, _ in reversed(quoted_spans(text)):
        text = text[:start] + " " + text[end:]
    return text


def _protect_quotes(text: str) -> str:
    """Separators inside a quoted title ("Inside NVIDIA GPUs: Anatomy of ...") do not split the sentence."""

    for start, end, _ in reversed(quoted_spans(text)):
        inner = re.sub(r"[,;:!?()]|\.(?=\s)|\s[-–—]\s", " ", text[start:end])
        text = text[:start] + inner + text[end:]
    return text


# "I've been reading/going through X": the progressive of reading
_READING_FORMS = frozenset({"reading", "studying", "going", "working", "watching", "digging", "learning", "exploring",
                            "diving", "delving"})


# "I'm (currently) reading X", "I'm halfway through X": in the middle of it now
_NOW_SUBJECTS = frozenset({"i'm", "im", "am", "currently", "presently"})
_QUESTION_OPENERS = frozenset({"what", "which", "where", "how", "why", "should", "can", "could", "would", "will", "do",
                               "does", "did", "is", "are"})


_CONTINUE = frozenset({"continue", "continuing", "continues"})


def _continuing(bare: list[str]) -> set[int]:
    """The words of "(as) I continue to work through X" / "I'm continuing with X" said of oneself: still in the
    middle of X. Their "continue" and "work" are no wish. Empty when there is none."""
    for i, w in enumerate(bare):
        if w in _CONTINUE and any(b in LEARNER_WORDS or b in _NOW_SUBJECTS for b in bare[max(0, i - 2):i]):
            nxt = bare[i + 1:i + 3]
            if nxt[:1] == ["to"] and len(nxt) == 2:
                return {i, i + 1, i + 2}
            if nxt[:1] and (nxt[0] in {"with", "through"} or nxt[0] in _READING_FORMS):
                return {i, i + 1}
    return set()


def _reading_now(bare: list[str]) -> bool:
    """The present progressive of reading, said of oneself ("I'm working through X", "... and am currently
    reading X"; "I'm going to read X" is not, nor "what am I reading next"). What it names is only counted where
    it is an item, so "I'm working on a kernel" reads nothing."""
    if not bare or bare[0] in _QUESTION_OPENERS or bare[:2] in (["am", "i"], ["am", "we"]):
        return False
    if _continuing(bare):
        return True
    for i, w in enumerate(bare):
        now = i == 0 or any(b in _NOW_SUBJECTS for b in bare[max(0, i - 3):i])
        if now and w in _READING_FORMS - {"learning"} and (
                w not in {"going", "working"} or bare[i + 1:i + 2] in (["through"], ["over"], ["on"])):
            return True
        if now and (w == "halfway" or w == "middle" and bare[i + 1:i + 2] == ["of"]):
            return True
    return False


_WH_OPENERS = frozenset({"what", "what's", "whats", "which", "where", "how", "why", "who", "when"})
_YES_NO_AUXILIARIES = frozenset({"can", "could", "would", "will", "should", "is", "are", "was", "were", "does", "do",
                                 "did"})
LEARNER_WORDS = frozenset({"i", "i'm", "im", "i've", "ive", "i'd", "me", "my", "we", "we've", "us", "our"})
_CLAUSE_LINKS = frozenset({"now", "that", "because", "as"})


def _about_things(bare: list[str], question: bool) -> int:
    """Where the words about the learner's reading may start. A question that never names the learner asks
    about things ("what instructions are used in TMA?", "which paper covered X first?", "can EAGLE be used in
    production?"), so its done-words say nothing was read, up to a clause of its own ("what comes next now that
    PMPP is done?")."""
    # a question opens with them ("..., which are done?" and "X and Y are done." do not)
    if not (question and bare[:1] and bare[0] in _WH_OPENERS | _YES_NO_AUXILIARIES) or any(w in LEARNER_WORDS for w in bare):
        return 0
    return next((i for i, w in enumerate(bare) if i and w in _CLAUSE_LINKS), len(bare))


def asks_about_gaps(clause: Clause) -> bool:
    """Does a clause ask whether the learner skipped something ("or am I missing a prerequisite?")? A clause
    that states what was read never does."""
    ws = [w.rstrip("?") for w in words(clause.text)]
    return clause.role != "read" and any(w in GAP_QUESTION_WORDS for w in ws) and any(
        w in {"i", "i'm", "im", "me", "my"} for w in ws)


def states_difficulty(clause: Clause) -> bool:
    """Does a clause say the learner struggled ("I got overwhelmed trying to dive into X")? Then the place they
    struggled in is back-filled like a gap they asked about."""
    ws = [w.rstrip("?") for w in words(clause.text)]
    return any(w in DIFFICULTY_WORDS for w in ws) and any(w in {"i", "i'm", "im", "me", "my", "myself"} for w in ws)


def _states_no_focus(text: str) -> bool:
    """"I have no particular focus", "I'm not really focused", "no specific interest yet" (a negated clause)."""
    ws = words(text)
    return any(w in FOCUS_NOUNS or w in {"interest", "interests"} and i and ws[i - 1] in {"particular", "specific", "no"}
               for i, w in enumerate(ws))


def _after(ws: list[str], start: int, word: str) -> str:
    """The word after the first `word` at or after `start`."""
    for j in range(start, len(ws) - 1):
        if ws[j] == word:
            return ws[j + 1]
    return ""


def _role(text: str, question: bool = False) -> str | None:
    """`question`: the text opens a sentence that ends in a question mark."""
    ws = words(_unquoted(text))
    bare = [w.removesuffix("'s") for w in ws]
    if bare[:1] and bare[0] in _YES_NO_OPENERS and bare[1:2] == ["you"]:
        return "want"  # "Have you covered Hopper?", "Did you read X?": asks the assistant, says nothing read
    # "anything else about X besides what I've read?": what follows "else" refers back to the reads, and so does
    # a negation there that names the learner ("other sections not covered by what I've read"; "other books that
    # do not cover GPUs" says no such thing)
    past = next((i for i, w in enumerate(bare) if w in SUBJECT_CUES), len(bare))
    negation_ends = past if any(w in LEARNER_WORDS for w in bare[past:]) else len(bare)
    negated = any(w in NEGATION_WORDS or w.endswith("n't") for w in bare[:negation_ends])
    # "I decided to skip X" says X was not read; "should I skip X?" asks
    negated = negated or not question and any(w in {"skip", "skipping"} for w in bare)
    done = progressive = lost = False
    first = _about_things(bare, question)
    for i, w in enumerate(bare[:past]):
        if i < first:
            continue
        if w == "know" and i > 0 and bare[i - 1] in {"to", "me", "you", "us"}:
            continue  # "I'd like to know", "let me know": asking, not knowing
        if w == "did":
            done = done or (i > 0 and bare[i - 1] in {"i", "we"})  # "I did the GQA paper", not "did it report"
        elif w == "already" and bare[i + 1:i + 2] and bare[i + 1].endswith("ing") and bare[i + 1] in _READING_FORMS:
            continue  # "I'm already diving into X": being read now, not done
        elif w != "read" and w in DONE_WORDS - {"after", "through", "having"}:
            done = True
        elif w == "read":
            before = bare[max(0, i - 4):i]
            after = bare[i + 1:i + 2]
            asking = any(b in {"to", "should", "can", "could", "would", "will", "must", "shall", "might", "do", "does",
                               "what", "which"} for b in before)
            noun = bool(before) and before[-1] in {"a", "an", "the", "first", "next", "good", "great", "another", "my",
                                                   "your", "quick", "light", "further"}  # "a first read"
            if not asking and not noun and after != ["next"]:
                done = True
        elif w in {"i've", "ive", "we've"} or w in {"have", "had"} and i > 0 and bare[i - 1] in {"i", "we"}:
            nxt = next((x for x in bare[i + 1:] if x not in {"already", "just", "now", "also", "mostly", "finally",
                                                           "recently", "since", "pretty", "much"}
                        and not (len(x) > 4 and x.endswith("ly"))), "")  # "I've thoroughly explored X"
            if nxt != "been" and nxt.endswith(("ed", "en", "wn", "ne", "ght")):
                done = True  # "I've knocked out ...": the perfect says it is done
            elif nxt == "been" and _after(bare, i, "been") in _READING_FORMS:
                progressive = True  # "I've been reading X": being read, not necessarily finished
        elif w in {"reading", "readings", "background", "history"} and i > 0 and bare[i - 1] == "my":
            done = True  # "My reading so far: ..."
        elif w == "behind" and bare[i + 1:i + 2] in (["me"], ["us"]):
            done = True  # "... are behind me"
        elif w in {"through", "having"} and i > 0 and bare[i - 1] in _THROUGH_VERBS:
            done = True  # "I've gone through", "I'm through"
        elif w == "over" and i > 0 and bare[i - 1] in {"went", "gone", "been"}:
            done = True  # "I went over X"; "went" alone is no reading ("what went wrong before X")
    if bare[:1] == ["got"] and not done:
        lost = True  # "... and got lost in the advanced material of X": X was begun
    if bare[:1] == ["while"] and bare[1:2] and bare[1] in _READING_FORMS:
        lost = True  # "I got lost while diving into X": X was begun
    # "help me get started" wishes; "I got started on X" began
    began = any(w in BEGUN_WORDS and not (i and bare[i - 1] in {"get", "getting", "gets"}) for i, w in enumerate(bare))
    finished = any(w in FINISHED_WORDS for w in bare)
    begun = (lost or began) and not finished
    if negated:
        return "not-read"
    if begun:
        return "begun"
    if progressive and not finished:
        return "reading"  # "I've been reading X": X is planned past like an item being read now
    if done:
        return "read"
    # being read now is no wish, unless the clause also asks ("I'm reading X so I can learn Y")
    going_on = _continuing(bare)
    if _reading_now(bare) and not any(w in WANT_WORDS - _READING_FORMS - {"now", "into"}
                                      for j, w in enumerate(bare) if j not in going_on) and "?" not in text:
        return "reading"
    if any(w in WANT_WORDS for w in bare) or "?" in text:
        return "want"
    return None


# "ROCm fundamentals: Tier 1", "Attention - Tier 2": the tier belongs to the name before it, not a list of its own
_TIER_AFTER_NAME = re.compile(r"\s*(?::|\s[-–—])\s+(?=tier\s*(?:\d|one|two|three)\b)", re.IGNORECASE)


_BULLET = re.compile(r"^(\s*)(?:[-*•]|\d+[.)])\s+")


def _join_bullets(text: str) -> str:
    """"I've read:" over a bullet list is one sentence listing the bullets ("I've read: A, B, C.").
    Bullets count when indented under a bulleted header, or any bullets under a plain one."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        head = _BULLET.match(line)
        if line.rstrip().endswith(":") and _role(line) == "read":
            depth = len(head.group(1)) if head else -1
            items, j = [], i + 1
            while j < len(lines) and (m := _BULLET.match(lines[j])) and len(m.group(1)) > depth:
                items.append(_BULLET.sub("", lines[j]).strip().rstrip(".,;"))
                j += 1
            if items:
                out.append(f"{line.rstrip()} {', '.join(items)}.")
                i = j
                continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _sentences(text: str) -> list[tuple[str, bool]]:
    """The message's sentences, each with whether it ends in a question mark."""
    out, start = [], 0
    for end in _SENTENCES.finditer(text):
        out.append((text[start:end.start()], "?" in end.group()))
        start = end.end()
    out.append((text[start:], False))
    return out


def _quantifies(phrase: str, linked: Sequence[Resource]) -> bool:
    """Does a quoted phrase speak of a set ("all", "every", "the whole", a tier) in words that none of the titles
    it links to holds?"""
    said = set(words(phrase))
    cues = {"all", "every", "whole", "entire"} & said | ({"tier"} if said & {"tier", "tiers"} else set())
    return bool(cues) and not any(cues <= set(words(r.title)) for r in linked)


_CONTRAST = frozenset({"but", "though", "although"})
_SUBJECTS = LEARNER_WORDS - {"me", "my", "us", "our"} | {"we're"}  # the learner as a clause's subject


def _parts(sentence: str) -> list[tuple[str, bool]]:
    """The sentence's comma/dash parts, each with whether a contrast ("but", "though") opened it."""
    out: list[tuple[str, bool]] = []
    start, contrast = 0, False
    for m in _PARTS.finditer(sentence):
        out.append((sentence[start:m.start()], contrast))
        start, contrast = m.end(), m.group(0).lower() in _CONTRAST
    out.append((sentence[start:], contrast))
    return out


def split_clauses(text: str) -> list[Clause]:
    """Sentences, then comma/dash parts. A part with no verb of its own belongs to the read clause next
    to it (the titles listed after "I've read", or before "... are done"); words after "after" or
    "once" are read; everything else says what the learner wants."""
    clauses: list[Clause] = []
    for sentence, asks in _sentences(_TIER_AFTER_NAME.sub(" ", _protect_quotes(_join_bullets(text)))):
        if not sentence.strip():
            continue
        parts: list[list] = []  # [text, role or None]
        for part, contrast in _parts(sentence):
            if not part or not part.strip():
                continue
            pieces = _AFTER.split(part, maxsplit=1)
            if pieces[0].strip():
                role = _role(pieces[0], asks and not parts)
                first = words(pieces[0])[:1]
                if role is None and contrast and first and first[0] in _SUBJECTS:
                    role = "want"  # "I've read A, but I'm still wondering about B": a clause of its own, not a list
                parts.append([pieces[0].strip(), role])
            if len(pieces) == 3 and content_terms(pieces[2]):
                # "after PMPP if I want X": the object ends where a clause of its own starts
                obj, *rest = _SUBORDINATE.split(pieces[2], maxsplit=1)
                tail = words(obj)
                # "after PMPP" names what was read; "after, for compilers" does not, nor "beyond what I read
                # about PTX", which points back at the reads and asks about their subject
                parts.append([obj.strip(), "want" if not tail or tail[0] in _PREPOSITIONS | {"what"} else "read"])
                if rest and rest[-1].strip():
                    parts.append([rest[-1].strip(), _role(rest[-1]) or "want"])
        # "I've been reading about kernels, especially A, B and C": the intensifier narrows the reading, no wish
        for i in range(1, len(parts)):
            ws = words(parts[i][0])
            if (parts[i][1] == "want" and parts[i - 1][1] in ("read", "reading") and ws and ws[0] in _NARROWING
                    and not any(w in WANT_WORDS for w in ws[1:])):
                parts[i][1] = None
        # "X, Y and Z are done": a read part takes the bare parts before it
        for i in range(len(parts) - 1, 0, -1):
            if parts[i][1] == "read":
                j = i - 1
                while j >= 0 and parts[j][1] is None:
                    parts[j][1] = "read"
                    j -= 1
        if not asks and parts and parts[0][1] is None and any(role == "want" for _, role in parts):
            # "A, B and all the Tier 1 items of X, I'm interested in Y.": the names before the wish are a bare
            # list; "X, I'd like to read it next" names the wish's object
            first = next(i for i, (_, role) in enumerate(parts) if role is not None)
            if not _ANAPHOR.search(parts[first][0]):
                for part in parts[:first]:
                    part[1] = "maybe"
        if not any(role == "want" for _, role in parts) and not asks:
            # "PMPP and the CUDA guide under my belt.": a sentence that asks nothing lists what was read;
            # a question without a verb ("Like a section about memory?") still asks
            parts = [[t, "maybe" if role is None else role] for t, role in parts]
        merged: list[Clause] = []
        for text_, role in parts:
            if not text_:
                continue
            if role in (None, "maybe") and merged and merged[-1].role in ("read", "not-read", "begun", "reading"):
                merged[-1].text += ", " + text_
                continue
            merged.append(Clause(text_, role or "want"))
        clauses += merged
    return clauses


@dataclass(frozen=True)
class Mention:
    """One phrase of the sentence and the catalog resources it names."""

    phrase: str
    resources: tuple[Resource, ...]
    group: Group | None = None

    @property
    def label(self) -> str:
        if self.group is not None:
            return f"{self.group.label} ({len(self.resources)})"
        return "; ".join(r.title for r in self.resources)


@dataclass
class Understanding:
    """What the planner is told: resources counted as read, and the topics the learner asks about."""

    read: list[Resource]
    mentions: list[Mention]
    interest: dict[str, float]  # topic → 0..1
    interest_text: str
    unplaced: list[str] = field(default_factory=list)  # read mentions that link to nothing ("I couldn't place")
    subject: str = ""  # "anything else about X": X, when the learner asks across the guide by subject
    subject_ranking: list[str] = field(default_factory=list)  # resource ids about X, best first
    named: list[Resource] = field(default_factory=list)  # named beside the question, not counted as read: never picked
    reading_now: list[Mention] = field(default_factory=list)  # of `mentions`: being read now, planned past like a read
    gap: bool = False  # "did I skip something?", "I got lost in X": the places asked about are back-filled, not continued

    @property
    def read_ids(self) -> set[str]:
        return {r.id for r in self.read}

    @property
    def focus_topics(self) -> list[str]:
        return [t for t, s in sorted(self.interest.items(), key=lambda kv: -kv[1]) if s >= FOCUS_SCORE]


# a subordinate clause with its own subject ("as it seems", "because they were"): not part of a name
_CLAUSE_OF_ITS_OWN = re.compile(r"\b(?:as|because|whereas|since|so)\s+(?:it|it's|its|they|they're|he|she|this|these)\b",
                                re.IGNORECASE)
_LIST_SPLIT = re.compile(r",|&|\band\b|\bplus\b|\bas well as\b|\balong with\b|\bwith\b|/|\bthen\b", re.IGNORECASE)
_URL = re.compile(r"https?://\S+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.IGNORECASE)


class Reader:
    """Understands one catalog's reading-history and interest sentences; cheap per call once built."""

    def __init__(self, resources: list[Resource], embed_query: Callable[[str], np.ndarray] | None = None,
                 embed_documents: Callable[[Sequence[str]], np.ndarray] | None = None,
                 extra_authors: dict[str, str] | None = None, resource_threshold: float = 0.6,
                 group_threshold: float = 0.6, english: set[str] | None = None, near_threshold: float = 0.5) -> None:
        self.index = CatalogIndex(resources, extra_authors or {})
        self.english = english
        self.embed_query = embed_query
        self.embed_documents = embed_documents
        self.resource_threshold = resource_threshold
        self.group_threshold = group_threshold
        self.near_threshold = near_threshold
        self._section_vectors: np.ndarray | None = None
        self._item_vectors: np.ndarray | None = None
        self._dense_top = 0.0
        self.linker = Linker(self.index)
        self.speller = Speller(resources, english, rule_words=RULE_WORDS)
        self._understood: dict[str, Understanding] = {}  # routing and planning read the same sentence once
        self._joined_names = _joined_name_patterns([*self.index.topics, *(key[1] for key in self.index.sections)])

    @property
    def resources(self) -> list[Resource]:
        return self.index.resources

    # --- history -----------------------------------------------------------------------------------

    def forget(self) -> None:
        """Drop remembered readings of sentences (benchmarks time the full reading each pass)."""
        self._understood.clear()

    def understand(self, text: str) -> Understanding:
        hit = self._understood.get(text)
        if hit is None:
            hit = self._understand(text)
            if len(self._understood) > 256:
                self._understood.clear()
            self._understood[text] = hit
        return hit

    def _understand(self, text: str) -> Understanding:
        clauses = split_clauses(quote_titles(self.speller.mend(text), self.resources))
        asks = any(c.role == "want" for c in clauses)
        mentions: list[Mention] = []
        unplaced: list[str] = []
        aside: list[Resource] = []
        now: list[Mention] = []
        for i, clause in enumerate(clauses):
            said = clause.text
            if clause.role in ("read", "reading") and i and _PRONOUN_OBJECT.search(said) and not self.mentions(said):
                # "I'm excited about X. I've been reading about them for a bit": the pronoun is the last clause's X
                said = f"{said}: {clauses[i - 1].text}"
            if clause.role == "read":
                found, missed, near = self.mentions_placed(said)
                mentions += found
                unplaced += missed
                aside += near
            elif clause.role == "begun":
                mentions += self._begun_read(clause.text)
            elif clause.role == "reading":
                found, _, near = self.mentions_placed(said)
                items, whole = self._being_read(said, found)
                aside += near
                mentions += items + whole
                now += items
                # a place being read now is wanted; one "I've been reading" is where they have been (a gap)
                if not items and not whole and not _PERFECT.search(clause.text):
                    clause.role = "want"
            elif clause.role == "maybe" and not asks:  # a search query, not a history
                clause.role = "want"
            elif clause.role == "maybe":  # a bare list counts only where it spells out titles or a tier
                found, _, near = self.mentions_placed(clause.text)
                aside += near
                # a group only in a list of names alone: "My curiosity is piqued by the X section" reads nothing
                covered = set(_GROUP_STEMS) | set(TIER_NUMBERS) | self.index.place_terms
                covered |= {t for m in found if m.group is None for r in m.resources for t in self.index.strong[r.id]}
                bare = all(t in covered or kind_of(t) for t in content_terms(clause.text))
                # a group narrowed by kind ("all the paper resources of the X section") is a group too
                named = [m for m in found if bare and (m.group is not None or len(m.resources) > 1) or
                         m.group is None and all(self.index.spelled_out(content_terms(m.phrase), r.id) for r in m.resources)]
                mentions += named
                # "FP8 TMA. What next?": a lone nickname is too weak to count as read, too plain to recommend
                aside += [r for m in found if bare and m not in named and m.group is None and len(m.resources) == 1
                          and not all(self.index.generic(t) for t in content_terms(m.phrase)) for r in m.resources]
                if not named:
                    clause.role = "want"
        read: dict[str, Resource] = {}
        for m in mentions:
            for r in m.resources:
                read.setdefault(r.id, r)
        want = " ".join(c.text for c in clauses if c.role == "want")
        done_places = [m.group for m in mentions if m.group is not None and m.group.topic]
        subject, ranking = self.subject(want, set(read), done_places)
        interest = {} if subject else self.interest(want)
        not_read = " ".join(c.text for c in clauses if c.role in ("not-read", "begun", "reading"))
        for m in mentions:  # a title read there names no place ("I started X: Part 1 and got lost in Y" is about Y)
            if m.group is None and m.phrase.strip():
                not_read = not_read.replace(m.phrase.strip(), " ")
        # "no particular focus yet, but I'd love to get started on it": the reads are where they have been, and
        # a place they have not started is no wish either; only a wish that names its own place gives a focus
        unfocused = any(c.role == "not-read" and _states_no_focus(c.text) for c in clauses)
        if not subject and not_read and not unfocused:
            # "I haven't started the X section yet, what next?": where they have not been is where they go
            # ... unless they read ahead in it: then it is where they skipped, and the planner back-fills it
            gaps = {topic: 1.0 for topic in self.index.places_named(not_read)
                    if not read_ahead([r for r in self.resources if r.topic == topic], set(read))}
            if gaps and self._vague(want):  # "... explore some good articles to deepen my understanding?"
                interest = {t: min(s, FOCUS_SCORE - 0.01) for t, s in interest.items()}
            if not any(s >= FOCUS_SCORE for s in interest.values()):
                interest.update(gaps)
        # "systems around this": the topic just read, unless the wish names its own place ("the X topic ... this area")
        if read and not subject and not unfocused and _POINTS_BACK.search(want) and not self.index.places_named(want):
            top = Counter(r.topic for r in read.values()).most_common(1)[0][0]
            interest = {**interest, top: 1.0}
        named_aside = [r for r in dict.fromkeys(aside) if r.id not in read]
        # struggling is a gap only where there is something to back-fill: a wished-for place read ahead in
        struggled = any(states_difficulty(c) for c in clauses) and any(
            s >= FOCUS_SCORE and read_ahead([r for r in self.resources if r.topic == t], set(read))
            for t, s in interest.items())
        return Understanding(sorted(read.values(), key=lambda r: r.position), mentions, interest, want,
                             unplaced=list(dict.fromkeys(unplaced))[:3], subject=subject, subject_ranking=ranking,
                             named=named_aside, reading_now=now,
                             gap=struggled or any(asks_about_gaps(c) for c in clauses))

    def _being_read(self, text: str, found: list[Mention]) -> tuple[list[Mention], list[Mention]]:
        """What a clause of reading now counts as read, of the mentions `found` in it: the items it names (by
        any of their names; after "working on", which takes projects too, only a title spelled out), and the
        groups it names whole ("I've been reading the whole X topic")."""
        project = re.search(r"\bworking on\b", text, re.IGNORECASE) is not None
        items = [m for m in found if m.group is None and (not project or all(
            self.index.spelled_out(content_terms(m.phrase), r.id) for r in m.resources))]
        # "I've been reading the X tier" has spent its time there: the tier is planned past like a whole one
        perfect = _PERFECT.search(text) is not None
        return items, [m for m in found if m.group is not None and (
            _WHOLE.search(m.phrase) or perfect and self.index.places_named(m.phrase))]

    def _begun_read(self, text: str) -> list[Mention]:
        """What a clause of beginning counts as read: "I jumped into DeepGEMM and the advanced material" reads
        DeepGEMM (a title spelled out), not the place; a place's name is the place ("jumped into
        FlashAttention") unless a version names the item, or the whole title is said ("Matrix Multiplication on
        Blackwell: Part 1" is that post, not the Matrix Multiplication topic); "I started on the whole X topic"
        reads X."""
        def read(m: Mention) -> bool:
            if m.group is not None:
                return bool(_WHOLE.search(m.phrase))
            if len(m.resources) != 1:
                return False
            terms, rid = content_terms(m.phrase), m.resources[0].id
            return self.index.spelled_out(terms, rid) and (
                not self.index.places_named(m.phrase) or bool(re.search(r"[A-Za-z]-?\d", m.phrase))
                or self.index.coverage(terms, rid) >= WHOLE_TITLE)
        return [m for m in self.mentions(text) if read(m)]

    def _named_within(self, tail: str, members: list[Resource]) -> set[str]:
        """The ids among `members` an "except ..." names: a tier, a section, or resources."""
        tiers = _tiers(words(tail))
        terms = [t for t in _naming(tail) if self.index.known(t)]
        if not terms:
            return {r.id for r in members if r.tier in tiers}
        sections = {(r.topic, r.section) for r in members}
        named = {key for key in sections if self.index.section_score(terms, key) >= self.group_threshold}
        return {r.id for r in members if (not tiers or r.tier in tiers) and (
            (r.topic, r.section) in named if named else self.index.resource_score(terms, r.id) >= self.resource_threshold)}

    def named(self, text: str) -> list[Resource]:
        """Everything a phrase names, read as a list of what was read (the API's free-text `read`)."""
        found = {r.id: r for m in self.mentions(text) for r in m.resources}
        return sorted(found.values(), key=lambda r: r.position)

    def mentions(self, text: str) -> list[Mention]:
        """The resources a history clause names, phrase by phrase."""
        return self.mentions_placed(text)[0]

    def mentions_placed(self, text: str) -> tuple[list[Mention], list[str], list[Resource]]:
        """The mentions of a history clause, the name-like ones that link to nothing, and the items such a
        name half-spells (`near_miss`: not counted as read, never picked).

        Quoted spans are linked first (mentions.Linker: the title or group name they spell) and taken out
        of the clause; the rest goes through the phrase rules below."""
        quoted: list[Mention] = []
        unplaced: list[str] = []
        near: list[Resource] = []
        for start, end, inner in reversed(quoted_spans(text)):
            pieces = [p.strip() for p in re.split(r"/|;", inner) if p.strip()]
            links = [self.linker.link_title(p) for p in pieces] if len(pieces) > 1 else []
            if links and all(lk is not None and lk.group is None for lk in links):
                # "A/B/C" in one pair of quotes: a list, when every piece is a title of its own
                quoted[:0] = [Mention(p, lk.resources) for p, lk in zip(pieces, links) if lk is not None]
                text = text[:start] + " , " + text[end:]
                continue
            link = self.linker.link_title(inner)
            if link is not None and link.group is not None:
                continue  # a quoted topic or section name: whether all of it was read is the phrase rules' call
            if link is not None and _quantifies(inner, link.resources):
                continue  # "all tier 1 matrix multiplication tutorials" names a group, not "… Part 1"
            if link is not None:
                quoted.insert(0, Mention(inner, link.resources, link.group))
                by = _BY_NAMES.match(text[end:])
                text = text[:start] + " , " + text[end + (by.end() if by else 0):]
            elif looks_like_a_name(inner) and not self._mentions(inner, []):
                unplaced.insert(0, inner[:80])
                text = text[:start] + " , " + text[end:]
        return quoted + self._mentions(text, unplaced, near), unplaced, near

    def near_miss(self, phrase: str) -> Resource | None:
        """The one item a name that links to nothing half-spells ("Massive GPU" for "Programming Massively
        Parallel Processors"): too weak to count as read, too close to recommend to someone who says they
        read it. None when the words are the field's own ("GPU", "kernel") or fit two items alike."""
        terms = [t for t in content_terms(phrase) if self.index.known(t)]
        if not any(not self.index.generic(t) for t in terms):
            return None
        scored = sorted(((self.index.resource_score(terms, r.id), r.position, r) for r in self.resources),
                        key=lambda x: (-x[0], x[1]))
        (best, _, res), (second, _, _) = scored[0], scored[1]
        if best < self.near_threshold or second >= best:
            return None
        return res

    def _mentions(self, text: str, unplaced: list[str], near: list[Resource] | None = None) -> list[Mention]:
        from assistant.mentions import looks_like_a_name

        out: list[Mention] = []
        for url in _URL.findall(text):
            key = url_key(url.rstrip(".,"))
            hit = [r for r in self.resources if r.url and url_key(r.url) == key]
            if hit:
                out.append(Mention(url, tuple(hit)))
        whole = bool(_WHOLE_LIST.search(text))
        text = _THE_LIST.sub(" ", _URL.sub(" ", text))
        head, *rest = _EXCEPT.split(text, maxsplit=1)
        if whole:  # "the whole guide except Tier 3"
            everything = [Mention("the whole guide", tuple(self.resources), Group("", None, None, "the whole guide"))]
            if not rest:
                return everything
            minus = self._named_within(rest[0], self.resources)
            return [Mention(f"the whole guide except{rest[0]}", tuple(r for r in self.resources if r.id not in minus))]
        if rest:  # "the whole topic except Blackwell": what the rest names within it is not read
            out = []
            for m in self.mentions(head):
                minus = self._named_within(rest[0], list(m.resources))
                keep = tuple(r for r in m.resources if r.id not in minus)
                if keep:
                    out.append(Mention(f"{m.phrase} except{rest[0]}", keep))
            return out
        for pattern in self._joined_names:  # "Distributed & Multi-GPU" is one name, not a list of two
            text = pattern.sub(lambda m: _AMPERSAND_OR_AND.sub(" ", m.group(0)), text)
        # "FlashAttention-2 as it seems to be the main topic": a clause of its own ends the name
        segments = [_CLAUSE_OF_ITS_OWN.split(s, maxsplit=1)[0].strip() for s in _LIST_SPLIT.split(text) if s and s.strip()]
        segments = [s for s in segments if s]
        shared_kind = None
        if segments:  # "the FP8 and NVFP4 posts": a trailing plural kind covers the list
            plural = [w for w in words(segments[-1]) if kind_of(w) and w.endswith("s") and kind_of(w) != "docs"]
            shared_kind = kind_of(plural[-1]) if plural else None
        last = words(segments[-1])[-1:] if segments else []  # the list's head noun ends it, not "X section of Y"
        nouns = [w for w in last if (w in GROUP_WORDS or kind_of(w)) and (w.endswith("s") or w in {"tier", "section", "topic"})]
        if segments and words(segments[-1])[:1] in (["the"], ["all"], ["every"], ["whole"], ["entire"], ["my"]) and not (
                nouns and nouns[0].endswith("s")):  # "vLLM, SGLang and the whole X topic": a phrase of its own
            nouns = []
        for i, seg in enumerate(segments[:-1]):  # "the Triton and CUTLASS tiers": the last noun covers the list
            ws = words(seg)
            if nouns and not any(w in GROUP_WORDS or kind_of(w) for w in ws) and _tier(ws) is None:
                segments[i] = f"{seg} {nouns[0]}"
        for i in range(1, len(segments)):  # "everything by A and B": the quantifier covers the list
            before, ws = words(segments[i - 1]), words(segments[i])
            if any(w in {"everything", "all", "every"} for w in before) and not any(w in GROUP_WORDS for w in ws):
                if not self._member_named(segments[i - 1], segments[i]) and not self._title_named(segments[i]):
                    segments[i] = f"all {segments[i]}"
        for i in range(1, len(segments)):  # "FlashInfer and its design post": its = the one before
            if any(w in {"its", "their"} for w in words(segments[i])):
                segments[i] = " ".join(_naming(segments[i - 1])) and f"{' '.join(words(_object_of(segments[i - 1])))} {segments[i]}"
        for i, seg in enumerate(segments):  # "the Tier 1 and Tier 2 storage material": one topic, two tiers
            if _tier(words(seg)) is not None and not _naming(_object_of(seg)):
                later = next((s for s in [*segments[i + 1:], *reversed(segments[:i])]
                              if _tier(words(s)) is not None and _naming(_object_of(s))), None)
                if later is not None:
                    borrowed = words(_object_of(later))
                    tier_words = {w for w in borrowed if w in {"tier", "tiers"} or w in TIER_NUMBERS}
                    segments[i] = f"{seg} " + " ".join(w for w in borrowed if w not in tier_words)
        for seg in segments:
            context = {r.id for m in out for r in m.resources}
            mention = self.resolve(seg, fallback_kind=shared_kind, context=context)
            if mention is not None:
                out.append(mention)
            else:
                if looks_like_a_name(_object_of(seg).strip()) and any(
                        not self.index.known(t) for t in content_terms(_object_of(seg))):
                    unplaced.append(_object_of(seg).strip()[:80])
                # "massive gpu" (lower case, no name to place) still half-spells one item: never recommended back
                if near is not None and (close := self.near_miss(_object_of(seg))) is not None:
                    near.append(close)
        return out

    def _member_named(self, group_phrase: str, phrase: str) -> bool:
        """"all the repo resources of the X section, vLLM, SGLang": a name that is one item of the group just
        named lists that group's members; it does not take the group's "all" ("all vLLM")."""
        group = self.resolve(group_phrase)
        if group is None or len(group.resources) < 2:
            return False
        members = {r.id for r in group.resources}
        one = self.resolve(phrase, context=members)
        return one is not None and len(one.resources) == 1 and one.resources[0].id in members

    def _title_named(self, phrase: str) -> bool:
        """"..., TritonBench, and all the site resources of Y": a phrase that spells out one title alone names
        that item; it does not take the quantifier before it ("all TritonBench")."""
        one = self.resolve(phrase)
        return (one is not None and one.group is None and len(one.resources) == 1
                and self.index.spelled_out(content_terms(phrase), one.resources[0].id))

    def _plural(self, word: str) -> bool:
        """A plural head noun ("the X tutorials") that is not itself a title word ("ThunderKittens")."""
        return (len(word) > 3 and word.endswith("s") and not word.endswith("ss") and stem(word) != word
                and word not in self.index.surface)

    def resolve(self, phrase: str, fallback_kind: str | None = None,
                context: set[str] | None = None) -> Mention | None:
        """One noun phrase → the resources it names (a title, an author's post, a tier, a section...)."""
        phrase = _object_of(phrase)
        ws = [w.removesuffix("'s") for w in words(phrase)]
        raw = words(phrase)
        kinds = {kind_of(w) for w in ws if kind_of(w)}
        plural_kind = any(kind_of(w) and w.endswith("s") and kind_of(w) != "docs" for w in ws)
        tiers = _tiers(ws)
        tier = min(tiers) if tiers else None
        count: int | None = None  # a spelt-out count ("both", "three") was ablated away: no help on generated data
        if count is None:
            for i, w in enumerate(ws[:-1]):
                if (w.isdigit() and (kind_of(ws[i + 1]) or ws[i + 1] in GROUP_WORDS) and ws[i + 1].endswith("s")
                        and not (i and ws[i - 1] == "tier") and not re.search(rf"[-\w]{w}\b", phrase)):
                    count = int(w)
        heads = [w for w in ws if w not in STOP and w not in DONE_WORDS and w not in WANT_WORDS]
        grouped = tier is not None or any(w in GROUP_WORDS for w in ws) or plural_kind or (count or 0) > 1 or (
            bool(heads) and self._plural(heads[-1]))
        terms = [t for t in content_terms(phrase) if not (t.isdigit() and int(t) in tiers)]
        terms = [t for t in terms if t not in {str(count)} and self.index.known(t)]
        possessive = [stem(w[:-2]) for w in raw if w.endswith("'s")]
        if not terms and not (grouped and tier is not None):
            return None
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        if grouped:
            return self._group(phrase, terms, tiers, kind, count)
        # a capitalised word the catalog does not know is part of the name said ("the Zorblax Handbook"):
        # it lowers every score instead of being dropped, so the known rest is not taken for a title
        strangers = [w for w in re.findall(r"[A-Za-z][\w-]*", phrase) if re.search(r"[A-Z]", w)
                     and (base := w.lower().removesuffix("'s")) not in STOP and not kind_of(base)
                     and not self.index.known(stem(base))]  # a kind word ("the GPU Talk") is said, not strange
        unknown = self.index.max_idf * len(strangers)
        return self._single(phrase, terms, kind or fallback_kind, possessive, context or set(), unknown)

    def _single(self, phrase: str, terms: list[str], kind: str | None, possessive: list[str],
                context: set[str], unknown: float = 0.0) -> Mention | None:
        scored = []
        total = sum(self.index.weight(t) for t in terms) or 1.0
        for res in self.resources:
            s = self.index.resource_score(terms, res.id) * total / (total + unknown)
            handles = [p for p in possessive if p not in self.index.strong[res.id] and self.index.handle_of(p, res.id)]
            s += sum(0.5 * self.index.weight(p) for p in handles) / total
            if possessive and not handles and not any(p in self.index.strong[res.id] for p in possessive):
                s *= 0.7  # "Simon's post" names its author
            if kind and res.kind != kind:
                s *= 0.75
            scored.append((s, -self.index.missing_numbers(terms, res.id), self.index.coverage(terms, res.id), res))
        scored.sort(key=lambda x: (-x[0], -x[1], -x[2], x[3].position))
        best = scored[0]
        # "the three precision posts (FP8, NVFP4, ...)": a name that fits one just mentioned means that one
        again = [x for x in scored if x[3].id in context and x[0] >= max(self.resource_threshold, best[0] - 0.25)]
        strong = self.index.strong
        if again and not (set(terms) <= strong[best[3].id] and not set(terms) <= strong[again[0][3].id]):
            best = again[0]  # ... unless the words spell the best one's name and not the one just mentioned
        if best[0] < self.resource_threshold or not any(
                t in self.index.strong[best[3].id] or self.index._abbrev_hit(t, best[3].id) for t in terms):
            return None  # a partial word ("intros") alone names nothing
        return Mention(phrase, (best[3],))

    def _group(self, phrase: str, terms: list[str], tiers: frozenset[int], kind: str | None,
               count: int | None) -> Mention | None:
        idx = self.index
        tier = min(tiers) if len(tiers) == 1 else None  # one tier names the label; several only filter

        def at(res: Resource) -> bool:
            return not tiers or res.tier in tiers

        members: list[Resource] = []
        group: Group | None = None
        if not terms:  # "all of Tier 1", "every Tier 2 paper": across the guide
            members = [r for r in self.resources if at(r)]
            names = " and ".join(f"Tier {t}" for t in sorted(tiers))
            group = Group("", None, tier, f"every {names} item of the guide")
        else:
            sections = sorted(((idx.section_score(terms, key), key) for key in idx.sections), key=lambda x: -x[0])
            topics = sorted(((idx.topic_score(terms, t), t) for t in idx.topics), key=lambda x: -x[0])
            res_scores = sorted(((idx.resource_score(terms, r.id), r) for r in self.resources), key=lambda x: (-x[0], x[1].position))
            best_res = res_scores[0][0] if res_scores else 0.0
            (s_score, s_key), (t_score, t_name) = sections[0], topics[0]
            if tiers:
                # "the Tier 2 profiling material": the topic (or section) at that tier
                cands = [(sc, key) for sc, key in sections if any(at(r) for r in idx.sections[key])]
                t_cands = [(sc, t) for sc, t in topics if any(at(r) and r.topic == t for r in self.resources)]
                s_score, s_key = cands[0] if cands else (0.0, s_key)
                t_score, t_name = t_cands[0] if t_cands else (0.0, t_name)
            if max(s_score, t_score) >= self.group_threshold and max(s_score, t_score) >= best_res - 0.05:
                if t_score >= s_score - 1e-9:  # the section's own name adds nothing: the whole topic
                    members = [r for r in self.resources if r.topic == t_name and at(r)]
                    names = " and ".join(f"Tier {t}" for t in sorted(tiers))
                    group = Group(t_name, None, tier, f"{t_name} · {names}" if tiers else f"all of {t_name}")
                else:
                    members = [r for r in idx.sections[s_key] if at(r)]
                    group = Group(s_key[0], s_key[1], tier, place_label(s_key[0], s_key[1], members[0].tier if members else tier))
            elif count is not None and best_res >= self.resource_threshold:
                # "the three precision posts", "both TMA tutorials": the best-named `count`, kind first
                ranked = [r for sc, r in res_scores if sc >= 0.4 and at(r) and any(t in idx.strong[r.id] for t in terms)]
                if kind is not None:
                    ranked = sorted(ranked, key=lambda r: r.kind != kind)
                members = ranked[:count]
            elif best_res >= self.resource_threshold and any(
                    t in idx.strong[r.id] or idx._abbrev_hit(t, r.id) for _, r in res_scores[:1] for t in terms):
                cut = max(self.resource_threshold, 0.8 * best_res)
                members = [r for s, r in res_scores if s >= cut and at(r)]
                if count is None:
                    kind = None  # "Kapil Sharma's posts": a loose kind word, the names decide
            else:
                return None
        if kind is not None:
            narrowed = [r for r in members if r.kind == kind]
            # a loose kind word ("both ... posts" for a post and a paper) narrows only a larger set
            if narrowed and (count is None or len(narrowed) >= count):
                members = narrowed
        if count is not None and len(members) > count:
            ranked = sorted(members, key=lambda r: (-idx.resource_score(terms, r.id), idx.missing_numbers(terms, r.id),
                                                    -idx.coverage(terms, r.id), r.position)) if terms else members
            members = sorted(ranked[:count], key=lambda r: r.position)
        if not members:
            return None
        return Mention(phrase, tuple(sorted(members, key=lambda r: r.position)), group if kind is None and count is None else None)

    # --- interest ------------------------------------------------------------------------------------

    def interest(self, text: str) -> dict[str, float]:
        """How strongly the words point at each topic (0..1): catalog words (names count fully, titles
        and notes less), blended with embedding similarity to the sections' descriptions."""
        said = self._known_terms(text)
        specific = [t for t in said if not self.index.generic(t)]
        terms = specific or said  # "Triton kernels": the words every topic uses say nothing of where to go
        if not terms:
            return {}
        idx = self.index
        lexical: dict[str, float] = {}
        for topic in idx.topics:
            best_section = max(idx.section_score(terms, key) for key in idx.sections if key[0] == topic)
            items = [r for r in self.resources if r.topic == topic]
            # a title speaks for a topic through its names ("NCCL", "FP8"), not through ordinary words it
            # happens to use ("Multi-Head" is no answer to "where should I head next")
            named = [t for t in terms if self._name_like(t)]
            titles = max((idx.resource_score(named, r.id) for r in items), default=0.0) if named else 0.0
            lexical[topic] = max(idx.topic_score(terms, topic), best_section, 0.4 * titles)
            # words said together that a title or note of the topic also has together ("low precision")
            # (or a topic's or section's name: "generated kernels"), field-wide words included
            pairs = [f" {a} {b} " for a, b in itertools.pairwise(terms)]
            said_pairs = [f" {a} {b} " for a, b in itertools.pairwise(said)]
            if any(p in idx.stem_text[r.id] for p in pairs for r in items) or any(
                    p in idx.name_text[key] for p in said_pairs for key in idx.sections if key[0] == topic):
                lexical[topic] += 0.5
        scores = dict(lexical)
        dense = self._dense_interest(" ".join(w for w in words(text) if stem(w) in terms or w in terms))
        if dense and max(lexical.values(), default=0.0) == 0.0 and self._dense_top < 0.5:
            dense = {}  # ordinary words alone, and no section close to them: no focus
        if dense:
            # the embedding ranks the topics the words name; it names a topic alone only when no word does
            any_lexical = max(lexical.values(), default=0.0) > 0
            scores = {t: 0.5 * lexical.get(t, 0.0) + 0.5 * dense.get(t, 0.0) * (lexical.get(t, 0.0) > 0 or not any_lexical)
                      for t in idx.topics}
        top = max(scores.values(), default=0.0)
        if top < 0.2:
            return {}
        normalised = {t: s / top for t, s in scores.items() if s > 0}
        if NAMED_TOPIC_FIRST:
            # a topic called by its whole name ("the AMD & Alternative Hardware topic") is the one asked for;
            # topics the other words touch stay below a focus
            said_all = set(said) | {stem(w) for w in words(text)}
            named = [t for t in idx.topics if idx.topic_terms[t] and idx.topic_terms[t] <= said_all]
            if named:
                return {t: 1.0 if t in named else min(0.49, s) for t, s in normalised.items()} | {t: 1.0 for t in named}
        if sum(1 for s in normalised.values() if s >= 0.5) > (3 if specific else 1):
            return {}  # words every topic shares ("scaling", "training", "GPU"): no focus of their own
        return normalised

    def subject(self, want: str, read_ids: set[str], done_places: Sequence[Group] = ()) -> tuple[str, list[str]]:
        """"Anything else about X?": X, and the unread items whose title (then authors, then note) names it,
        across every topic, best first. Only when the learner asks past what they have (SUBJECT_CUES) and
        names something more specific than the whole field. The words of a place read whole are where they
        have been, not what they ask about ("I've read the Tensor Cores topic; anything else like CUTLASS in
        Tensor Cores?" asks about CUTLASS)."""
        ws = [w.removesuffix("'s") for w in words(want)]
        # "Have you covered Hopper in the guide?", "Does the guide cover X?": whether the guide has X at all
        covers = any(w in _COVER_VERBS for w in ws) and any(w in _YES_NO_OPENERS for w in ws)
        text = _THE_LIST.sub(" ", want)
        # "anything related to Training outside what I've read? Any resources to improve my understanding?": the
        # subject is what follows "about / on / related to", when the wish has such an object at all
        objects = " ".join(m.group(1) for m in _ASKED_ABOUT.finditer(text))
        # "I've read the whole X topic ... want to know more about Fusion": past a whole topic, "more" asks past it
        # ("I've done the X tier. More on <its topic>?" goes on in the topic)
        whole_topic = any(g.topic and g.section is None and g.tier is None for g in done_places)
        object_cues = OBJECT_SUBJECT_CUES | ({"more"} if whole_topic else set())
        cued = any(w in SUBJECT_CUES for w in ws) or (
            any(w in object_cues for w in ws) and bool(self._known_terms(objects)))
        if not covers and not cued:
            return "", []
        text = objects if self._known_terms(objects) else text
        said = [t for t in self._known_terms(text) if t not in _LIST_STEMS]
        terms = [t for t in said if not self.index.generic(t)]
        been = {t for g in done_places for t in content_terms(f"{g.topic} {g.section or ''}")}
        terms = [t for t in terms if t not in been] or terms
        named = set().union(*(self.index.topic_terms[t] for t in self.index.topics_named(want)))
        if not terms or named and not any(self._name_like(t) for t in terms if t not in named):
            return "", []  # "other resources on <a whole topic>": that topic is the focus, not a subject
        idx = self.index
        total = sum(idx.weight(t) for t in terms)
        scored = []
        for res in self.resources:
            if res.id in read_ids:
                continue
            title = set(content_terms(res.title)) | idx._joined(res.title)
            got = sum(idx.weight(t) * (1.0 if t in title else 0.7 if t in idx.strong[res.id] else
                                       0.4 if t in idx.weak[res.id] else 0.0) for t in terms)
            if got > 0:
                scored.append((got / total, res))
        if not scored:
            return "", []
        scored.sort(key=lambda x: (-x[0], x[1].tier if x[1].tier is not None else 99, x[1].position))
        surface = [w for w in words(text) if stem(w.removesuffix("'s")) in terms or w in terms]
        return " ".join(dict.fromkeys(surface)) or " ".join(terms), [r.id for _, r in scored]

    def _vague(self, want: str) -> bool:
        """A wish that names no place of the guide and no product or paper: the topics its ordinary words
        touch are weaker evidence of a focus than a place the learner says they have not started."""
        return not self.index.places_named(want) and not any(self._name_like(t) for t in self._known_terms(want))

    def _known_terms(self, text: str) -> list[str]:
        """The text's content terms in the catalog's canonical form, those the catalog knows, once each."""
        return [t for t in dict.fromkeys(self.index.canon(t) for t in content_terms(text)) if self.index.known(t)]

    def _name_like(self, term: str) -> bool:
        """A product or paper name rather than an ordinary word: not in the embedder's English word list
        when there is one, else written in the catalog in capitals, camel case or with digits."""
        if term in self.index.name_like:
            return True
        return self.english is not None and not self.english_sample(term)

    def english_sample(self, term: str) -> list[str]:
        # the stem's final "i" may stand for a "y" ("efficientli": efficiently)
        undone = (term[:-1] + "y",) if term.endswith("i") else ()
        return [w for w in (term, term + "s", term + "e", term + "es", term + "ing", term + "ed", term + "y", *undone)
                if w in self.english]

    def section_descriptions(self) -> list[str]:
        out = []
        for topic, section in self.index.sections:
            out.append(f"{topic}: {section}")
        return out

    def item_descriptions(self) -> list[str]:
        return [f"{r.topic}: {r.section}: {r.title}. {r.note}" for r in self.resources]

    def _dense_interest(self, text: str) -> dict[str, float]:
        """Embedding similarity of the interest to each topic: its best section name or item (title + note),
        so a goal in plain words ("how training is split across GPUs") finds the section that teaches it."""
        if self.embed_query is None or self.embed_documents is None or not text.strip():
            return {}
        if self._section_vectors is None or self._item_vectors is None:
            self._section_vectors = np.asarray(self.embed_documents(self.section_descriptions()), dtype=np.float32)
            self._item_vectors = np.asarray(self.embed_documents(self.item_descriptions()), dtype=np.float32)
        q = np.asarray(self.embed_query(" ".join(text.split()[:DENSE_WORDS])), dtype=np.float32)
        by_topic: dict[str, float] = {}
        for (topic, _), sim in zip(self.index.sections, self._section_vectors @ q, strict=True):
            by_topic[topic] = max(by_topic.get(topic, -1.0), float(sim))
        if ITEM_VECTORS:
            for res, sim in zip(self.resources, self._item_vectors @ q, strict=True):
                by_topic[res.topic] = max(by_topic.get(res.topic, -1.0), float(sim))
        values = sorted(by_topic.values())
        median, top = values[len(values) // 2], values[-1]
        self._dense_top = top
        if top - median < 1e-6:
            return {}
        return {t: max(0.0, (s - median) / (top - median)) * min(1.0, top / 0.45) for t, s in by_topic.items()}


_AMPERSAND_OR_AND = re.compile(r"\s*(?:&|\band\b)\s*", re.IGNORECASE)


def _joined_name_patterns(names: Iterable[str]) -> list[re.Pattern[str]]:
    """Patterns of the place names that hold "&" or "and" ("Tensor Cores & Mixed Precision"), each matching
    the name said word for word with either joiner, longest first: the list splitter must not cut them."""
    joined = sorted({n for n in names if _AMPERSAND_OR_AND.search(n)}, key=len, reverse=True)
    out = []
    for name in joined:
        parts = [r"\s+".join(re.escape(w) for w in part.split()) for part in _AMPERSAND_OR_AND.split(name)]
        out.append(re.compile(r"(?<![\w-])" + _AMPERSAND_OR_AND.pattern.join(parts) + r"(?![\w-])", re.IGNORECASE))
    return out


def _naming(phrase: str) -> list[str]:
    """Content words that can name a topic or resource (a bare tier number does not)."""
    return [t for t in content_terms(phrase) if not t.isdigit()]


def _object_of(phrase: str) -> str:
    """What a "read" verb is about: the words after "I've worked my way through", or before "... are done"; a
    verb of beginning is such a verb too ("I started vLLM" is about vLLM, not a title holding "start")."""
    spans = [m for m in _RAW_WORD.finditer(phrase) if m.group(0).lower() in DONE_WORDS | BEGUN_WORDS]
    if not spans:
        return phrase
    cuts = [0, *(x for m in spans for x in (m.start(), m.end())), len(phrase)]
    pieces = [phrase[cuts[i]:cuts[i + 1]] for i in range(0, len(cuts), 2)]  # the text between the cue words
    return max(reversed(pieces), key=lambda piece: len(content_terms(piece)))


def _tiers(ws: Sequence[str]) -> frozenset[int]:
    """The tiers a phrase names: "Tier 2", "T2", "the second tier", "tiers 1 and 2", "the first two tiers"."""
    found: set[int] = set()
    for i, w in enumerate(ws):
        if w in {"tier", "tiers"}:
            j = i + 1
            while j < len(ws) and (ws[j] in TIER_NUMBERS and ws[j] not in {"first", "second", "third"} or ws[j] in {"and", "to", "or", "&"}):
                if ws[j] in TIER_NUMBERS:
                    found.add(TIER_NUMBERS[ws[j]])
                j += 1
            before = ws[max(0, i - 2):i]
            if (before and before[-1] in TIER_NUMBERS and not (len(before) == 2 and before[0] == "first")
                    and (w == "tier" or before[-1] in {"first", "second", "third"})):
                found.add(TIER_NUMBERS[before[-1]])
            if w == "tiers" and len(before) == 2 and before[0] == "first" and before[1] in TIER_NUMBERS:
                found |= set(range(1, TIER_NUMBERS[before[1]] + 1))
            if w == "tiers" and len(before) == 2 and before[0] == "first" and before[1].isdigit():
                found |= set(range(1, int(before[1]) + 1))
        m = re.fullmatch(r"t([123])", w)
        if m:
            found.add(int(m.group(1)))
    if len(found) == 2 and "to" in ws:  # "tiers 1 to 3"
        found = set(range(min(found), max(found) + 1))
    return frozenset(found)


def _tier(ws: Sequence[str]) -> int | None:
    tiers = _tiers(ws)
    return min(tiers) if tiers else None


_READERS: dict[tuple[str, ...], Reader] = {}


def reader_for(resources: list[Resource]) -> Reader:
    """A lexical Reader per catalog (no embedder), kept for the process: cheap callers share it."""
    key = tuple(r.id for r in resources)
    reader = _READERS.get(key)
    if reader is None:
        if len(_READERS) > 8:
            _READERS.clear()
        reader = _READERS[key] = Reader(resources)
    return reader


def resolve_reads(refs: Iterable[str], resources: list[Resource]) -> set[str]:
    """Ids, URLs or exact titles as they are; anything else read as free text against the catalog.
    A reference that names nothing is a one-line error saying what to use instead."""
    from assistant.profile import resolve_resource
    from core.errors import UserError

    ids: set[str] = set()
    for ref in refs:
        try:
            ids.add(resolve_resource(ref, resources).id)
        except UserError:
            named = reader_for(resources).named(ref)
            if not named:
                raise UserError(f"{ref[:200]!r} names nothing in the catalog; use an id or URL from "
                                "'gpuguide catalog --json', or a title, author, section or tier") from None
            ids |= {r.id for r in named}
    return ids
