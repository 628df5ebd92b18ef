"""The Chat tab: a question shown at once, then its answer as it grows (sources, draft, verified answer),
follow-ups rewritten from the previous answers, and "add these to my reads" after a reading plan."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from assistant.app.options import clamp, opt, tier_of, too_long
from assistant.backend_status import BACKENDS
from assistant.chain import MAX_QUESTION_CHARS, AnswerEvent, Query
from assistant.conversation import Turn
from assistant.guide import Guide
from assistant.records import Answer
from assistant.render import render_answer, render_error, render_searching, render_streaming, render_user
from assistant.serialize import answer_dict
from core.errors import UserError

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]


def turns(answers: list[dict[str, Any]]) -> list[Turn]:
    """The conversation so far as the follow-up rewrite reads it (assistant/conversation.py)."""
    return [
        Turn(a["question"], a.get("standalone_question") or a["question"], [c["title"] for c in a.get("citations", [])],
             [c.get("resource_id", "") for c in a.get("citations", [])])
        for a in answers
    ]


def user_turn(message: str, history: Messages) -> tuple[Messages, str]:
    """The question shown at once (outside the queue, so a waiting user sees it with their queue position)."""
    question = (message or "").strip()
    if not question:
        return history, ""
    shown = question if len(question) <= MAX_QUESTION_CHARS else question[:MAX_QUESTION_CHARS] + " …"
    return [*history, {"role": "user", "content": render_user(shown)}], question


def chat_reply(stream: Callable[[Query], Iterable[AnswerEvent]], question: str, history: Messages,
               answers: list[dict[str, Any]], backend: str,
               filters: dict[str, Any]) -> Iterator[tuple[Messages, list[dict[str, Any]]]]:
    """The reply as it grows, after `user_turn`: a placeholder, then the sources (with the extractive backend,
    its quoted answer, which is final), then the LLM's draft as it streams, then the verified answer in the
    draft's place: one answer, never an instant one replaced by another. `answers` keeps each final Answer
    (as a dict) so the next question can be rewritten from the previous turns."""
    history = list(history)
    if not question:
        yield history, answers
        return
    if problem := too_long(question):
        yield [*history, {"role": "assistant", "content": render_error(problem)}], answers
        return
    query = Query(question, history=turns(answers), backend=backend, **filters)
    history.append({"role": "assistant", "content": render_searching()})
    yield list(history), answers
    instant: Answer | None = None
    draft = ""
    second = False  # the first draft failed the check; this is the second
    try:
        for event in stream(query):
            if event.kind == "sources" and event.answer is not None:
                instant = event.answer  # with an LLM backend: the sources, no text yet
                waiting = backend if backend != "extractive" and instant.route == "search" and not instant.text else ""
                history[-1] = {"role": "assistant", "content": render_answer(instant, pending=waiting)}
            elif event.kind == "token" and instant is not None:
                draft += event.token
                history[-1] = {"role": "assistant", "content": render_streaming(instant, draft, backend, second)}
            elif event.kind == "redraft" and instant is not None:
                draft, second = "", True
                history[-1] = {"role": "assistant", "content": render_streaming(instant, draft, backend, second)}
            elif event.kind == "final" and event.answer is not None:
                history[-1] = {"role": "assistant", "content": render_answer(event.answer)}
                answers = [*answers, answer_dict(event.answer)]
            else:
                continue
            yield list(history), answers
    except UserError as exc:
        history[-1] = {"role": "assistant", "content": render_error(str(exc))}
        yield list(history), answers
    except Exception:  # the chat must answer something, never hang on a spinner
        log.exception("answering %r failed", question[:200])
        problem = "Something went wrong answering that; see the server log."
        history[-1] = {"role": "assistant", "content": render_error(problem)}
        yield list(history), answers


def respond(guide: Guide, asked: str, history: Messages, answers: list[dict[str, Any]], backend: str, k: int,
            tier: str, topic: str, kind: str, unread: bool) -> Iterator[tuple[Messages, list[dict[str, Any]]]]:
    """The Ask button: the settings panel's backend, sources per answer and filters, through `Guide.stream`."""
    backend = backend if backend in BACKENDS else guide.settings.llm.backend
    filters = {"tier": tier_of(tier), "topic": opt(topic), "kind": opt(kind), "unread_only": bool(unread),
               "k": clamp(k, 1, 8, 3)}
    yield from chat_reply(guide.stream, asked, history, answers, backend, filters)


def _planned_reads(guide: Guide, answers: list[dict[str, Any]]) -> list[str]:
    """What the last answer, when it was a reading plan, counted as read (catalog ids only)."""
    last = answers[-1] if answers else {}
    known = {r.id for r in guide.resources}
    return [i for i in last.get("read_ids", []) if i in known] if last.get("route") == "next" else []


def reads_to_offer(guide: Guide, answers: list[dict[str, Any]]) -> list[str]:
    """After a reading-plan answer: what it counted as read that the profile lacks (the button's offer)."""
    read = guide.read_ids()
    return [i for i in _planned_reads(guide, answers) if i not in read]


def offer_label(ids: list[str]) -> str:
    return f"Add these {len(ids)} to my reads" if len(ids) > 1 else "Add this to my reads"


def add_understood(guide: Guide, answers: list[dict[str, Any]]) -> list[str]:
    """The offer taken: mark what the plan counted as read; returns the ids marked."""
    ids = _planned_reads(guide, answers)
    if ids:
        guide.set_state(ids, "read")
    return ids
