"""Follow-ups in a conversation: "and what changed in version 3?", "does it work on Hopper?", "what about the
AMD side?", "more on [2]" — resolved against the conversation into the standalone question that is searched
(and shown to the learner), plus the context that re-orders the search's candidates.

Rule-based on purpose: instant and predictable, where a 1.5B model rewriting questions is neither. The rules
know only general English (pronouns, "and …", "what about …", "version N", ordinals); which words *name*
something comes from the guide itself — catalog titles, the corpus's short forms (aliases.json) and the
embedding model's WordPiece vocabulary as the list of ordinary English words — never from question sets.

The conversation's subject is the naming words of the previous standalone question (chained: a follow-up's
standalone names its subject, so the next follow-up inherits it) and the titles of the previous answer's
sources. "version 3" becomes the catalog's versioned name of that subject ("FlashAttention-3") when the
catalog has one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from assistant.sentences import terms
from index.aliases import looks_like_short_form

_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
    "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
}
_ORDINAL_WORDS = "|".join(_ORDINALS)
# "the second one", "the last paper", "[2]", "#2", "source 2"
_SOURCE_REF = re.compile(
    rf"\b(?:the\s+)?({_ORDINAL_WORDS}|last)\s+(?:one|source|paper|post|link|resource|result|reference|article)s?\b"
    r"|\[(\d{1,2})\]|#(\d{1,2})\b|\b(?:source|reference)\s+(\d{1,2})\b",
    re.IGNORECASE,
)
# "version 3", "v3", "the third version", "gen 2", "generation 3"
_VERSION_REF = re.compile(
    rf"\b(?:the\s+)?(?:(?:version|v|gen|generation)\s*(\d{{1,2}})|({_ORDINAL_WORDS})\s+(?:version|generation|one))\b",
    re.IGNORECASE,
)
_OPENER = re.compile(r"^\s*(?:(?:and|also|so|then|but|plus|ok|okay|now)\b[\s,]*)+", re.IGNORECASE)
_WHAT_ABOUT = re.compile(r"^\s*(?:(?:and|so|but|ok|okay)\b[\s,]*)?(?:what|how)\s+about\s+(.+?)\s*[?.!]*\s*$",
                         re.IGNORECASE)
_AND_X = re.compile(r"^\s*and\s+(.+?)\s*\?\s*$", re.IGNORECASE)
# Pronouns that point back; the first three kinds are replaced by the subject's name, the rest only mark a
# follow-up (as determiners they need the noun after them: "this paper", "that kernel").
_REPLACEABLE = {"it": "{s}", "its": "{s}'s", "they": "{s}", "them": "{s}", "their": "{s}'s"}
_POINTING = re.compile(r"\b(it|its|they|them|their|this|that|these|those|there|the same)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-.+][A-Za-z0-9]+)*(?:'s)?")
# Question glue: words no subject is named by, whatever the vocabulary says.
_GLUE = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do", "does", "for", "from",
    "had", "has", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us",
    "was", "we", "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "will", "with",
    "would", "you", "your", "about", "also", "any", "both", "each", "more", "most", "much", "many", "other",
    "same", "some", "such", "very", "just", "only", "into", "over", "under", "again", "further", "please",
    "tell", "explain", "show", "give", "compare", "mean", "means", "vs", "versus", "work", "works", "way",
    "ways", "one", "ones", "version", "versions", "side", "part", "bit",
])
SHORT_QUESTION_WORDS = 5  # a question this short with no naming word of its own continues the conversation
POINTING_QUESTION_WORDS = 8  # a question this short with a pronoun points back even when it names something
_LEADING_ASK = re.compile(r"^\s*(?:(?:how|what|why|when|where|which|who|is|are|does|do|did|can|could|should|would|will)"
                          r"\b\s*)+(?:(?:is|are|does|do|did|can|the|a|an)\b\s*)*", re.IGNORECASE)

H = TypeVar("H")


@dataclass
class Turn:
    """One earlier exchange, as much of it as a follow-up needs."""

    question: str
    standalone: str
    cited_titles: list[str] = field(default_factory=list)
    cited_ids: list[str] = field(default_factory=list)


@dataclass
class Resolved:
    """What is searched for a question asked in a conversation, and the conversation context that orders it."""

    question: str
    standalone: str  # searched, and shown to the learner when it differs from the question
    followup: bool = False
    own_names: list[str] = field(default_factory=list)  # what the follow-up itself names
    subject: list[str] = field(default_factory=list)  # what the conversation was about
    pinned_ids: list[str] = field(default_factory=list)  # sources the question points at ("more on [2]")


class Vocabulary:
    """Which words name something in this guide: catalog title words that are no ordinary English word,
    the corpus's short forms, words written like a short form (TMA, FP8); plus the catalog's versioned names."""

    def __init__(self, titles: Iterable[str] = (), aliases: Mapping[str, Sequence[str]] | None = None,
                 common_words: Iterable[str] = ()) -> None:
        self.common = frozenset(w.lower() for w in common_words)
        self.aliases = {k.lower(): list(v) for k, v in (aliases or {}).items()}
        self.title_words: dict[str, str] = {}  # lower → surface form as a title writes it
        for title in titles:
            for raw in _WORD.findall(title):
                word = _bare(raw)
                if word.lower() not in _GLUE and len(word) > 1:
                    self.title_words.setdefault(word.lower(), word)

    @classmethod
    def from_searcher(cls, searcher: Any, resources: Iterable[Any] | None = None) -> Vocabulary:
        resources = list(resources if resources is not None else getattr(searcher, "resources", []))
        aliases = getattr(getattr(searcher, "aliases", None), "pairs", {}) or {}
        embedder = getattr(searcher, "embedder", None)
        common: Iterable[str] = ()
        if embedder is not None and hasattr(embedder, "english_words"):
            common = embedder.english_words()
        return cls((r.title for r in resources), aliases, common)

    def is_name(self, word: str) -> bool:
        """Does this word name a thing (a product, paper, library, unit) rather than say something ordinary?"""
        word = _bare(word)
        low = word.lower()
        if low in _GLUE or len(low) < 2 or low.isdigit():
            return False
        if looks_like_short_form(word) or low in self.aliases:
            return True
        if any(ch.isdigit() for ch in low) and any(ch.isalpha() for ch in low):
            return True  # H100, FlashAttention-3, sm90
        if any(ch.isupper() for ch in word[1:]):
            return True  # FlashAttention, CuTe, vLLM
        if word[:1].isupper() and low in self.title_words:
            return True  # a capitalised word a title uses: Hopper, Triton
        if self.common:
            return low not in self.common and ("-" in low or low in self.title_words or len(low) > 3)
        return low in self.title_words and word[:1].isupper()

    def names(self, text: str) -> list[str]:
        """The naming words of `text`, in order, once each (possessives dropped)."""
        out: dict[str, str] = {}
        for raw in _WORD.findall(text):
            word = _bare(raw)
            if self.is_name(word):
                out.setdefault(word.lower(), word)
        return list(out.values())

    def versioned(self, name: str, n: int) -> str | None:
        """The catalog's name for version `n` of `name` ("FlashAttention", 3 → "FlashAttention-3"), if any."""
        base = re.sub(r"[-\s]?\d+$", "", name).lower()
        for form in (f"{base}-{n}", f"{base}{n}", f"{base}v{n}", f"{base}-v{n}"):
            if form in self.title_words:
                return self.title_words[form]
        if n == 1 and base in self.title_words:
            return self.title_words[base]
        return None


def standalone_question(question: str, history: list[Turn], vocabulary: Vocabulary | None = None) -> str:
    """The question as it would be asked alone (kept for callers that need only the text)."""
    return resolve(question, history, vocabulary).standalone


def resolve(question: str, history: list[Turn], vocabulary: Vocabulary | None = None) -> Resolved:
    """Resolve `question` against the conversation so far; a question that stands on its own is kept as is."""
    vocab = vocabulary or Vocabulary()
    question = " ".join(question.split())
    own = vocab.names(_without_refs(question))
    if not history or not question:
        return Resolved(question, question, own_names=own)
    last = history[-1]
    subject = _subject(last, vocab)
    main = _main_subject(last, subject, vocab)

    if ref := _SOURCE_REF.search(question):
        n = _ref_number(ref, len(last.cited_titles))
        if 1 <= n <= len(last.cited_titles):
            title = last.cited_titles[n - 1]
            pinned = [last.cited_ids[n - 1]] if n <= len(last.cited_ids) else []
            replaced = _strip_opener(question[: ref.start()] + title + question[ref.end():])
            rest = set(terms(replaced)) - set(terms(title)) - {"more", "tell", "about", "detail", "details"}
            standalone = replaced if len(rest) >= 2 else f"{title}: {last.standalone}"
            return Resolved(question, standalone, True, vocab.names(title), subject, pinned)

    if not _is_followup(question, own, subject, vocab):
        return Resolved(question, question, own_names=own)

    if (version := _VERSION_REF.search(question)) and main:
        n = int(version.group(1)) if version.group(1) else _ORDINALS[version.group(2).lower()]
        name = vocab.versioned(main, n)
        if name:
            standalone = _strip_opener(question[: version.start()] + name + question[version.end():])
            return Resolved(question, _capitalised(standalone), True, [name, *own], subject)

    if match := _WHAT_ABOUT.match(question) or _AND_X.match(question):
        extra = match.group(1).strip()
        if not _POINTING.fullmatch(extra):
            base = last.standalone.rstrip(" ?.!")
            return Resolved(question, f"{base}: what about {extra}?", True, own, subject)

    if main:
        replaced, count = _replace_pronoun(_strip_opener(question), main)
        if count:
            return Resolved(question, _capitalised(replaced), True, own, subject)
        body = _strip_opener(question).rstrip(" ?.!")
        return Resolved(question, _capitalised(f"{body} ({_topic_phrase(last.standalone)})?"), True, own, subject)
    return Resolved(question, question, True, own, subject)


def conversation_order(resolved: Resolved, hits: list[H]) -> list[H]:
    """A follow-up's candidates with the sources it points at ("more on [2]") first, then in the search's order.

    Ordering the rest by how many of the conversation's names each candidate carries was measured on our
    written conversations (bench/conversation.py) and lost resources that answer the follow-up's new part (20 of
    24 in the top 3, against 23 without it): the standalone question already carries the subject, so counting
    it again pushes back what the follow-up newly asks for. A standalone question keeps its order."""
    if not resolved.followup or not resolved.pinned_ids or not hits:
        return hits
    pinned = set(resolved.pinned_ids)

    def rid(hit: H) -> Any:
        return getattr(getattr(hit, "resource", None), "id", None)

    return [h for h in hits if rid(h) in pinned] + [h for h in hits if rid(h) not in pinned]


# --- helpers -------------------------------------------------------------------------------------


def _subject(turn: Turn, vocab: Vocabulary) -> list[str]:
    """The names the previous turn was about: its standalone question's, then its first source's title's."""
    names = vocab.names(turn.standalone)
    if turn.cited_titles:
        title_names = vocab.names(turn.cited_titles[0].split(":")[0])
        # the question's name that the first source's title carries leads ("FlashAttention", not "HBM")
        in_title = [n for n in names if n.lower() in {t.lower() for t in title_names}]
        names = in_title + [n for n in names if n not in in_title]
        if not names:
            names = title_names[:2]
    return names


def _main_subject(turn: Turn, subject: list[str], vocab: Vocabulary) -> str:
    """The name a pronoun stands for: the first run of adjacent names in the previous standalone question that
    holds the subject's lead name ("Hopper TMA" in "What does the Hopper TMA unit do?")."""
    if not subject:
        return ""
    lead = subject[0].lower()
    run: list[str] = []
    for raw in turn.standalone.split():
        word = _bare(raw.strip("?.!,;:()\"'"))
        if word and vocab.is_name(word):
            run.append(word)
            continue
        if any(w.lower() == lead for w in run):
            break
        run = []
    return " ".join(run) if any(w.lower() == lead for w in run) else subject[0]


def _topic_phrase(standalone: str) -> str:
    """The previous question without its asking words: "How do CUDA graphs reduce launch overhead?" →
    "CUDA graphs reduce launch overhead"."""
    return _LEADING_ASK.sub("", standalone).strip(" ?.!") or standalone.strip(" ?.!")


def _is_followup(question: str, own: list[str], subject: list[str], vocab: Vocabulary) -> bool:
    if not subject:
        return False
    if _OPENER.match(question) or _WHAT_ABOUT.match(question):
        return True
    if _VERSION_REF.search(question) and not any(any(ch.isdigit() for ch in n) for n in own):
        return True
    pointing = _POINTING.search(question)
    if pointing:
        # "How does TMA work and why is it fast?" names its own antecedent before the pronoun; a short
        # question that names something else ("how does CUTLASS use it?") still points back
        before = vocab.names(question[: pointing.start()])
        if not before:
            return True
        said = {n.lower() for n in own}
        if len(question.split()) <= POINTING_QUESTION_WORDS and not said & {n.lower() for n in subject}:
            return True
    return not own and len(question.split()) <= SHORT_QUESTION_WORDS


def _replace_pronoun(question: str, name: str) -> tuple[str, int]:
    def swap(match: re.Match[str]) -> str:
        return _REPLACEABLE[match.group(1).lower()].format(s=name)

    return re.subn(r"\b(it|its|they|them|their)\b", swap, question, count=1, flags=re.IGNORECASE)


def _ref_number(ref: re.Match[str], n_titles: int) -> int:
    word = (ref.group(1) or "").lower()
    if word == "last":
        return n_titles
    if word:
        return _ORDINALS.get(word, 0)
    return int(ref.group(2) or ref.group(3) or ref.group(4) or 0)


def _without_refs(question: str) -> str:
    return _VERSION_REF.sub(" ", _SOURCE_REF.sub(" ", question))


def _strip_opener(text: str) -> str:
    return _OPENER.sub("", text.strip()).strip()


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _bare(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word.rstrip(".")
