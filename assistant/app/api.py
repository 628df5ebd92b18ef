"""The app's API and MCP tools: plain functions over the front object. `ui.py` publishes each with the
`guide` argument bound (the docstrings are the tools' descriptions), turning a UserError into the error the
client sees. Results are JSON-ready dicts from assistant/serialize.py, the CLI's `--json` shapes."""

from __future__ import annotations

from typing import Any

from assistant.app.options import MAX_K, clamp, too_long
from assistant.backend_status import BACKENDS
from assistant.chain import Query
from assistant.guide import Guide
from assistant.serialize import answer_dict, hits_list, plan_dict
from core.errors import UserError

API_PASSAGES = 2  # passages per hit the search tool returns, each cut to API_PASSAGE_CHARS
API_PASSAGE_CHARS = 600
MAX_READ_REFS = 200


def _check(text: str) -> None:
    if problem := too_long(text or ""):
        raise UserError(problem)


def search(guide: Guide, query: str, k: int = 5, tier: int | None = None, topic: str = "", kind: str = "",
           unread_only: bool = False) -> list[dict[str, Any]]:
    """Hybrid search (BM25 + embeddings + rerank, no LLM) over the tiered GPU performance-engineering reading list.

    Args:
        query: What to look for, e.g. "tensor core mma pipelining" (at most 2000 characters).
        k: How many resources to return, 1 to 20.
        tier: Only this tier of the list (1 essential, 2 deeper, 3 advanced); leave empty for any tier.
        topic: Only topics whose name contains this text, e.g. "Attention"; empty for any.
        kind: Only this kind: paper, blog, docs, repo, book, video, community, model or site; empty for any.
        unread_only: Leave out resources the learner has marked read.

    Returns:
        Resources best first: id, title, url, kind, tier, place (topic › section · tier), list_url,
        confidence, resource (the full catalog record), passages (chunk_id, heading_path, score, text).
    """
    _check(query)
    hits = guide.search(query, k=clamp(k, 1, MAX_K, 5), tier=tier, topic=topic, kind=kind, unread_only=unread_only)
    return hits_list(hits, guide.settings.catalog.list_url, passages=API_PASSAGES, passage_chars=API_PASSAGE_CHARS)


def ask(guide: Guide, question: str, backend: str = "", tier: int | None = None, topic: str = "", kind: str = "",
        unread_only: bool = False, k: int = 3) -> dict[str, Any]:
    """Answer a question about GPU performance engineering from the reading list, with numbered citations.

    Questions about what to read next go to the reading planner (the list's tier order, the learner's progress).

    Args:
        question: The question, e.g. "How does FlashAttention avoid writing to HBM?" (at most 2000 characters).
        backend: embedded, extractive, ollama or openai; empty for the server's default.
        tier: Only cite this tier (1, 2 or 3); leave empty for any tier.
        topic: Only cite topics whose name contains this text; empty for any.
        kind: Only cite this kind: paper, blog, docs, repo, book, video, community, model or site; empty for any.
        unread_only: Only cite resources the learner has not marked read.
        k: How many sources the answer may draw on, 1 to 8.

    Returns:
        The answer: text with [n] markers, citations (title, url, place, list_url, passage), route, fallback.
    """
    _check(question)
    if backend and backend not in BACKENDS:
        raise UserError(f"backend must be one of {', '.join(BACKENDS)}")
    query = Query(question, tier=tier, topic=topic or None, kind=kind or None, unread_only=unread_only,
                  backend=backend or None, k=clamp(k, 1, 8, 3))
    return answer_dict(guide.ask(query))


def next_reads(guide: Guide, interest: str = "", k: int = 5, read: list[str] | None = None) -> dict[str, Any]:
    """What to read next in the GPU performance-engineering list: its tier order, skipping what was read.

    Args:
        interest: What the learner wants to get good at, e.g. "attention kernels"; empty for the plain order.
        k: How many picks to return, 1 to 20.
        read: What else to count as read for this plan only (the stored progress is not changed): resource ids,
            URLs, or free text such as "the Tier 1 profiling material and siboehm's matmul post".

    Returns:
        picks (id, title, url, kind, tier, place, list_url, reason, time), the focus topics the plan starts
        from, counted_as_read, read (everything the plan skipped as read) and time_total.
    """
    _check(interest)
    refs = (read or [])[:MAX_READ_REFS]
    for ref in refs:
        _check(ref)
    planned = guide.plan(interest=interest or "", k=clamp(k, 1, MAX_K, 5), read=refs)
    return plan_dict(planned.plan, guide.settings.catalog.list_url, counted_as_read=planned.said,
                     read=planned.read, times=guide.times())


def reading_state(guide: Guide, resource: str, state_name: str = "") -> dict[str, Any]:
    """Get or set the learner's reading state of one resource of the GPU reading list.

    Args:
        resource: The resource's id, URL or exact title (ids are in every search and next_reads result).
        state_name: unread, reading, read or skipped to set it; empty to only read it.

    Returns:
        id, title, state, and its reading time (minutes, or null when unknown, with the basis).
    """
    from assistant.profile import STATES

    res = guide.resolve((resource or "")[:2000])
    if state_name:
        if state_name not in STATES:
            raise UserError(f"state must be one of {', '.join(STATES)}")
        guide.set_state([res.id], state_name)
    est = guide.times().get(res.id)
    return {"id": res.id, "title": res.title, "state": guide.states().get(res.id, "unread"),
            "time": est.to_dict() if est is not None else None}


def learning_path(guide: Guide, topic: str = "") -> dict[str, Any]:
    """The learner's path through the GPU reading list: states and time left per topic × tier and in all.

    Args:
        topic: Only topics whose name contains this text; empty for the whole path.

    Returns:
        summary, time_left (minutes, unknown count, label), states (counts), and groups (topic, tier,
        time_left, states, resources with id, title, url, state and time), in the list's order.
    """
    data = guide.learning_path().to_dict(guide.settings.catalog.list_url)
    if topic:
        data["groups"] = [g for g in data["groups"] if topic.lower() in str(g["topic"]).lower()]
    return data


def summary(guide: Guide, resource: str) -> dict[str, Any]:
    """A short summary of one resource (key points, each cited to a passage of that resource's own text).

    Args:
        resource: The resource's id, URL or exact title.

    Returns:
        mode (generated, extracted or no-text) with its label, points (text and cite: passage number,
        chunk_id, url, heading, start, end, quote), note, dropped.
    """
    return guide.summary((resource or "")[:2000]).to_dict()


def self_check(guide: Guide, resource: str) -> dict[str, Any]:
    """Three self-check questions with answers about one resource, each cited to a passage of its own text.

    Args:
        resource: The resource's id, URL or exact title.

    Returns:
        mode, label, questions (question, answer, cite), note, dropped.
    """
    return guide.self_check((resource or "")[:2000]).to_dict()


TOOLS = (search, ask, next_reads, reading_state, learning_path, summary, self_check)
