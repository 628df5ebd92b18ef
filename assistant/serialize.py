"""The one JSON shape of hits, answers and plans: what `gpuguide search|ask|next --json` print, what the app's
API / MCP tools return, and what the chat keeps of each answer. Plain dicts of JSON types, field names stable
(tests, docs and MCP clients read them).

A hit carries its resource twice on purpose: nested as `resource` (the CLI's shape) and its identifying fields
flat (`id`, `title`, `url`, `kind`, `topic`, `section`, `tier`: the API's shape), so both readers keep working.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from assistant.records import Answer
from core.records import Chunk, Resource

HIT_FLAT_FIELDS = ("id", "title", "url", "kind", "topic", "section", "tier")


def _trim(text: str, limit: int | None) -> str:
    if limit is None:
        return text
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


def resource_dict(res: Resource, list_url: str) -> dict[str, Any]:
    """The catalog record plus where it sits in the list: `place` (topic › section · tier) and `list_url`."""
    return {**res.to_dict(), "place": res.place, "list_url": list_url + res.list_anchor}


def passage_dict(chunk: Chunk, score: float, chars: int | None = None) -> dict[str, Any]:
    return {"chunk_id": chunk.chunk_id, "heading_path": list(chunk.heading_path), "score": round(float(score), 6),
            "text": _trim(chunk.text, chars)}


def hit_dict(hit: Any, rank: int, list_url: str, passages: int | None = None,
             passage_chars: int | None = None) -> dict[str, Any]:
    """One index `ResourceHit`; `passages` / `passage_chars` cap what goes out (the API keeps tool output short)."""
    res = hit.resource
    record = res.to_dict()
    return {
        "rank": rank,
        **{name: record[name] for name in HIT_FLAT_FIELDS},
        "resource": record,
        "score": round(float(hit.score), 6),
        "confidence": round(float(hit.confidence), 4),
        "place": res.place,
        "list_url": list_url + res.list_anchor,
        "passages": [passage_dict(c, s, passage_chars) for c, s in hit.passages[:passages]],
    }


def hits_list(hits: list[Any], list_url: str, passages: int | None = None,
              passage_chars: int | None = None) -> list[dict[str, Any]]:
    return [hit_dict(h, i, list_url, passages, passage_chars) for i, h in enumerate(hits, start=1)]


def search_dict(query: str, outcome: str, scope_probability: float, hits: list[Any],
                list_url: str) -> dict[str, Any]:
    """`gpuguide search --json`: the query, what the search means (answer / weak / out_of_scope), the hits."""
    return {"query": query, "outcome": outcome, "scope_probability": round(float(scope_probability), 4),
            "hits": hits_list(hits, list_url)}


def answer_dict(answer: Answer) -> dict[str, Any]:
    """Every field of the `Answer` record, each citation with its `place` in the list and its `link` (the page
    scrolled to the supporting sentence; `url` stays the plain page) added."""
    data = asdict(answer)
    for cite, out in zip(answer.citations, data["citations"], strict=True):
        out["place"] = cite.place
        out["link"] = cite.link
    return data


def plan_dict(plan: Any, list_url: str, counted_as_read: set[str] | list[str],
              read: set[str] | None = None, times: dict[str, Any] | None = None) -> dict[str, Any]:
    """A planner `Plan`: its focus topics and picks (each a resource record with `reason`); `counted_as_read` is
    what the request said was read; `read` (the CLI's) everything the plan skipped as read. With `times`
    (readtime `Estimate`s by id) each pick has its `time` and the plan its `time_total`."""
    out: dict[str, Any] = {} if read is None else {"read": sorted(read)}
    out |= {
        "counted_as_read": sorted(counted_as_read),
        "focus_topics": list(plan.focus_topics),
        "picks": [{**resource_dict(p.resource, list_url), "reason": p.reason} for p in plan.picks],
    }
    if times is not None:
        from assistant.readtime import total

        for pick, record in zip(plan.picks, out["picks"], strict=True):
            est = times.get(pick.resource.id)
            record["time"] = est.to_dict() if est is not None else None
        out["time_total"] = total(times[p.resource.id] for p in plan.picks if p.resource.id in times).to_dict()
    return out
