"""A sentence that leans on the one before it ("It exploits ...", "These instructions ...", "This is because ...")
after the one before was dropped.

A small model often opens with a sentence that fails the check and goes on with "It ..." or "This ...". Shown
alone, the second sentence either dangles ("It exploits asynchrony ...": what does?) or, worse, inherits the
dropped sentence's claim: "DPX instructions enable 128 operations per cycle by ..." (dropped: its passage is
about something else) followed by "This is achieved through the use of warp schedulers" reads as the answer.
So the reference is resolved where the dropped sentence names it in the question's own words (its subject for
"It / They / Its / Their", the noun phrase for "These instructions"), "This is because X" becomes "X", a joining
word goes ("Additionally, X" → "X"), and any other reference back is dropped with the sentence it leans on. The resolved sentence is then checked like any
other, so a subject the passage does not mention is caught by the off-subject check.
"""

from __future__ import annotations

import re

from assistant.sentences import AUXILIARIES, terms

# General English: pronouns that stand for the previous sentence's subject, and determiners that point at a noun
# it named ("These instructions").
SUBJECT_PRONOUNS = frozenset({"it", "they"})
POSSESSIVES = frozenset({"its", "their"})
DEMONSTRATIVES = frozenset({"this", "these", "that", "those"})
MAX_SUBJECT_WORDS = 6  # a subject longer than this is a clause, not a name for "it"
# connectives that join a sentence to the one before ("Additionally, ...", "However, it ..."): general English
_CONNECTIVE = re.compile(r"^(?:additionally|moreover|furthermore|however|also|similarly|likewise|therefore|thus|hence|"
                         r"consequently|instead|finally|meanwhile|in addition|for example|for instance|as a result|"
                         r"in contrast|in other words),\s+(?=\S)", re.IGNORECASE)
_BECAUSE = re.compile(r"^(?:this|that) is (?:because|since)\s+(?=\S)", re.IGNORECASE)

# what opens a verb's object: the word before it is a verb, not a noun
_OBJECT_OPENERS = frozenset({"a", "an", "the", "this", "these", "that", "those", "it", "them", "its", "their", "us",
                             "you", "our", "your", "each", "every", "all", "more", "less"})


def _bare(word: str) -> str:
    return word.strip(",;:.!?\"'()“”‘’").lower()


def _verbish(word: str) -> bool:
    """A finite verb, roughly: an auxiliary or a lower-case word ending like "uses" / "reduced"."""
    w = _bare(word)
    if w in AUXILIARIES:
        return True
    plural_or_third_person = w.endswith("s") and not w.endswith(("ss", "us", "is"))
    return word[:1].islower() and w.isalpha() and (w.endswith("ed") or plural_or_third_person)


def _content(phrase: str) -> set[str]:
    return set(terms(phrase))


def subject(antecedent: str, question: str) -> str:
    """The antecedent's opening noun phrase, when the question names it: the words before its verb (the first
    auxiliary among the first words, else the first word ending like "uses" / "reduced"), at most
    `MAX_SUBJECT_WORDS`, whose content words the question all holds ("FlashAttention-3 uses Hopper GPUs by ..."
    → "FlashAttention-3"). "" when there is none."""
    words = antecedent.split()
    opening = [_bare(w) for w in words[:MAX_SUBJECT_WORDS + 1]]
    verb = next((i for i, w in enumerate(opening) if i and w in AUXILIARIES), None)
    if verb is None:
        verb = next((i for i, w in enumerate(words[:MAX_SUBJECT_WORDS + 1]) if i and _verbish(w)), None)
    if verb is None:
        return ""
    phrase = " ".join(words[:verb])
    named = _content(phrase)
    if any(w[-1:] in ",;:()" for w in words[:verb]) or not named or not named <= _content(question):
        return ""
    return phrase


def noun_phrase(noun: str, antecedent: str) -> str:
    """The antecedent's noun phrase that ends in `noun` as written ("a tree-based attention mechanism" →
    "tree-based attention mechanism"): the noun and the content words right before it. A match that an article
    or a pronoun follows is a verb ("Tiling allows the kernel ..."), not a name for "This allows". "" when the
    antecedent does not name it."""
    want = _bare(noun)
    words = antecedent.split()
    for i, word in enumerate(words):
        if _bare(word) != want or not _content(word) or word.endswith(("(", ")")):
            continue
        if i + 1 < len(words) and _bare(words[i + 1]) in _OBJECT_OPENERS:
            continue
        start = i
        while start > 0 and _content(words[start - 1]) and not _verbish(words[start - 1]) \
                and words[start - 1][-1:] not in ",;:)" and i - start < MAX_SUBJECT_WORDS - 1:
            start -= 1
        return " ".join(words[start:i] + [word.rstrip(",;:.!?")])
    return ""


def resolved(sentence: str, antecedent: str, question: str) -> str | None:
    """`sentence` standing on its own once its antecedent is gone: unchanged when it does not refer back, its
    reference replaced by what the antecedent names in the question's words, or None when it leans on the
    antecedent in a way that cannot be written out ("This allows ...", "These include ...")."""
    if joined := _CONNECTIVE.match(sentence):  # "However, it ..." → "It ...", then as any other sentence
        rest = sentence[joined.end():]
        return resolved(rest[0].upper() + rest[1:], antecedent, question)
    words = sentence.split()
    if len(words) < 2:
        return sentence
    first = _bare(words[0])
    if first in SUBJECT_PRONOUNS | POSSESSIVES:
        name = subject(antecedent, question)
        if not name:
            return None
        name = name[0].upper() + name[1:]
        if first in POSSESSIVES:
            name += "'s"
        rest = words[2:] if words[1].lower() == "also" else words[1:]  # "also" adds to what is gone
        return " ".join([name, *rest])
    if first not in DEMONSTRATIVES:
        return sentence
    if because := _BECAUSE.match(sentence):
        rest = sentence[because.end():]
        return rest[0].upper() + rest[1:]
    phrase = noun_phrase(words[1], antecedent) if _bare(words[1]) not in AUXILIARIES else ""
    if not phrase:
        return None  # "This allows ...", "These include ...": the whole dropped claim is what it stands for
    return " ".join(["The", phrase, *words[2:]])
