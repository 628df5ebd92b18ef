"""The learner's path through the guide: every resource in the list's order with its reading state and time,
grouped by topic × tier, with the time left per group and for the whole path.

Why one module: the guide tab, the CLI, the API and the Markdown export show the same numbers, so they are
computed once here from plain inputs (catalog, states, estimates).

Time left counts unread and reading resources (how far into a resource a learner is is not recorded, so a
resource being read counts whole); read and skipped ones are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant.profile import READ, READING, SKIPPED, STATES, UNREAD
from assistant.readtime import Estimate, Total, total
from core.records import Resource

LEFT_STATES = (UNREAD, READING)


@dataclass(frozen=True)
class PathItem:
    resource: Resource
    state: str
    estimate: Estimate

    def to_dict(self, list_url: str = "") -> dict[str, object]:
        res = self.resource
        return {"id": res.id, "title": res.title, "url": res.url, "kind": res.kind, "topic": res.topic,
                "section": res.section, "tier": res.tier, "place": res.place, "list_url": list_url + res.list_anchor,
                "state": self.state, "time": self.estimate.to_dict()}


@dataclass
class PathGroup:
    """One topic × tier of the guide (tier None: the untiered further reading of a topic)."""

    topic: str
    tier: int | None
    items: list[PathItem] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.topic} · Tier {self.tier}" if self.tier is not None else f"{self.topic} · further reading"

    def count(self, state: str) -> int:
        return sum(1 for i in self.items if i.state == state)

    @property
    def left(self) -> Total:
        return total(i.estimate for i in self.items if i.state in LEFT_STATES)

    def to_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "tier": self.tier, "label": self.label, "total": len(self.items),
                "states": {s: self.count(s) for s in STATES}, "time_left": self.left.to_dict()}


@dataclass
class LearningPath:
    groups: list[PathGroup]

    @property
    def items(self) -> list[PathItem]:
        return [i for g in self.groups for i in g.items]

    @property
    def left(self) -> Total:
        return total(i.estimate for i in self.items if i.state in LEFT_STATES)

    def count(self, state: str) -> int:
        return sum(g.count(state) for g in self.groups)

    def summary(self) -> str:
        """'3 read, 1 reading, 1 skipped of 20 · time left: 6 h 10 min + 4 unknown'."""
        n = len(self.items)
        done = ", ".join(f"{self.count(s)} {s}" for s in (READ, READING, SKIPPED))
        return f"{done} of {n} · time left: {self.left.label()}"

    def to_dict(self, list_url: str = "") -> dict[str, object]:
        return {"summary": self.summary(), "time_left": self.left.to_dict(),
                "states": {s: self.count(s) for s in STATES},
                "groups": [{**g.to_dict(), "resources": [i.to_dict(list_url) for i in g.items]} for g in self.groups]}


def learning_path(resources: list[Resource], states: dict[str, str], times: dict[str, Estimate]) -> LearningPath:
    """Resources in the list's order, grouped by topic (first appearance) and tier (1, 2, 3, untiered last)."""
    ordered = sorted(resources, key=lambda r: r.position)
    topic_order = {t: i for i, t in enumerate(dict.fromkeys(r.topic for r in ordered))}
    groups: dict[tuple[str, int | None], PathGroup] = {}
    for res in ordered:
        key = (res.topic, res.tier)
        group = groups.setdefault(key, PathGroup(res.topic, res.tier))
        est = times.get(res.id) or Estimate(res.id, None, "unknown", 0, "no estimate")
        group.items.append(PathItem(res, states.get(res.id, UNREAD), est))
    keys = sorted(groups, key=lambda k: (topic_order[k[0]], 99 if k[1] is None else k[1]))
    return LearningPath([groups[k] for k in keys])
