""""What should I read next?": the guide's reading order applied to one learner's progress.

The guide's rule is Tier 1 of every topic, then Tier 2, then Tier 3. On top of it a learner's focus
comes first: the topic they ask about, then the topics they are already reading. Within a focus topic
the next pick is its lowest unfinished tier; someone who read ahead without its Tier 1 is pointed back.
Nothing read is ever recommended, and every pick says why in one line.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from ingest.records import Resource

_STOP = {
    "a", "about", "actually", "after", "all", "already", "also", "an", "and", "any", "are", "around", "at",
    "be", "been", "better", "blog", "but", "by", "can", "come", "comes", "do", "done", "else", "everything",
    "finished", "first", "for", "from", "general", "get", "go", "gone", "good", "have", "how", "i", "i'd",
    "i've", "in", "into", "is", "it", "its", "just", "like", "living", "material", "me", "more", "my",
    "never", "next", "now", "of", "on", "only", "or", "people", "plus", "post", "read", "see", "should",
    "so", "staying", "that", "the", "then", "there", "this", "through", "tier", "to", "topic", "track",
    "want", "was", "what", "what's", "where", "which", "with", "would", "you", "focus", "basics", "start",
}
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9][a-z0-9+\-]*", text.lower().replace("/", " "))
    return [_stem(w) for w in words if w not in _STOP and len(w) > 1]


@dataclass(frozen=True)
class Pick:
    resource: Resource
    reason: str


@dataclass
class Plan:
    picks: list[Pick]
    focus_topics: list[str] = field(default_factory=list)
    read_ids: set[str] = field(default_factory=set)


def topic_interest(text: str, resources: list[Resource]) -> dict[str, float]:
    """How strongly a free-text interest points at each topic (0..1), by IDF-weighted term overlap
    with the topic's and sections' names (full weight) and its resources' titles and notes (less)."""
    if not text.strip():
        return {}
    names: dict[str, Counter[str]] = defaultdict(Counter)
    for res in resources:
        for term in _terms(res.topic) + _terms(res.section):
            names[res.topic][term] = max(names[res.topic][term], 3)
        for term in _terms(f"{res.title} {res.note}"):
            names[res.topic][term] = max(names[res.topic][term], 1)
    df = Counter(term for vocab in names.values() for term in vocab)
    n_topics = len(names)
    scores: dict[str, float] = {}
    query = set(_terms(text))
    for topic, vocab in names.items():
        score = sum(vocab[t] * math.log(1 + n_topics / df[t]) for t in query if t in vocab)
        if score > 0:
            scores[topic] = score
    top = max(scores.values(), default=0.0)
    return {t: s / top for t, s in scores.items()} if top else {}


def resolve_mentions(text: str, resources: list[Resource]) -> list[Resource]:
    """Resources a learner names in passing ("I've finished siboehm's post and PMPP"): URLs, ids,
    acronyms in a title's parentheses, distinctive titles and author handles, matched fuzzily."""
    low = text.lower()
    found: list[Resource] = []
    author_counts = Counter(r.authors.lower() for r in resources if r.authors)
    for res in resources:
        names: list[str] = []
        if res.url:
            names.append(res.url.lower().split("://", 1)[-1].removeprefix("www.").rstrip("/"))
        names += [a.lower() for a in re.findall(r"\(([A-Z][A-Za-z0-9-]{2,})\)", res.title)]
        head = res.title.split(":")[0].strip().lower()
        if len(head) >= 8:
            names.append(head)
        if res.authors and author_counts[res.authors.lower()] == 1 and len(res.authors) >= 5:
            names.append(res.authors.lower())
        for name in names:
            if re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", low) or (
                len(name) >= 12 and fuzz.partial_ratio(name, low) >= 92
            ):
                found.append(res)
                break
    return found


def plan_next(
    resources: list[Resource], read_ids: set[str], interest: str = "", k: int = 5
) -> Plan:
    """Unread picks in the guide's order, the learner's focus first."""
    by_topic: dict[str, list[Resource]] = defaultdict(list)
    for res in sorted(resources, key=lambda r: r.position):
        by_topic[res.topic].append(res)
    topic_order = list(by_topic)
    read = [r for r in resources if r.id in read_ids]
    progress = Counter(r.topic for r in read)
    interest_scores = topic_interest(interest, resources)

    def focus_key(topic: str) -> tuple[float, int]:
        share = progress[topic] / len(by_topic[topic])
        return (-(interest_scores.get(topic, 0.0) + 0.5 * share), topic_order.index(topic))

    focus = sorted({*progress, *(t for t, s in interest_scores.items() if s >= 0.5)}, key=focus_key)
    picks: list[Pick] = []
    chosen: set[str] = set()

    def add(res: Resource, reason: str) -> None:
        if res.id not in read_ids and res.id not in chosen:
            picks.append(Pick(res, reason))
            chosen.add(res.id)

    for topic in focus:
        for res, reason in _next_in_topic(by_topic[topic], read_ids, asked=topic in interest_scores):
            add(res, reason)
    for tier in sorted({r.tier for r in resources if r.tier is not None}):
        for topic in topic_order:
            for res in by_topic[topic]:
                if res.tier == tier:
                    add(res, f"Tier {tier} · {topic} — the guide reads Tier {tier} of every topic before Tier {tier + 1}")
    for res in sorted(resources, key=lambda r: r.position):
        if res.tier is None:
            add(res, f"{res.topic} › {res.section} — further reading once the tiers are done")
    return Plan(picks=picks[:k], focus_topics=focus, read_ids=set(read_ids))


def _next_in_topic(topic_items: list[Resource], read_ids: set[str], asked: bool) -> list[tuple[Resource, str]]:
    topic = topic_items[0].topic
    tiers = sorted({r.tier for r in topic_items if r.tier is not None})
    read_here = [r for r in topic_items if r.id in read_ids]
    unread = [r for r in topic_items if r.id not in read_ids and r.tier is not None]
    if not unread:
        return []
    lowest = min(r.tier for r in unread if r.tier is not None)
    first_tier = tiers[0]
    ahead = [r for r in read_here if r.tier is not None and r.tier > lowest]
    started = [r for r in read_here if r.tier == lowest]
    if lowest == first_tier and ahead and not started:
        names = ", ".join(r.title for r in ahead[:2])
        why = f"Tier {lowest} · {topic} — back to basics: you read ahead ({names}) before this tier"
    elif started:
        why = f"Tier {lowest} · {topic} — finishes the tier you started with {started[-1].title}"
    elif read_here:
        done = [r for r in read_here if r.tier is not None and r.tier < lowest]
        last = (done or read_here)[-1].title
        below = max((t for t in tiers if t < lowest), default=None)
        after = f"Tier {below}, which you finished" if below is not None else "what you read"
        why = f"Tier {lowest} · {topic} — next after {after} ({last})"
    elif asked:
        why = f"Tier {lowest} · {topic} — where the guide starts on the topic you asked about"
    else:
        why = f"Tier {lowest} · {topic} — the guide's next tier for this topic"
    return [(r, why) for r in unread if r.tier == lowest]
