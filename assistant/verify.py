"""Sentence-level verification of a generated answer against the evidence passages.

Two modes share one test of support. `check` is for answers whose form forces a marker on every sentence
(the summaries' grammar): each sentence must cite a given source that supports it. `attribute` is for answers
written freely (the chat's answers): markers the model wrote are hints only, and each sentence is attributed
after generation to the source whose passages support it (post-hoc citation). Support is

    cosine  = max cosine(sentence, an evidence unit of the source)   (the packaged embedder; units are its
              sentences, neighbouring pairs, and all of them together)
    lexical = share of the sentence's new content words (stemmed; those the question does not already hold)
              found in that source's evidence or title: what the sentence adds must come from the source

both at least their thresholds (`llm.verify_min_cosine`, `llm.verify_min_lexical`), and, in `attribute`, every
number, version and proper name of the sentence must occur in the passages it is attributed to (a name may
also come from the question or the source's title, a number only from the passages): a figure borrowed from
another page never passes; nor may it give the question's specific words to a passage that never holds them
(`off_subject_words`: the question's subject grafted onto a passage about something else). A sentence is
dropped, with the reason, when no source supports it, when it says the sources do not cover the question (the
model declining), when it only restates the question, when it dangles ("An example of this is [2]."), when it
announces what came next on its page ("The formula below ..."), or when the length limit cut it off; the reader
sees what was taken out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz.distance import OSA

from assistant.antecedents import resolved
from assistant.evidence import Evidence, EvidenceSource, readable, refers_back, self_contained
from assistant.sentences import MARKERS as _MARKERS
from assistant.sentences import AUXILIARIES, points_ahead
from assistant.sentences import prose_sentences
from assistant.sentences import sentences as split_sentences
from assistant.sentences import terms
from core.settings import LLMSettings

_CONTROL = re.compile(r"<\|[^|<>]{0,40}\|>|</?s>|\[/?INST\]|<</?SYS>>")
_NUMBER = re.compile(r"\d{1,3}")
_QUESTION_WORD = re.compile(r"[\w'’-]+")
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
    quote: str = ""  # the evidence sentence that supports it best (the citation's text fragment)

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
DANGLING = "points at a source instead of saying something"
LEANS_ON_DROPPED = "refers back to the sentence before it, which was dropped"
POINTS_AHEAD = "points at something the answer does not show (a figure, code or list that came after it on the page)"
BORROWED = "names {facts} that its passage does not hold"
MISBOUND = "gives {facts} to {name}; its passage says it of something else"
MISCOUNTED = "counts something else with {facts} than its passage does"
STRAY = "says something none of whose words its passage holds"
STRAY_CLAUSE = "a clause none of whose words its passage holds"
OFF_SUBJECT = "says it of {words} from the question; its passage does not mention {them}"
# Neighbouring distinct sentences of the archive's pages reach this cosine 0.2 % of the time (4,000 pairs,
# docs/answers.md), and those differ in a number ("FP16 ... FP32 Accumulate"): above it, a paraphrase.
REPEAT_COSINE = 0.90
MIN_NEW_WORDS = 1  # content words beyond the question's: none, and the sentence says nothing new


def strip_control(text: str) -> str:
    """Chat-template control text (`<|im_end|>`, `</s>`, `[INST]`) never reaches the reader."""
    return _CONTROL.sub("", text)


# After a marker, the same sentence going on: a comma or semicolon, or a word in lower case (also after a stray
# full stop: "NVIDIA Hopper Architecture In-Depth [1]. states that …").
_GOES_ON = re.compile(r"[ \t]*(?:[,;.][ \t]*)?[a-z(]")


def split_claims(text: str) -> list[Claim]:
    """Sentences with the markers that end them. A run of sentences closed by one marker shares it; a marker
    inside a sentence ("X [1], while Y [2].") moves to its end; text after the last marker (an answer cut off by
    the token limit) is a claim with no markers."""
    text = strip_control(text).strip()
    # "... cache. [1]" → "... cache [1]." so the marker stays with its sentence.
    text = re.sub(r"([.!?])\s*((?:\[\s*\d{1,3}\s*\]\s*)+)", lambda m: f" {m.group(2).strip()}{m.group(1)} ", text)
    claims: list[Claim] = []
    pos = 0
    head, carried = "", []  # the sentence so far where a marker stood mid-sentence, and that marker's numbers
    for m in _MARKERS.finditer(text):
        unit = head + text[pos:m.start()].rstrip()
        pos = m.end()
        cited = list(dict.fromkeys([*carried, *(int(n) for n in _NUMBER.findall(m.group(1)))]))
        if _GOES_ON.match(text, pos) and unit.strip(" .!?"):
            head, carried = _without_inner_pointer(unit), cited  # "The formula [2] gives ...": the sentence goes on
            pos += len(text[pos:]) - len(text[pos:].lstrip(" \t."))  # without the stray full stop
            head += "" if text[pos:pos + 1] in {",", ";"} else " "
            continue
        head, carried = "", []
        if pos < len(text) and text[pos] in ".!?":
            pos += 1
        if not unit.strip(" .!?"):
            if claims:  # "[1][2]" after "[1]." — extra markers of the previous sentence
                claims[-1].cited.extend(n for n in cited if n not in claims[-1].cited)
            continue
        claims.extend(Claim(p, list(cited)) for p in _sentences_of(unit))
    rest = text[pos:].strip()
    if head.strip(" .!?"):  # the marker's sentence goes on after it: it ends in the text that follows
        joined = _sentences_of(head + text[pos:])
        through = min(len(_sentences_of(head)), len(joined))  # head's sentences, the marker's one completed
        if through == len(joined) and not rest.endswith((".", "!", "?")):
            # the token limit cut the marker's own sentence: what the marker closed stands, the rest is cut off
            claims.extend(Claim(p, list(carried)) for p in _sentences_of(head))
        else:
            claims.extend(Claim(p, list(carried)) for p in joined[:through])
            rest = " ".join(joined[through:])
    claims.extend(Claim(p, []) for p in _sentences_of(rest))
    return claims


_INNER_POINTER = frozenset({"in", "from", "see", "by", "at", "via"})


def _without_inner_pointer(head: str) -> str:
    """A sentence going on after its marker without the word that pointed at it ("The formula in [2] provides"
    → "The formula provides"), when something is left before it."""
    words = head.rstrip().split()
    if len(words) > 1 and words[-1].lower() in _INNER_POINTER:
        return " ".join(words[:-1])
    return head


def _sentences_of(unit: str) -> list[str]:
    """The sentences of a stretch of the answer; as plain prose where the passage splitter would drop short
    bits ("Yes.", a last word cut off), so an unfinished ending never takes the finished sentences with it."""
    unit = unit.strip()
    if not unit.strip(" .!?"):
        return []
    parts = split_sentences(unit) or [unit]
    if len(" ".join(parts).split()) < len(unit.split()):
        parts = prose_sentences(unit)
    return [p.strip() for p in parts if p.strip(" .!?")]


# Where a sentence joins a clause of its own: ", and ...", "; ...", "... and the ...". A small model appends a
# clause from elsewhere (its prompt's worked example, its memory) to a supported one, and the sentence as a whole
# still scores as supported.
_CLAUSE_BREAK = re.compile(
    r",\s+(?=(?:and|but|while|whereas|which|so)\s)|;\s+|\s+(?=and\s+(?:the|this|these|those|it|its|they|their|a|an)\s)")
MIN_CLAUSE_STEMS = 3  # a clause with fewer new content words is a connective, not a fact of its own


def stray_clauses(text: str, passage: str, also: str = "") -> list[str]:
    """The clauses of a sentence that hold at least MIN_CLAUSE_STEMS content words beyond `also` (the question,
    the source's title) and none of which the passage holds: a fact from nowhere in the sources."""
    parts = _CLAUSE_BREAK.split(text)
    if len(parts) < 2:
        return []
    have = stems(passage) | stems(also)
    out = []
    for part in parts:
        new = stems(part) - stems(also)
        if len(new) >= MIN_CLAUSE_STEMS and not new & have:
            out.append(part.strip())
    return out if len(out) < len(parts) else []


def without_clauses(text: str, clauses: list[str]) -> str:
    """The sentence with those clauses (and the separator before them) taken out, the rest as written."""
    breaks = list(_CLAUSE_BREAK.finditer(text))
    starts = [0] + [m.end() for m in breaks]
    ends = [m.start() for m in breaks] + [len(text)]
    seps = [""] + [m.group(0) for m in breaks]
    kept = [(sep, text[a:b]) for sep, a, b in zip(seps, starts, ends, strict=True) if text[a:b].strip() not in clauses]
    out = "".join(sep + piece for sep, piece in kept).strip().lstrip(",; ")
    end = text.rstrip()[-1:]
    return out.rstrip(",;") + end if end in ".!?" and not out.endswith(end) else out.rstrip(",;")


def off_subject_words(text: str, question: str, have: set[str], share: Mapping[str, float], max_share: float,
                      ordinary: set[str]) -> list[str]:
    """The question's specific words (held by at most `max_share` of the index's chunks) that the sentence uses
    and its passage (`have`: its stems, with the source's title) does not, when they show the sentence applies
    the question's subject to a passage about something else ("To specify the architecture, set
    LLVM_IR_ENABLE_DUMP=1"): one term English does not have (a name, an identifier) or two of any kind. A single
    ordinary word ("impact", "option", "busier": `is_ordinary`) is often the question's own framing, which a
    passage that answers it need not repeat."""
    used = stems(text) & stems(question)
    missing = sorted(w for w in used - have if share.get(w, 0.0) <= max_share)
    plain = {stem for word in _QUESTION_WORD.findall(question) if is_ordinary(word, ordinary) for stem in terms(word)}
    return missing if len(missing) >= 2 or set(missing) - plain else []


# English inflections a whole-word vocabulary often lacks ("busier", "batching", "wastes"): general morphology
_INFLECTIONS = (("iest", "y"), ("ier", "y"), ("ies", "y"), ("ied", "y"), ("ing", ""), ("ing", "e"), ("est", ""),
                ("est", "e"), ("ed", ""), ("ed", "e"), ("er", ""), ("er", "e"), ("es", ""), ("s", ""))


def is_ordinary(word: str, ordinary: set[str]) -> bool:
    """A word of `ordinary` English (lower-cased), or an inflection of one ("busier" → "busy", "batching" →
    "batch", "saturated" → "saturate"; a doubled final consonant too: "bigger" → "big")."""
    word = word.lower()
    if word in ordinary:
        return True
    for suffix, base in _INFLECTIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            root = word[: -len(suffix)]
            doubled = not base and len(root) > 3 and root[-1] == root[-2]  # "bigger" → "big"
            if root + base in ordinary or doubled and root[:-1] in ordinary:
                return True
    return False


def off_subject_reason(question: str, word_stems: list[str]) -> str:
    """OFF_SUBJECT with the stems as the question wrote them ("lectur" → “lecture”)."""
    surface: dict[str, str] = {}
    for word in _QUESTION_WORD.findall(question):
        for stem in terms(word):
            surface.setdefault(stem, word)
    words = list(dict.fromkeys(surface.get(w, w) for w in word_stems))
    return OFF_SUBJECT.format(words=", ".join(f"“{w}”" for w in words), them="it" if len(words) == 1 else "them")


_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|])")  # "fast\_p" as the page's markdown writes "fast_p"


def stems(text: str) -> set[str]:
    """Content words, stemmed, so inflections meet (pipelined / pipelining, scaled / scaling); a markdown escape
    is read as the character it escapes, as the model writes it."""
    return set(terms(_MARKDOWN_ESCAPE.sub(r"\1", text)))  # already stemmed by core/text.py


def support_units(sentences: list[str]) -> list[str]:
    """What a claim is compared with: each evidence sentence, each pair of neighbouring ones (a claim often
    joins two facts, and "It ..." needs the sentence before), and all of them together. Not the title: a
    sentence that merely starts with the source's name would look supported."""
    units = list(sentences)
    units += [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]
    if len(sentences) > 2:
        units.append(" ".join(sentences))
    return units


_NUMBER_FACT = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z][\w.+-]*[\w+]|[A-Za-z]")
_LETTERS = re.compile(r"[A-Za-z]+")
# General English words a sentence cannot end on: "... is [2]." says nothing once the marker is gone.
_DANGLING_ENDS = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "of", "in", "on", "at", "by", "to", "for", "from", "with",
    "as", "like", "see", "this", "these", "that", "those", "following", "include", "includes", "including",
    "such", "and", "or", "than", "its", "their", "e.g", "i.e", "via", "about",
})


def numbers(text: str) -> set[str]:
    """The numbers of a text as written ("36.9", "1,024" → "1024"), version parts included; citation
    markers ("[2]") are not numbers of the text."""
    return {m.group(0).replace(",", "") for m in _NUMBER_FACT.finditer(_MARKERS.sub(" ", text))}


def names(text: str) -> set[str]:
    """Proper names and versions: CamelCase or mixed letters and digits (FlashAttention, H100, FP8, v2),
    acronyms, and capitalised words that do not open the sentence, as written."""
    found: set[str] = set()
    for i, m in enumerate(_WORD.finditer(text)):
        w = m.group(0).rstrip(".")
        opens = i == 0 or text[:m.start()].rstrip().endswith((".", ":", "!", "?", "(", '"'))
        mixed = any(ch.isdigit() for ch in w) and any(ch.isalpha() for ch in w)
        camel = any(ch.isupper() for ch in w[1:]) and any(ch.islower() for ch in w)
        acronym = len(w) >= 2 and w.isupper()
        if mixed or camel or acronym or (w[:1].isupper() and not opens and len(w) > 1):
            found.add(w)
    return found


def _normal(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9.+]+", " ", text.lower()) + " "


def missing_facts(claim: str, passages: str, also_names: str = "") -> list[str]:
    """Numbers of `claim` absent from `passages`, and names absent from `passages` and `also_names` (the
    question and the source's title: the subject may be named there)."""
    have_numbers = numbers(passages)
    out = [n for n in sorted(numbers(claim)) if n not in have_numbers]
    text = _normal(passages + " " + also_names)
    squashed = text.replace(" ", "").replace("-", "")
    for name in sorted(names(claim)):
        plain = _normal(name).strip()
        forms = {plain, plain[:-1]} if plain.endswith("s") and len(plain) > 3 else {plain}  # GPUs → GPU
        if not plain or any(f" {f}" in text or f.replace(" ", "") in squashed for f in forms):
            continue
        if any(ch.isdigit() for ch in name) and not any(ch.isalpha() for ch in name):
            continue  # a bare number: checked above
        out.append(name)
    return out


MIN_RESPELLED = 6  # shorter names are too often another real name one letter away ("Mamba" / "Mambo")


def respelled(claim: str, reference: str) -> str:
    """The claim with each name the model misspelt by one edit ("Salukova") in the reference's spelling
    ("Salykova"), when exactly one word of the reference (the passages, the question, the title) is that
    close: a typo of a name the sources hold is no borrowed name, and the learner reads it right."""
    have = _normal(reference)
    spellings = {w for w in _LETTERS.findall(reference) if len(w) >= MIN_RESPELLED - 1}
    for name in sorted(names(claim)):
        if len(name) < MIN_RESPELLED or not name.isalpha() or f" {name.lower()} " in have:
            continue
        near = {w for w in spellings if w[0].lower() == name[0].lower() and OSA.distance(w.lower(), name.lower()) == 1}
        if len(near) == 1:
            claim = re.sub(rf"\b{re.escape(name)}\b", near.pop(), claim)
    return claim


_VERSION = r"[-\s]?([vV]?\d[\w.]*)"  # "-2", " V2", "4" after a name
_VERSIONED = re.compile(rf"^([A-Za-z][A-Za-z]{{2,}}?){_VERSION}$")  # FlashAttention-2, DeepSeek-V2, GPT-4


def _said(name: str, text: str) -> bool:
    """Is the versioned name written in `text` ("FlashAttention-2" also as "FlashAttention 2" or
    "FlashAttention2"; never plain "FlashAttention")?"""
    plain = _normal(name).strip()
    normal = _normal(text)
    return f" {plain} " in normal or f" {plain.replace(' ', '')} " in normal.replace("-", "")


def _sibling_said(base: str, version: str, text: str) -> bool:
    """Does `text` name another member of the family: the base alone or with another version
    ("FlashAttention" or "FlashAttention-3" beside "FlashAttention-2")?"""
    for m in re.finditer(rf"(?<![\w-]){re.escape(base)}(?:{_VERSION})?(?![\w])", text, re.IGNORECASE):
        if (m.group(1) or "").lower().rstrip(".") != version.lower():
            return True
    return False


def unbound_numbers(claim: str, source: EvidenceSource) -> tuple[str, list[str]]:
    """The claim's first versioned name (a name of three letters or more with a version: FlashAttention-2,
    DeepSeek-V2) that its passage also holds, and the claim's numbers that the passage states only of another
    member of that family (in a sentence, or one that refers back with the sentence before it, naming the
    base or another version, never this one). A small model moves a figure between the versions one passage
    compares ("FlashAttention-2 reaches 25-40%" from "FlashAttention reaches only 25-40% ... FlashAttention-2
    ..."): every number and name is in the passage, each said of another. A number the passage states of no
    family member ("beats cuBLAS by 7%" on a page about the H100) is left alone."""
    for word in _WORD.findall(claim):
        word = word.rstrip(".")
        versioned = _VERSIONED.match(word)
        if versioned and _said(word, source.text):
            name, base, version = word, versioned.group(1), versioned.group(2)
            break
    else:
        return "", []
    facts = numbers(claim.replace(name, " "))
    sents = source.sentences
    windows = [s.text for s in sents]
    windows += [f"{a.text} {b.text}" for a, b in zip(sents, sents[1:])
                if b.position == a.position + 1 and refers_back(b.text)]
    misbound = []
    for fact in sorted(facts):
        stating = [w for w in windows if fact in numbers(w)]
        if stating and not any(_said(name, w) for w in stating) and any(
                _sibling_said(base, version, w) for w in stating):
            misbound.append(fact)
        elif stating and all(_listed_apart(name, fact, w) for w in stating):
            misbound.append(fact)
    return name, misbound


def _figures(text: str) -> set[str]:
    """The numbers of a text that are not a name's version ("GPT-2" holds no figure)."""
    return numbers(_WORD.sub(lambda m: " " if _VERSIONED.match(m.group(0).rstrip(".")) else m.group(0), text))


# the items of a list of figures inside one sentence ("3x on GPT-2 (...), and 2.4x on long-range arena (...)")
_LIST_ITEMS = re.compile(r",\s+(?:and\s+)?|;\s+|\s+and\s+")


def _listed_apart(name: str, fact: str, sentence: str) -> bool:
    """In a sentence that lists several figures, each figure belongs to its own item: `fact` is stated only in
    items that do not say `name`, while another item with a figure does ("3x speedup on GPT-2, and 2.4x speedup on
    long-range arena" gives GPT-2 no 2.4x)."""
    counted = [item for item in _LIST_ITEMS.split(sentence) if _figures(item)]
    with_fact = [item for item in counted if fact in _figures(item)]
    return (len(counted) >= 2 and bool(with_fact) and not any(_said(name, item) for item in with_fact)
            and any(_said(name, item) for item in counted))


# a number of two or more digits (or with a decimal point) that counts something: not a version glued to a
# name ("FlashAttention-2", "EAGLE-3") nor a label's number after a capitalised word ("Tier 2", "Part 12")
_COUNT = (r"(?<![\w.-])(?<![A-Z] )(?<![A-Z][a-z] )(?<![A-Z][a-z]{2} )(?<![A-Z][a-z]{3} )"
          r"(\d{2,}(?:[.,]\d+)*|\d\.\d+)(?![\w.]*\w)")
_NUMBER_OF = re.compile(r"\b[Nn]umber of ((?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z][\w-]*)\s+"
                        r"(?:(?:per|on|in|for|with)\s+(?:an?\s+|the\s+)?[A-Za-z][\w-]*\s+){0,2}"
                        r"(?:is|are|was|were|remains|of|=|:)\s+(?:(?:about|around|up to|at most|at least|only|just)\s+)?"
                        + _COUNT)
_COUNT_OF = re.compile(_COUNT + r"((?:\s+[A-Za-z][\w/-]*){1,3})")


def quantities(sentence: str) -> dict[str, set[str]]:
    """Each counting number of a sentence → the terms of what it counts: "the number of X (per Y) is N"
    gives X, "N X" the words after N up to a stop word ("255 registers", "32 thread blocks")."""
    out: dict[str, set[str]] = {}
    for m in _NUMBER_OF.finditer(sentence):
        out.setdefault(m.group(2).replace(",", ""), set()).update(terms(m.group(1)))
    for m in _COUNT_OF.finditer(sentence):
        counted: list[str] = []
        for word in m.group(2).split():
            if not terms(word):
                break
            counted += terms(word)
        if counted:
            out.setdefault(m.group(1).replace(",", ""), set()).update(counted)
    return out


def miscounted(claim: str, source: EvidenceSource) -> list[str]:
    """The claim's numbers that count one thing while every passage sentence stating them counts another:
    "the maximum number of threads per block is 255" from "the maximum number of registers per thread is
    255". A number whose passage sentence does not say what it counts is left alone."""
    texts = [s.text for s in source.sentences]
    out = []
    for number, counted in quantities(_MARKERS.sub(" ", claim)).items():
        stating = [t for t in texts if number in numbers(t)]
        theirs = [quantities(t).get(number) for t in stating]
        if stating and all(theirs) and not any(counted & t for t in theirs if t):
            out.append(number)
    return out


def dangles(claim: str) -> bool:
    """The sentence ends on a word that needs an object (its marker was the object), or on a colon."""
    body = claim.rstrip().rstrip(".!?").rstrip()
    if body.endswith((":", ",", ";", "(")):
        return True
    last = body.split()[-1].lower().strip("\"'()") if body.split() else ""
    return last in _DANGLING_ENDS


# words that hand a sentence's object to its marker: "... reduces the KV cache by [1]", "as shown in [2]"
_POINTING_TAIL = frozenset({"by", "in", "from", "at", "to", "of", "with", "via", "on", "see", "according", "as",
                            "shown", "described", "reported", "given", "stated"})
MIN_CLAIM_WORDS = 6  # what is left once the pointing words go must still say something on its own
# a finite verb, roughly: an auxiliary, or a word after the first ending like "reduces" / "reduced" (a plural noun
# passes too); "An illustration of memory wastage ... management" has none and is no claim
_AUXILIARY = re.compile(r"\b(?:" + "|".join(sorted(AUXILIARIES)) + r")\b", re.IGNORECASE)


def without_pointer(claim: str) -> str:
    """The sentence without the words that point at its marker ("DeepSeek-V2 achieves a 93.3% reduction in
    the KV cache by [3]." → "... in the KV cache."), or "" when what is left is too short to be a claim or
    still needs an object."""
    body = claim.rstrip().rstrip(".!?").rstrip().split()
    if not body or body[-1].lower() not in _POINTING_TAIL:
        return ""
    while body and body[-1].lower().strip(",") in _POINTING_TAIL:
        body.pop()
    rest = " ".join(body).rstrip(",;: ")
    inflected = any(w.lower().endswith(("s", "ed")) for w in rest.split()[1:])
    if len(rest.split()) < MIN_CLAIM_WORDS or dangles(rest) or not (_AUXILIARY.search(rest) or inflected):
        return ""
    return rest + "."


def distinct(claims: list[Claim], vecs: np.ndarray) -> Iterator[tuple[Claim, np.ndarray]]:
    """Each claim with its vector, a claim that repeats an earlier one left out: the same terms, or a
    paraphrase (cosine >= `REPEAT_COSINE`) that adds no number or name of its own. A small model that
    continues its own answer sometimes writes its first sentence again in other words."""
    seen: list[tuple[Claim, np.ndarray]] = []
    for claim, vec in zip(claims, vecs, strict=True):
        if not any(_repeats(claim, vec, earlier, earlier_vec) for earlier, earlier_vec in seen):
            seen.append((claim, vec))
            yield claim, vec


def _repeats(claim: Claim, vec: np.ndarray, earlier: Claim, earlier_vec: np.ndarray) -> bool:
    if terms(claim.text) == terms(earlier.text):
        return True
    own = (numbers(claim.text) | names(claim.text)) - (numbers(earlier.text) | names(earlier.text))
    return not own and float(vec @ earlier_vec) >= REPEAT_COSINE


class Verifier:
    """Checks claims against one Evidence with the embedder that selected it."""

    def __init__(self, embedder: Any, cfg: LLMSettings,
                 word_share: Callable[[Iterable[str]], Mapping[str, float]] | None = None) -> None:
        """`word_share`: each term's share of the index's chunks (index/bm25.py `document_share`); without it
        the off-subject check is off."""
        self.embedder = embedder
        self.cfg = cfg
        self.word_share = word_share
        self._ordinary: set[str] | None = None

    @property
    def ordinary_words(self) -> set[str]:
        """Ordinary English words (the embedder's whole-word vocabulary), read once."""
        if self._ordinary is None:
            words = getattr(self.embedder, "english_words", None)
            self._ordinary = words() if words is not None else set()
        return self._ordinary

    def check(self, text: str, evidence: Evidence) -> Verdict:
        claims = split_claims(text)
        by_n = {s.n: s for s in evidence.sources}
        if not claims:
            return Verdict([], [])
        claim_vecs = self.embedder.embed_documents([c.text for c in claims])
        _, ev_vecs, source_of = self._units(evidence)
        question_stems = stems(evidence.question)
        kept: list[Claim] = []
        dropped: list[Claim] = []
        for claim, vec in distinct(claims, claim_vecs):
            if _DECLINE.search(claim.text):
                claim.reason = DECLINED
                dropped.append(claim)
                continue
            if not claim.cited:
                claim.reason = CUT_OFF if claim is claims[-1] and not claim.text.rstrip().endswith((".", "!", "?")) else NO_SOURCE
                dropped.append(claim)
                continue
            if len(stems(claim.text) - question_stems) < MIN_NEW_WORDS:
                claim.reason = RESTATES
                dropped.append(claim)
                continue
            valid = [n for n in claim.cited if n in by_n]
            if not valid:
                claim.reason = NO_SOURCE
                dropped.append(claim)
                continue
            scored = self._scored(claim.text, ev_vecs @ vec, source_of, evidence)
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

    def attribute(self, text: str, evidence: Evidence, max_sentences: int | None = None) -> Verdict:
        """Post-hoc citation of a freely written answer: each sentence goes to the source that supports it
        (a marker the model wrote is preferred when that source supports it too) and carries the evidence
        sentence closest to it; sentences no source supports, or whose numbers and names no supporting
        passage holds, are dropped with the reason."""
        claims = split_claims(text)
        if not claims or not evidence.sources:
            return Verdict([], claims)
        by_n = {s.n: s for s in evidence.sources}
        claim_vecs = self.embedder.embed_documents([c.text for c in claims])
        units, unit_vecs, unit_source = self._units(evidence)
        question_stems = stems(evidence.question)
        max_share = self.cfg.verify_question_word_max_share
        share = self.word_share(question_stems) if self.word_share is not None and max_share > 0 else None
        source_stems = {s.n: stems(f"{s.text} {s.resource.title}") for s in evidence.sources} if share else {}
        kept: list[Claim] = []
        dropped: list[Claim] = []
        leaned_on: Claim | None = None  # the sentence before, when it was dropped
        for claim, vec in distinct(claims, claim_vecs):
            stands = claim.text
            if leaned_on is not None and self.cfg.verify_resolve_references:
                stands = resolved(claim.text, leaned_on.text, evidence.question)
            if stands is not None and stands != claim.text:
                claim.text = stands
                vec = self.embedder.embed_documents([stands])[0]
            leaned_on = claim  # until it is kept
            ended = bool(claim.cited) or claim.text.rstrip().endswith((".", "!", "?"))  # "... [1]." ended
            # "... by [3].": the marker was the object; the claim without the pointing words may stand
            repaired = without_pointer(claim.text) if claim.cited and dangles(claim.text) else ""
            reason = ""
            if _DECLINE.search(claim.text):
                reason = DECLINED
            elif stands is None:
                reason = LEANS_ON_DROPPED
            elif claim is claims[-1] and not ended:
                reason = CUT_OFF
            elif dangles(claim.text) and not repaired:
                reason = DANGLING
            elif points_ahead(claim.text):
                reason = POINTS_AHEAD
            elif len(stems(claim.text) - question_stems) < MIN_NEW_WORDS:
                reason = RESTATES
            if not reason and repaired:
                claim.text = repaired
            if reason:
                claim.reason = reason
                dropped.append(claim)
                continue
            sims = unit_vecs @ vec
            scored = self._scored(claim.text, sims, unit_source, evidence)
            supported = [n for n in by_n if self._supported(*scored[n])]
            hinted = [n for n in claim.cited if n in supported]
            order = hinted + sorted((n for n in supported if n not in hinted), key=lambda n: -scored[n][0])
            missing: list[str] = []
            misbound = ""
            off_subject: list[str] = []
            chosen = None
            for n in order:
                src = by_n[n]
                also = f"{evidence.question} {src.resource.title}"
                text = respelled(claim.text, f"{src.text} {also}")
                gaps = missing_facts(text, src.text, also)
                if share is not None and not gaps:
                    elsewhere = off_subject_words(text, evidence.question, source_stems[n], share, max_share,
                                                  self.ordinary_words)
                    if elsewhere:
                        off_subject = off_subject or elsewhere
                        continue
                if not gaps:
                    name, unbound = unbound_numbers(text, src)
                    counts = miscounted(text, src)
                    stray = stray_clauses(text, src.text, also)
                    if stray and _CLAUSE_BREAK.split(text)[0].strip() in stray:
                        misbound = misbound or STRAY  # the sentence's own clause comes from nowhere
                        continue
                    if not unbound and not counts:
                        chosen = n
                        if stray:
                            dropped.extend(Claim(c, [n], reason=STRAY_CLAUSE) for c in stray)
                            text = without_clauses(text, stray)
                        claim.text = text
                        break
                    misbound = misbound or (MISBOUND.format(facts=", ".join(unbound), name=name) if unbound
                                            else MISCOUNTED.format(facts=", ".join(counts)))
                    continue
                missing = missing or gaps
            best = chosen if chosen is not None else max(by_n, key=lambda n: scored[n][0])
            claim.cosine, claim.lexical = scored[best]
            if chosen is None:
                claim.reason = (BORROWED.format(facts=", ".join(missing)) if missing else misbound or (
                    off_subject_reason(evidence.question, off_subject) if off_subject else UNSUPPORTED))
                dropped.append(claim)
                continue
            claim.corrected = chosen not in claim.cited
            claim.sources = [chosen]
            claim.quote = self._quote(claim.text, sims, units, chosen, evidence)
            if max_sentences is not None and len(kept) >= max_sentences:
                continue
            kept.append(claim)
            leaned_on = None
        return Verdict(kept, dropped)

    def _units(self, evidence: Evidence) -> tuple[list[tuple[int, str, bool]], np.ndarray, np.ndarray]:
        """Every support unit of every source (source number, text, whether it is a single sentence), embedded."""
        units = [(s.n, unit, i < len(s.sentences)) for s in evidence.sources
                 for i, unit in enumerate(support_units([x.text for x in s.sentences]))]
        vecs = self.embedder.embed_documents([u for _, u, _ in units])
        return units, vecs, np.array([n for n, _, _ in units])

    @staticmethod
    def _scored(text: str, sims: np.ndarray, unit_source: np.ndarray, evidence: Evidence) -> dict[int, tuple[float, float]]:
        """(cosine, lexical share of new content words) of a sentence for each source."""
        new_words = stems(text) - stems(evidence.question)
        out: dict[int, tuple[float, float]] = {}
        for s in evidence.sources:
            mask = unit_source == s.n
            cos = float(sims[mask].max()) if mask.any() else 0.0
            have = stems(s.text + " " + s.resource.title)
            out[s.n] = (cos, len(new_words & have) / len(new_words) if new_words else 0.0)
        return out

    @staticmethod
    def _quote(text: str, sims: np.ndarray, units: list[tuple[int, str, bool]], n: int, evidence: Evidence) -> str:
        """The single evidence sentence of source `n` that holds most of what the claim adds (cosine plus the
        share of its new content words), the sentence a citation link lands on."""
        new_words = stems(text) - stems(evidence.question)
        best = (-1.0, "")
        for i, (source, unit, single) in enumerate(units):
            if source == n and single:
                share = len(new_words & stems(unit)) / len(new_words) if new_words else 0.0
                best = max(best, (float(sims[i]) + share, unit))
        return best[1]

    def key_passage(self, evidence: Evidence, kept: list[Claim]) -> tuple[int, str] | None:
        """(source, sentence): the evidence sentence most relevant to the question, when it is about the
        question (`key_passage_min_cosine`), reads as prose that stands alone (`self_contained`), does not
        point at what came after it on its page, and no kept sentence says what it says
        (`key_passage_covered_cosine`). A 1.5B model's own words often leave out the fact the page states;
        quoted, the page's words carry it. None otherwise."""
        if not self.cfg.key_passage:
            return None
        ranked = evidence.ranked()
        if not ranked:
            return None
        source, sentence = ranked[0]
        if points_ahead(sentence.text) or not readable(sentence.text) or not self_contained(sentence.text):
            return None
        vecs = self.embedder.embed_documents([sentence.text, *(c.text for c in kept)])
        if float(vecs[0] @ self.embedder.embed_query(evidence.question)) < self.cfg.key_passage_min_cosine:
            return None
        if len(vecs) > 1 and float((vecs[1:] @ vecs[0]).max()) >= self.cfg.key_passage_covered_cosine:
            return None
        return source.n, sentence.text

    def support_scores(self, text: str, evidence: Evidence) -> tuple[float, float, bool]:
        """The best source's (cosine, lexical) for one sentence, and whether that source holds its numbers and
        names: what the thresholds are calibrated on (tools/calibrate_verify.py)."""
        _, unit_vecs, unit_source = self._units(evidence)
        sims = unit_vecs @ self.embedder.embed_documents([text])[0]
        scored = self._scored(text, sims, unit_source, evidence)
        best = max(scored, key=lambda n: scored[n][0])
        src = evidence.source(best)
        assert src is not None
        ok = not missing_facts(text, src.text, f"{evidence.question} {src.resource.title}") and not unbound_numbers(
            text, src)[1]
        return scored[best][0], scored[best][1], ok

    def _supported(self, cosine: float, lexical: float) -> bool:
        return cosine >= self.cfg.verify_min_cosine and lexical >= self.cfg.verify_min_lexical
