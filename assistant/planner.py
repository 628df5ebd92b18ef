""""What should I read next?": the guide's reading order applied to one learner's progress.

The guide's rule is Tier 1 of every topic, then Tier 2, then Tier 3. On top of it a learner's focus
comes first: the topic they ask about (reading inside a topic is no focus unless they say so). Within a
focus topic the picks go lowest unfinished tier first; someone who read ahead of a lower tier is pointed
back to it before the guide's order continues.
Nothing read is ever recommended, and every pick says why in one line.
"""

from __future__ import annotations

import functools
import logging
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.reading import Understanding, reader_for
from assistant.readtime import Estimate, Total, estimate_all, stored_chunks, stored_continuations, total
from assistant.records import Answer, Citation
from core.errors import UserError
from core.records import Resource
from ingest.store import ChunkStore

if TYPE_CHECKING:
    from assistant.route import RouteDecision
    from core.settings import Settings

log = logging.getLogger(__name__)

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
    """How strongly a free-text interest points at each topic (0..1), from the catalog's own words."""
    return reader_for(resources).interest(text)


def resolve_mentions(text: str, resources: list[Resource]) -> list[Resource]:
    """Resources a learner says they have read ("I've finished siboehm's post and PMPP")."""
    return reader_for(resources).understand(text).read


def plan_next(
    resources: list[Resource], read_ids: set[str], interest: str = "", k: int = 5,
    interest_scores: dict[str, float] | None = None, focus_threshold: float = 0.5,
    reading_ids: set[str] | frozenset[str] = frozenset(), skipped_ids: set[str] | frozenset[str] = frozenset(),
    subject: str = "", subject_ids: Sequence[str] = (), backfill: bool = False,
) -> Plan:
    """Unread picks in the guide's order, the learner's focus first. `interest_scores` (topic → 0..1)
    replaces the scores of the `interest` text when the caller has already understood it.

    What the learner is reading comes first (finish before starting more), then the rules below; read and
    skipped resources are never picked, and a skipped one counts as done when finding a topic's next tier.
    `subject_ids` ("anything else about `subject`?", best first) come before the guide's order. `backfill`
    ("did I skip something?"): only the strongest focus counts, and it gives its lowest unread tier and every
    unread tier below the highest one read there, then the guide's order: never its harder tiers to a learner
    who got lost in them."""
    by_topic: dict[str, list[Resource]] = defaultdict(list)
    for res in sorted(resources, key=lambda r: r.position):
        by_topic[res.topic].append(res)
    topic_order = list(by_topic)
    reading_ids = set(reading_ids) - set(read_ids) - set(skipped_ids)
    done_ids = set(read_ids) | set(skipped_ids)
    if interest_scores is None:
        interest_scores = topic_interest(interest, resources)

    def focus_key(topic: str) -> tuple[float, int]:
        return (-interest_scores.get(topic, 0.0), topic_order.index(topic))

    # Only what the learner asks for is a focus: reading inside a topic is not one (the guide's rule is
    # Tier 1 of every topic before any Tier 2).
    focus = sorted((t for t, s in interest_scores.items() if s >= focus_threshold and t in by_topic), key=focus_key)
    picks: list[Pick] = []
    chosen: set[str] = set()

    def add(res: Resource, reason: str) -> None:
        if res.id not in done_ids and res.id not in chosen:
            picks.append(Pick(res, reason))
            chosen.add(res.id)

    for res in sorted(resources, key=lambda r: r.position):
        if res.id in reading_ids:
            where = f"Tier {res.tier} · {res.topic}" if res.tier is not None else f"{res.topic} › {res.section}"
            add(res, f"{where} — you are reading this: finish it before starting more")
    for rid in subject_ids:  # "anything else about X": the items about X, wherever they are
        res = next((r for r in resources if r.id == rid), None)
        if res is not None:
            where = f"Tier {res.tier} · {res.topic}" if res.tier is not None else f"{res.topic} › {res.section}"
            add(res, f"{where} — about {subject or 'what you asked'}, elsewhere in the guide")
    if backfill:  # the place they got lost in; a second topic the words touch is no prerequisite
        focus = focus[:1]
    for topic in focus:  # a focus: its lowest unread tier first, then its next tiers
        for res, reason in _next_in_topic(by_topic[topic], read_ids, asked=True, skipped_ids=set(skipped_ids)):
            add(res, reason)
        if backfill:  # ... and every unread tier below the highest one read there
            for res in _below_read_tier(by_topic[topic], read_ids):
                add(res, f"Tier {res.tier} · {topic} — below the tier you read ahead to")
            continue
        for res in sorted(by_topic[topic], key=lambda r: (r.tier if r.tier is not None else 99, r.position)):
            where = f"Tier {res.tier} · {topic}" if res.tier is not None else f"{topic} › {res.section}"
            add(res, f"{where} — the next tier of the topic you asked about")
    for topic in topic_order:  # read ahead of a lower tier: back-fill it before the guide's order
        below = _below_read_tier(by_topic[topic], read_ids)
        if any(r.id not in done_ids for r in below):
            for res, reason in _next_in_topic(by_topic[topic], read_ids, asked=False, skipped_ids=set(skipped_ids)):
                add(res, reason)
            for res in below:
                add(res, f"Tier {res.tier} · {topic} — below the tier you read ahead to")
    for tier in sorted({r.tier for r in resources if r.tier is not None}):
        for topic in topic_order:
            for res in by_topic[topic]:
                if res.tier == tier:
                    add(res, f"Tier {tier} · {topic} — the guide reads Tier {tier} of every topic before Tier {tier + 1}")
    for res in sorted(resources, key=lambda r: r.position):
        if res.tier is None:
            add(res, f"{res.topic} › {res.section} — further reading once the tiers are done")
    return Plan(picks=picks[:k], focus_topics=focus, read_ids=set(read_ids))


def _below_read_tier(topic_items: list[Resource], read_ids: set[str]) -> list[Resource]:
    """The topic's tiered items below the highest tier read in it, lowest tier first (read ones included:
    the caller's `add` skips them)."""
    top = max((r.tier for r in topic_items if r.id in read_ids and r.tier is not None), default=0)
    return sorted((r for r in topic_items if r.tier is not None and r.tier < top), key=lambda r: (r.tier, r.position))


def _next_in_topic(topic_items: list[Resource], read_ids: set[str], asked: bool,
                   skipped_ids: set[str] | None = None) -> list[tuple[Resource, str]]:
    topic = topic_items[0].topic
    tiers = sorted({r.tier for r in topic_items if r.tier is not None})
    read_here = [r for r in topic_items if r.id in read_ids]
    skipped = skipped_ids or set()
    unread = [r for r in topic_items if r.id not in read_ids and r.id not in skipped and r.tier is not None]
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


class NextReads:
    """The planner as a chat question meets it: understand the sentence (reading.py), decide whether it
    asks for reading at all (route.py), plan with the guide's rules, and say what was understood."""

    def __init__(self, resources: list[Resource], embedder: Any = None, extra_authors: dict[str, str] | None = None,
                 route_weights: dict[str, float] | None = None, route_intercept: float = 0.0,
                 route_threshold: float = 0.5, focus_threshold: float = 0.5, list_url: str = "") -> None:
        from assistant.reading import Reader
        from assistant.route import Router

        embed_query = embedder.embed_query if embedder is not None else None
        embed_documents = embedder.embed_documents if embedder is not None else None
        self.resources = resources
        english = embedder.english_words() if embedder is not None and hasattr(embedder, "english_words") else None
        self.reader = Reader(resources, embed_query, embed_documents, extra_authors=extra_authors, english=english)
        self.router = Router(self.reader, route_weights or {}, route_intercept, route_threshold,
                             embed_query, embed_documents)
        self.focus_threshold = focus_threshold
        self.list_url = list_url
        self.times: dict[str, Estimate] = {}  # reading time by resource id; the answer says what the picks take

    def decide(self, question: str) -> RouteDecision:
        return self.router.decide(question)

    def is_next(self, question: str) -> bool:
        return self.decide(question).route == "next"

    def plan(self, question: str, profile_read: set[str], k: int = 5,
             states: dict[str, str] | None = None) -> tuple[Understanding, Plan]:
        """`states` (id → reading / read / skipped, the profile's) adds what is being read and skipped."""
        understanding = self.reader.understand(question)
        read = set(profile_read) | understanding.read_ids
        states = states or {}
        set_aside = {i for i, st in states.items() if st == "skipped"} | {r.id for r in understanding.named}
        plan = plan_next(self.resources, read, k=k, interest_scores=understanding.interest,
                         focus_threshold=self.focus_threshold,
                         reading_ids={i for i, st in states.items() if st == "reading"},
                         skipped_ids=set_aside,
                         subject=understanding.subject, subject_ids=understanding.subject_ranking,
                         backfill=understanding.gap)
        return understanding, plan

    def answer(self, question: str, profile_read: set[str], k: int = 5, states: dict[str, str] | None = None) -> Answer:
        understanding, plan = self.plan(question, profile_read, k, states)
        citations = [
            Citation(n=n, resource_id=p.resource.id, title=p.resource.title, url=p.resource.url,
                     topic=p.resource.topic, section=p.resource.section, tier=p.resource.tier,
                     list_url=self.list_url + p.resource.list_anchor, passage=p.resource.note, score=1.0,
                     kind=p.resource.kind, page_text=False)  # the passage is the list's note: link the page plainly
            for n, p in enumerate(plan.picks, start=1)
        ]
        reading = {r.id for m in understanding.reading_now for r in m.resources}  # not finished: not offered as read
        new_reads = [r.id for r in understanding.read if r.id not in profile_read and r.id not in reading]
        return Answer(
            text=explain(understanding, plan, profile_read, self.times), citations=citations, abstained=False, route="next",
            question=question, standalone_question=question, backend="planner", read_ids=new_reads,
            focus_topics=[t for t in plan.focus_topics if understanding.interest.get(t, 0.0) >= self.focus_threshold],
        )


def explain(understanding: Understanding, plan: Plan, profile_read: set[str],
            times: dict[str, Estimate] | None = None) -> str:
    """"Counting as read: …", "Focus: …", then the picks with one reason each (and their reading time when
    `times` is given), so the learner can correct us."""
    lines = []
    finished = [m for m in understanding.mentions if m not in understanding.reading_now]
    if finished:
        said = "; ".join(dict.fromkeys(m.label for m in finished))
        lines.append(f"Counting as read: {said}.")
    elif profile_read:
        lines.append(f"Counting as read: the {len(profile_read)} resources marked read in your progress.")
    else:
        lines.append("Counting as read: nothing yet (say what you have read, or tick it in the Guide tab).")
    if understanding.reading_now:
        now = "; ".join(dict.fromkeys(m.label for m in understanding.reading_now))
        lines.append(f"Reading now: {now} (the picks come after it).")
    if understanding.unplaced:
        lines.append(f"I couldn't place: {'; '.join(understanding.unplaced)} (not counted; use a title from the "
                     "guide, or tick it in the Guide tab).")
    if understanding.named:
        lines.append(f"Named, not counted as read: {'; '.join(r.title for r in understanding.named[:3])} (left out of "
                     "the picks; say \"I've read …\" or tick it in the Guide tab to count it).")
    asked = [t for t in plan.focus_topics if understanding.interest.get(t, 0.0) > 0]
    if understanding.subject:
        lines.append(f"Asked about: {understanding.subject}, across every topic of the guide.")
    elif asked and understanding.gap:
        lines.append(f"Focus: {asked[0]}: its lower tiers first (you got lost there or asked whether you skipped "
                     "something), then the guide's order.")
    elif asked:
        lines.append(f"Focus: {', '.join(asked[:3])}.")
    elif plan.focus_topics:
        lines.append(f"Focus: {', '.join(plan.focus_topics[:3])} (the topics you are reading).")
    else:
        lines.append("Focus: none stated; the guide's order (Tier 1 of every topic first).")
    if not plan.picks:
        lines.append("You have read everything in the guide.")
        return "\n".join(lines)
    lines.append("Next reads, in the guide's order:")
    if not times:
        lines += [f"{n}. {p.resource.title} — {p.reason} [{n}]" for n, p in enumerate(plan.picks, start=1)]
        return "\n".join(lines)
    for n, p in enumerate(plan.picks, start=1):
        est = times.get(p.resource.id)
        took = f" ({est.label()})" if est is not None else ""
        lines.append(f"{n}. {p.resource.title}{took} — {p.reason} [{n}]")
    lines.append(f"Reading time of these picks: {plan_time(plan, times).label()}.")
    return "\n".join(lines)


def plan_time(plan: Plan, times: dict[str, Estimate]) -> Total:
    """How long the plan's picks take together (unknown ones counted apart)."""
    return total(times[p.resource.id] for p in plan.picks if p.resource.id in times)


def page_authors(store_file: Path) -> dict[str, str]:
    """Author names the crawled pages give (a paper's full author list), by resource id; {} without a store.

    Read through the chunk store, so its schema version is checked (and migrated) like everywhere else."""
    if not store_file.exists():
        return {}
    try:
        documents = ChunkStore(store_file).documents()
    except UserError as exc:
        log.warning("page authors unavailable: %s", exc)
        return {}
    out: dict[str, str] = {}
    for doc in documents:
        if doc.authors:
            out[doc.resource_id] = f"{out.get(doc.resource_id, '')} {doc.authors}".strip()
    return out


def next_reads_for(settings: Settings, resources: list[Resource], embedder: Any = None) -> NextReads:
    """The planner front for one Assistant: the searcher's embedder (no second model), settings' knobs."""
    knobs = settings.planner
    front = NextReads(
        resources, embedder=embedder, extra_authors=page_authors(settings.store_file),
        route_weights=dict(knobs.route_weights), route_intercept=knobs.route_intercept,
        route_threshold=knobs.route_threshold, focus_threshold=knobs.focus_threshold,
        list_url=settings.catalog.list_url,
    )
    try:
        front.times = estimate_all(resources, stored_chunks(settings), settings.learning, stored_continuations(settings))
    except UserError as exc:  # times are extra: a plan without them is still a plan
        log.warning("reading times unavailable: %s", exc)
    return front


@functools.lru_cache(maxsize=1)
def default_next_reads() -> NextReads:
    """Routing for callers without an Assistant: the bundled catalog and the packaged embedder
    (the model itself is shared per process; query vectors stay in memory)."""
    from core.settings import Settings as _Settings
    from index.embed import Embedder, EmbeddingCache
    from ingest.catalog import load_catalog

    settings = _Settings(home=Path(tempfile.gettempdir()) / "gpuguide-routing")
    embedder = Embedder(settings, cache=EmbeddingCache(Path(":memory:")))
    return next_reads_for(settings, load_catalog(), embedder)
