"""Entity linking for what a learner says they read: split the mentions, link each to catalog items or
groups with a score, and keep the mentions that name nothing apart ("I couldn't place: ...").

Why a linker in front of the phrase rules of reading.py: learners quote titles, half-remember them, list
items in parentheses after a group noun and glue names with slashes. A quoted span is a mention of its
own, linked by how much of a title (or a topic's or section's name) it spells, weighted by how rare each
word is in the catalog; it is never widened to a guess. The rest of the clause goes to the phrase rules
(short forms, authors, hosts, subject + kind + tier), and a mention they cannot link is reported rather
than dropped silently. The only vocabulary here is the catalog's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.records import Resource


@dataclass(frozen=True)
class Group:
    """A topic, a section, or either narrowed to a tier; `label` is how the answer names it."""

    topic: str
    section: str | None
    tier: int | None
    label: str

# a quoted span: straight or curly double quotes, or single quotes that are not apostrophes
_QUOTED = re.compile(r"\"([^\"\n]{2,160})\"|“([^”\n]{2,160})”|‘([^’\n]{2,160})’|(?<![\w'])'([^'\n]{2,160})'(?![\w])")
# the separators of a list of mentions: commas, semicolons, "and", "&", "plus", slashes, parentheses, bullets
MENTION_SPLIT = re.compile(r",|;|&|\+|/|\(|\)|\[|\]|\n\s*[-*•]\s*|\band\b|\bplus\b|\bas well as\b|\balong with\b",
                           re.IGNORECASE)
# a mention is worth reporting as unplaced only when it looks like a name: a capital inside, a digit, or quotes
_NAME_LIKE = re.compile(r"(?:^|\s)\S*[A-Z0-9]\S*")


@dataclass(frozen=True)
class Link:
    """One mention and what it links to: resources (one item, or a group's members) with a 0..1 score."""

    mention: str
    resources: tuple[Resource, ...]
    score: float
    group: Group | None = None


def split_mentions(text: str) -> list[str]:
    """The pieces of a list: "A, B and C", "the agent papers (A, B, C)", "A/B/C"."""
    return [p.strip(" .:-*\"'") for p in MENTION_SPLIT.split(text) if p and p.strip(" .:-*\"'")]


def quoted_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, inner text) of each quoted span, in order."""
    out = []
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        if inner:
            out.append((m.start(), m.end(), inner))
    return out


def looks_like_a_name(mention: str) -> bool:
    """A capitalised word after the first, a digit, or an acronym: worth saying we could not place it."""
    ws = mention.split()
    return bool(ws) and (any(re.search(r"[A-Z0-9]", w) for w in ws[1:]) or bool(re.search(r"\d|[A-Z]{2,}", ws[0])))


class Linker:
    """Links quoted spans against titles and group names of one catalog (built on reading.CatalogIndex)."""

    def __init__(self, index: Any, threshold: float = 0.55) -> None:
        """`index`: a reading.CatalogIndex (passed in, not imported: reading.py builds the linker)."""
        content_terms = index.content_terms
        self.index = index
        self.threshold = threshold
        self._terms = content_terms
        self.title_terms = {r.id: set(content_terms(r.title)) | index._joined(r.title) for r in index.resources}
        self.group_terms: list[tuple[set[str], str, str | None]] = [
            (set(content_terms(t)), t, None) for t in index.topics] + [
            (set(content_terms(s)), t, s) for (t, s) in index.sections]

    def _dice(self, said: set[str], name: set[str]) -> float:
        """IDF-weighted overlap of two term sets, 0..1 (both sides count: a title half said scores half)."""
        w = self.index.weight
        common = sum(w(t) for t in said & name)
        total = sum(w(t) for t in said) + sum(w(t) for t in name)
        return 2 * common / total if total else 0.0

    def link_title(self, span: str) -> Link | None:
        """A quoted span → the item whose title it spells best, or the topic / section it names."""
        said = {self.index.canon(t) for t in self._terms(span)}
        if not said:
            return None
        best_score, best = 0.0, None
        for res in self.index.resources:
            terms = self.title_terms[res.id]
            score = self._dice(said, terms)
            if said <= self.index.strong[res.id] and said & terms:  # "the PMPP book by Hwu": all of it names this one
                score = max(score, 0.9 * self.index.resource_score(sorted(said), res.id))
            if score > best_score or score == best_score and best is not None and res.position < best.position:
                best_score, best = score, res
        g_score, g_best = 0.0, None
        for terms, topic, section in self.group_terms:
            score = self._dice(said, terms)
            if score > g_score:
                g_score, g_best = score, (topic, section)
        if g_best is not None and g_score >= max(self.threshold, best_score + 0.05):
            topic, section = g_best
            members = tuple(r for r in self.index.resources if r.topic == topic and (section is None or r.section == section))
            label = f"all of {topic}" if section is None else f"{topic} › {section}"
            return Link(span, members, g_score, Group(topic, section, None, label))
        if best is None or best_score < self.threshold:
            return None
        return Link(span, (best,), best_score)
