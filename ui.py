"""The gpuguide web app (Gradio 6): chat with cited answers, the tiered guide with reading progress,
index status with background re-ingest, and the same search / ask / next_reads as API and MCP tools.

This module is the wiring: layout, event handlers, the API functions, and the safety decided where the
server is opened (loopback by default, auth required for any other address, no share links, no analytics).
HTML comes from `assistant/render.py` (Jinja2 templates, autoescape on: the Chatbot and gr.HTML render
HTML, so an unescaped `<img onerror>` would run); JSON from `assistant/serialize.py`, shared with the CLI.
"""

from __future__ import annotations

import os

# Gradio reads this at import time: no usage analytics or version checks leave the machine.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

import ipaddress  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable, Iterable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gradio as gr  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from assistant.app_auth import RequireLogin  # noqa: E402
from assistant.app_state import AppState  # noqa: E402
from assistant.backends import backend_statuses  # noqa: E402
from assistant.backends import default_backend as default_backend_for  # noqa: E402
from assistant.chain import MAX_QUESTION_CHARS, AnswerEvent, Query  # noqa: E402
from assistant.followup import Turn  # noqa: E402
from assistant.progress_grid import render_progress_grid  # noqa: E402
from assistant.records import Answer  # noqa: E402
from assistant.render import (  # noqa: E402
    ANY,
    asset,
    filter_guide,
    path_summary,
    progress_summary,
    render_answer,
    render_digest,
    render_error,
    render_backends,
    render_guide,
    render_header,
    render_hits,
    render_job,
    render_plan,
    render_searching,
    render_status,
    render_streaming,
    render_tab_heading,
    render_user,
    safe_url,  # noqa: F401  (re-exported: tests and callers reach it as ui.safe_url)
    tier_label,
)
from assistant.serialize import answer_dict, hits_list, plan_dict  # noqa: E402
from assistant.theme import app_theme  # noqa: E402
from core.errors import UserError  # noqa: E402
from core.settings import Settings, UISettings  # noqa: E402

log = logging.getLogger(__name__)

BACKENDS = ["embedded", "extractive", "ollama", "openai"]
KINDS = ["paper", "blog", "docs", "repo", "book", "video", "community", "model", "site"]
EXAMPLES = [
    "How does FlashAttention avoid writing the attention matrix to HBM?",
    "I finished siboehm's matmul post, what should I read next?",
    "What does the Hopper TMA unit do?",
    "How does NCCL's ring all-reduce use bandwidth?",
]
MAX_K = 20
# Chat turns and API calls run side by side (ui.chat_concurrency at once); only the embedded model's generation
# is one at a time, by a lock inside the backend (assistant/models.py), so nothing else waits behind the LLM.
CHAT_CONCURRENCY = "chat"
SEARCH_CONCURRENCY = "search"
API_PASSAGES = 2  # passages per hit the search tool returns, each cut to API_PASSAGE_CHARS
API_PASSAGE_CHARS = 600

# --- safety ------------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(ui: UISettings) -> tuple[str, str] | None:
    """The auth pair to launch with, or None on loopback; refuse any other address without auth."""
    if is_loopback(ui.host):
        return (ui.auth_user, ui.auth_password) if ui.auth_user and ui.auth_password else None
    if not (ui.auth_user and ui.auth_password):
        raise UserError(
            f"refusing to listen on {ui.host} without a login; set ui.auth_user and ui.auth_password "
            "(e.g. GPUGUIDE_UI__AUTH_USER / GPUGUIDE_UI__AUTH_PASSWORD) or keep ui.host=127.0.0.1"
        )
    return (ui.auth_user, ui.auth_password)




# --- chat --------------------------------------------------------------------------------------


def _opt(value: str | None) -> str | None:
    return None if value in (None, "", ANY) else value


def _tier(value: str | None) -> int | None:
    value = _opt(value)
    if value is None:
        return None
    match = re.search(r"\d+", value)
    return int(match.group(0)) if match else None


def _turns(answers: list[dict[str, Any]]) -> list[Turn]:
    return [
        Turn(a["question"], a.get("standalone_question") or a["question"], [c["title"] for c in a.get("citations", [])],
             [c.get("resource_id", "") for c in a.get("citations", [])])
        for a in answers
    ]


def too_long(question: str) -> str | None:
    if len(question) > MAX_QUESTION_CHARS:
        return f"The question is {len(question)} characters long; the limit is {MAX_QUESTION_CHARS}. Please shorten it."
    return None


Messages = list[dict[str, Any]]


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
    query = Query(question, history=_turns(answers), backend=backend, **filters)
    history.append({"role": "assistant", "content": render_searching()})
    yield list(history), answers
    instant: Answer | None = None
    draft = ""
    try:
        for event in stream(query):
            if event.kind == "sources" and event.answer is not None:
                instant = event.answer  # with an LLM backend: the sources, no text yet
                waiting = backend if backend != "extractive" and instant.route == "search" and not instant.text else ""
                history[-1] = {"role": "assistant", "content": render_answer(instant, pending=waiting)}
            elif event.kind == "token" and instant is not None:
                draft += event.token
                history[-1] = {"role": "assistant", "content": render_streaming(instant, draft, backend)}
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


def export_dir() -> Path:
    """Where the guide's export buttons write their files: the system temp dir, which Gradio serves from."""
    out = Path(tempfile.gettempdir()) / f"gpuguide-exports-{os.getpid()}"
    out.mkdir(parents=True, exist_ok=True)
    return out


def build_app(state: AppState) -> gr.Blocks:
    """The Blocks app over one AppState. Named API endpoints: search, ask, next_reads."""
    settings = state.settings
    resources = state.resources
    list_url = settings.catalog.list_url
    topics = list(dict.fromkeys(r.topic for r in sorted(resources, key=lambda r: r.position)))
    tiers = [tier_label(t) for t in sorted({r.tier for r in resources if r.tier is not None})]
    kinds = [k for k in KINDS if any(r.kind == k for r in resources)]
    default_backend = settings.llm.backend
    wide = settings.ui.chat_concurrency

    # --- handlers ------------------------------------------------------------------------------

    def echo(message: str, history: Messages) -> tuple[gr.Textbox, gr.Button, Messages, str]:
        # One question at a time per conversation: a second one sent mid-answer would interleave the two. The
        # box stays enabled (a disabled box loses the focus): chat.js holds Enter back while an answer is written.
        history, asked = user_turn(message, history)
        return gr.Textbox(value=""), gr.Button(interactive=False), history, asked

    def unlock() -> tuple[gr.Textbox, gr.Button]:
        return gr.Textbox(interactive=True), gr.Button(interactive=True)

    def respond(asked: str, history: Messages, answers: list[dict[str, Any]], backend: str, k: int,
                tier: str, topic: str, kind: str, unread: bool) -> Iterator[tuple[Messages, list[dict[str, Any]]]]:
        backend = backend if backend in BACKENDS else default_backend
        filters = {"tier": _tier(tier), "topic": _opt(topic), "kind": _opt(kind), "unread_only": bool(unread),
                   "k": max(1, min(int(k or 3), 8))}

        def stream(query: Query) -> Iterable[AnswerEvent]:
            return state.assistant().stream(query)

        yield from chat_reply(stream, asked, history, answers, backend, filters)

    def guide_view(tier: str, topic: str, kind: str, unread: bool) -> str:
        read = state.read_ids()
        return render_guide(filter_guide(resources, read, tier, topic, kind, unread), read, list_url,
                            states=state.states(), times=state.times(), path=state.learning_path())

    def progress_view(interest: str) -> tuple[str, str, str]:
        rows = state.progress()
        plan = render_plan(state.plan(interest=interest or "", k=5), list_url, times=state.times())
        return f"{progress_summary(rows)} · {path_summary(state.learning_path())}", render_progress_grid(rows), plan

    def toggle(interest: str, evt: gr.SelectData) -> tuple[str, str, str]:
        value = str(evt.value or "")
        if value.startswith("digest:"):  # a Summary / Self-check button: digest_view answers it
            return gr.skip(), gr.skip(), gr.skip()
        if value.startswith("state:"):
            state.set_state(str(evt.index), value.removeprefix("state:"))
        else:
            state.set_read(str(evt.index), bool(evt.selected))
        return progress_view(interest)

    def guide_after_state(tier: str, topic: str, kind: str, unread: bool, evt: gr.SelectData) -> str:
        """A state chosen in the guide changes its tiers' time left: redraw it (a read box alone does not)."""
        if not str(evt.value or "").startswith("state:"):
            return gr.skip()
        return guide_view(tier, topic, kind, unread)

    def digest_view(evt: gr.SelectData) -> str:
        value = str(evt.value or "")
        if not value.startswith("digest:"):
            return gr.skip()
        try:
            digest = state.digest_maker().digest(str(evt.index), value.removeprefix("digest:"))
        except UserError as exc:
            return render_error(str(exc))
        return render_digest(digest)

    def exports() -> tuple[str, str]:
        """The path as Markdown and the self-checks made so far as Anki CSV, written for the download buttons."""
        from assistant.digest import QUIZ
        from assistant.export import anki_csv, path_markdown, write_text_atomic

        out = export_dir()
        md, csv_file = out / "gpuguide-path.md", out / "gpuguide-self-checks.csv"
        write_text_atomic(md, path_markdown(state.learning_path(), list_url))
        maker = state.digest_maker()
        made = [d for r in resources if (d := maker.cached(r.id, QUIZ, any_backend=True)) is not None and d.questions]
        write_text_atomic(csv_file, anki_csv(made))
        return str(md), str(csv_file)

    def guide_search(query: str, tier: str, topic: str, kind: str, unread: bool) -> str:
        query = (query or "").strip()[:MAX_QUESTION_CHARS]
        if not query:
            return ""
        hits = state.search(query, k=8, tier=_tier(tier), topic=_opt(topic), kind=_opt(kind), unread_only=bool(unread))
        outcome = state.assistant().searcher.outcome(query, hits) if hits else "out_of_scope"
        return render_hits(hits, list_url, outcome=outcome, read=state.read_ids(), states=state.states(),
                           times=state.times())

    def backend_view() -> tuple[gr.Radio, str]:
        """On each page load: which backends answer now (a server started since shows up after a reload)."""
        found = backend_statuses(settings)
        return (gr.Radio(choices=[(b.label, b.name) for b in found if b.available],
                         value=default_backend_for(settings, found)), render_backends(found))

    def status_view() -> str:
        return render_status(state.index_status())

    def start_reingest() -> tuple[str, gr.Timer]:
        if not state.start_reingest():
            gr.Info("A re-ingest is already running.")
        return render_job(state.job), gr.Timer(active=True)

    def start_update() -> tuple[str, gr.Timer]:
        if not state.start_update():
            gr.Info("A re-ingest is already running.")
        return render_job(state.job), gr.Timer(active=True)

    def poll_job() -> tuple[str, str, gr.Timer]:
        job = state.job
        return render_job(job), status_view(), gr.Timer(active=job.running)

    # --- API / MCP tools -----------------------------------------------------------------------

    def offer_reads(answers: list[dict[str, Any]]) -> gr.Button:
        """After a reading-plan answer: one click adds what it counted as read (and the profile lacks)."""
        last = answers[-1] if answers else {}
        ids = [i for i in last.get("read_ids", []) if i not in state.read_ids()] if last.get("route") == "next" else []
        return gr.Button(f"Add these {len(ids)} to my reads" if len(ids) > 1 else "Add this to my reads",
                         visible=bool(ids))

    def add_understood(answers: list[dict[str, Any]], interest: str, tier: str, topic: str, kind: str,
                       unread: bool) -> tuple[gr.Button, str, str, str, str]:
        last = answers[-1] if answers else {}
        known = {r.id for r in resources}
        ids = [i for i in last.get("read_ids", []) if i in known] if last.get("route") == "next" else []
        state.profile.mark_read(ids)
        if ids:
            gr.Info(f"Marked {len(ids)} as read.")
        return (gr.Button(visible=False), *progress_view(interest), guide_view(tier, topic, kind, unread))

    def search(query: str, k: int = 5, tier: int | None = None, topic: str = "", kind: str = "",
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
        if problem := too_long(query or ""):
            raise gr.Error(problem)
        hits = state.search(query, k=max(1, min(int(k), MAX_K)), tier=tier, topic=topic or None, kind=kind or None,
                            unread_only=unread_only)
        return hits_list(hits, list_url, passages=API_PASSAGES, passage_chars=API_PASSAGE_CHARS)

    def ask(question: str, backend: str = "", tier: int | None = None, topic: str = "", kind: str = "",
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
        if problem := too_long(question or ""):
            raise gr.Error(problem)
        if backend and backend not in BACKENDS:
            raise gr.Error(f"backend must be one of {', '.join(BACKENDS)}")
        query = Query(question, tier=tier, topic=topic or None, kind=kind or None, unread_only=unread_only,
                      backend=backend or None, k=max(1, min(int(k), 8)))
        return answer_dict(state.assistant().ask(query))

    def next_reads(interest: str = "", k: int = 5, read: list[str] | None = None) -> dict[str, Any]:
        """What to read next in the GPU performance-engineering list: its tier order, skipping what was read.

        Args:
            interest: What the learner wants to get good at, e.g. "attention kernels"; empty for the plain order.
            k: How many picks to return, 1 to 20.
            read: What else to count as read for this plan only (the stored progress is not changed): resource ids,
                URLs, or free text such as "the Tier 1 profiling material and siboehm's matmul post".

        Returns:
            picks (id, title, url, kind, tier, place, list_url, reason), the focus topics the plan starts
            from, and counted_as_read.
        """
        from assistant.profile import resolve_resource

        if problem := too_long(interest or ""):
            raise gr.Error(problem)
        extra: set[str] = set()
        for ref in (read or [])[:200]:
            if problem := too_long(ref):
                raise gr.Error(problem)
            try:
                extra.add(resolve_resource(ref, resources).id)
            except UserError as exc:
                understood = {r.id for r in state.assistant().next_reads.reader.named(ref)}
                if not understood:
                    raise gr.Error(f"{str(exc).rstrip('.')}, and it names nothing in the list as free text") from None
                extra |= understood
        plan = state.plan(interest=interest or "", k=max(1, min(int(k), MAX_K)), extra_read=extra)
        return plan_dict(plan, list_url, counted_as_read=extra, times=state.times())

    def reading_state(resource: str, state_name: str = "") -> dict[str, Any]:
        """Get or set the learner's reading state of one resource of the GPU reading list.

        Args:
            resource: The resource's id, URL or exact title (ids are in every search and next_reads result).
            state_name: unread, reading, read or skipped to set it; empty to only read it.

        Returns:
            id, title, state, and its reading time (minutes, or null when unknown, with the basis).
        """
        from assistant.profile import STATES, resolve_resource

        try:
            res = resolve_resource((resource or "")[:2000], resources)
        except UserError as exc:
            raise gr.Error(str(exc)) from None
        if state_name:
            if state_name not in STATES:
                raise gr.Error(f"state must be one of {', '.join(STATES)}")
            state.set_state(res.id, state_name)
        est = state.times().get(res.id)
        return {"id": res.id, "title": res.title, "state": state.states().get(res.id, "unread"),
                "time": est.to_dict() if est is not None else None}

    def learning_path(topic: str = "") -> dict[str, Any]:
        """The learner's path through the GPU reading list: states and time left per topic × tier and in all.

        Args:
            topic: Only topics whose name contains this text; empty for the whole path.

        Returns:
            summary, time_left (minutes, unknown count, label), states (counts), and groups (topic, tier,
            time_left, states, resources with id, title, url, state and time), in the list's order.
        """
        data = state.learning_path().to_dict(list_url)
        if topic:
            data["groups"] = [g for g in data["groups"] if topic.lower() in str(g["topic"]).lower()]
        return data

    def explain(resource: str) -> dict[str, Any]:
        """A short summary of one resource (key points, each cited to a passage of that resource's own text).

        Args:
            resource: The resource's id, URL or exact title.

        Returns:
            mode (generated, extracted or no-text) with its label, points (text and cite: passage number,
            chunk_id, url, heading, start, end, quote), note, dropped.
        """
        return _digest_api(resource, "summary")

    def quiz(resource: str) -> dict[str, Any]:
        """Three self-check questions with answers about one resource, each cited to a passage of its own text.

        Args:
            resource: The resource's id, URL or exact title.

        Returns:
            mode, label, questions (question, answer, cite), note, dropped.
        """
        return _digest_api(resource, "quiz")

    def _digest_api(resource: str, kind: str) -> dict[str, Any]:
        from assistant.profile import resolve_resource

        try:
            res = resolve_resource((resource or "")[:2000], resources)
            return state.digest_maker().digest(res.id, kind).to_dict()
        except UserError as exc:
            raise gr.Error(str(exc)) from None

    # --- layout --------------------------------------------------------------------------------

    with gr.Blocks(title="gpuguide", analytics_enabled=False) as demo:
        gr.HTML(render_header(), elem_id="gg-header")
        with gr.Tabs():
            with gr.Tab("Chat", id="chat"):
                gr.HTML(render_tab_heading("chat"), elem_classes="gg-tab-heading")
                chatbot = gr.Chatbot(
                    show_label=False, elem_id="gg-chat", height="calc(100dvh - 330px)", min_height=320,
                    render_markdown=False, latex_delimiters=[], feedback_options=None, buttons=["copy"],
                    group_consecutive_messages=False, autoscroll=False,
                    placeholder="Ask about GPU performance engineering; answers cite the reading list.",
                )
                with gr.Row(elem_id="gg-ask-row", equal_height=True):
                    question = gr.Textbox(label="Your question", show_label=False, scale=8, min_width=200,
                                          placeholder="Ask a question (Enter to send, Shift+Enter for a new line)",
                                          max_length=MAX_QUESTION_CHARS, elem_id="gg-question", autofocus=True)
                    send = gr.Button("Ask", variant="primary", scale=1, min_width=80, elem_id="gg-ask")
                gr.Examples(EXAMPLES, inputs=[question], label="Examples")
                with gr.Accordion("Settings", open=False, elem_id="gg-settings"):
                    statuses = backend_statuses(settings)
                    with gr.Row():
                        backend = gr.Radio([(b.label, b.name) for b in statuses if b.available],
                                           value=default_backend_for(settings, statuses), label="Answer with",
                                           elem_id="gg-backend")
                        k = gr.Slider(1, 8, value=3, step=1, label="Sources per answer",
                                      info="How many resources an answer may draw on (more: broader, slower)")
                    backend_help = gr.HTML(render_backends(statuses), elem_id="gg-backend-help")
                    with gr.Row():
                        c_tier = gr.Dropdown([ANY, *tiers], value=ANY, label="Tier",
                                             info="Only cite this tier (1 essential, 2 deeper, 3 advanced)")
                        c_topic = gr.Dropdown([ANY, *topics], value=ANY, label="Topic", info="Only cite this topic")
                        c_kind = gr.Dropdown([ANY, *kinds], value=ANY, label="Kind", info="Only cite papers, blogs, …")
                        c_unread = gr.Checkbox(False, label="Only what I have not read",
                                               info="Leave out resources ticked as read in the Guide tab")
                add_reads = gr.Button("Add these to my reads", visible=False, size="sm", elem_id="gg-add-reads")
                clear = gr.Button("New conversation", size="sm")
                answers = gr.State([])  # final Answers as dicts: the follow-up rewrite's history
                # The question as sent: a hidden component, not a State, so its value travels with each queued
                # request and a second question sent while the first waits cannot replace it.
                asked = gr.Textbox(visible=False)

            with gr.Tab("Guide", id="guide"):
                gr.HTML(render_tab_heading("guide"), elem_classes="gg-tab-heading")
                rows = state.progress()
                with gr.Row():
                    with gr.Column(scale=3):
                        summary = gr.Markdown(elem_id="gg-summary")
                        plot = gr.HTML(render_progress_grid(rows), elem_id="gg-grid")
                    with gr.Column(scale=2):
                        gr.Markdown("### What next?")
                        interest = gr.Textbox(label="What do you want to get good at?", show_label=False,
                                              placeholder="What do you want to get good at? (Enter)",
                                              max_length=MAX_QUESTION_CHARS, elem_id="gg-interest")
                        next_panel = gr.HTML(elem_id="gg-next")
                with gr.Row():
                    with gr.Column(scale=3):
                        with gr.Row():
                            g_tier = gr.Dropdown([ANY, *tiers], value=ANY, label="Tier", min_width=100)
                            g_topic = gr.Dropdown([ANY, *topics], value=ANY, label="Topic")
                            g_kind = gr.Dropdown([ANY, *kinds], value=ANY, label="Kind", min_width=100)
                            g_unread = gr.Checkbox(False, label="Unread only", min_width=100)
                        with gr.Row():
                            g_query = gr.Textbox(label="Search the guide", show_label=False, scale=6, min_width=200,
                                                 placeholder="Search the guide (words and meaning, no model)",
                                                 max_length=MAX_QUESTION_CHARS, elem_id="gg-search")
                            g_go = gr.Button("Search", scale=1, min_width=100)
                        g_results = gr.HTML(elem_id="gg-results", js_on_load=asset("toggle.js"))
                        guide = gr.HTML(elem_id="gg-guide", js_on_load=asset("toggle.js"))
                    with gr.Column(scale=2):
                        gr.Markdown("### Summary & self-check")
                        digest_panel = gr.HTML("<div class='gg-empty'>Press Summary or Self-check on a resource: "
                                               "made from its own text, each point cited.</div>", elem_id="gg-digest")
                        gr.Markdown("### Export")
                        with gr.Row():
                            export_md = gr.DownloadButton("My path (Markdown)", size="sm", elem_id="gg-export-md")
                            export_anki = gr.DownloadButton("Self-checks (Anki CSV)", size="sm",
                                                            elem_id="gg-export-anki")

            with gr.Tab("Index status", id="status"):
                gr.HTML(render_tab_heading("status"), elem_classes="gg-tab-heading")
                status = gr.HTML(elem_id="gg-status")
                with gr.Row(elem_id="gg-reingest-row"):
                    reingest = gr.Button("Re-ingest (crawl and re-index)", elem_id="gg-reingest", scale=0,
                                         min_width=280)
                    update = gr.Button("Update from the list (no re-crawl)", elem_id="gg-update", scale=0,
                                       min_width=280)
                    job = gr.HTML(render_job(state.job), elem_id="gg-job")
                gr.Markdown("Re-ingest runs in the background: chat keeps answering from the current index "
                            "until the new one is ready. After `gpuguide catalog sync`, *Update from the list* "
                            "rebuilds the changed cards and index without re-crawling, then crawls only new "
                            "resources.")
                timer = gr.Timer(2.0, active=state.job.running)

        # --- events --------------------------------------------------------------------------------
        for trigger in (question.submit, send.click):
            trigger(
                echo, [question, chatbot], [question, send, chatbot, asked], queue=False, api_visibility="private",
            ).then(
                respond, [asked, chatbot, answers, backend, k, c_tier, c_topic, c_kind, c_unread], [chatbot, answers],
                concurrency_id=CHAT_CONCURRENCY, concurrency_limit=wide, show_progress="minimal",
                api_visibility="private",
            ).then(unlock, None, [question, send], queue=False, api_visibility="private",
                   ).then(offer_reads, [answers], add_reads, queue=False, api_visibility="private")
        add_reads.click(add_understood, [answers, interest, g_tier, g_topic, g_kind, g_unread],
                        [add_reads, summary, plot, next_panel, guide], queue=False, api_visibility="private")
        clear.click(lambda: ([], []), None, [chatbot, answers], queue=False, api_visibility="private")
        chatbot.clear(lambda: [], None, answers, queue=False, api_visibility="private")  # its own trash button

        guide_filters = [g_tier, g_topic, g_kind, g_unread]
        for comp in guide_filters:
            comp.change(guide_view, guide_filters, guide, api_visibility="private", show_progress="hidden")
        for trigger in (g_query.submit, g_go.click):
            trigger(guide_search, [g_query, *guide_filters], g_results, concurrency_id=SEARCH_CONCURRENCY,
                    concurrency_limit=wide, api_visibility="private")
        guide.select(toggle, [interest], [summary, plot, next_panel], api_visibility="private",
                     show_progress="hidden", trigger_mode="multiple",
                     ).then(exports, None, [export_md, export_anki], api_visibility="private", show_progress="hidden")
        guide.select(guide_after_state, guide_filters, guide, api_visibility="private", show_progress="hidden",
                     trigger_mode="multiple")
        guide.select(digest_view, None, digest_panel, api_visibility="private", concurrency_id=CHAT_CONCURRENCY,
                     concurrency_limit=wide, show_progress="minimal")
        demo.load(exports, None, [export_md, export_anki], api_visibility="private", show_progress="hidden")
        # a search result's read box: the same toggle, then the guide redrawn so both lists agree
        g_results.select(toggle, [interest], [summary, plot, next_panel], api_visibility="private",
                         show_progress="hidden", trigger_mode="multiple",
                         ).then(guide_view, guide_filters, guide, api_visibility="private", show_progress="hidden")
        interest.submit(progress_view, [interest], [summary, plot, next_panel], api_visibility="private")

        reingest.click(start_reingest, None, [job, timer], api_visibility="private")
        update.click(start_update, None, [job, timer], api_visibility="private")
        timer.tick(poll_job, None, [job, status, timer], api_visibility="private", show_progress="hidden")

        demo.load(guide_view, guide_filters, guide, api_visibility="private")
        demo.load(progress_view, [interest], [summary, plot, next_panel], api_visibility="private")
        demo.load(status_view, None, status, api_visibility="private")
        demo.load(backend_view, None, [backend, backend_help], api_visibility="private", show_progress="hidden")

        gr.api(search, api_name="search", concurrency_id=SEARCH_CONCURRENCY, concurrency_limit=wide)
        gr.api(ask, api_name="ask", concurrency_id=CHAT_CONCURRENCY, concurrency_limit=wide)
        gr.api(next_reads, api_name="next_reads", concurrency_id=SEARCH_CONCURRENCY, concurrency_limit=wide)
        gr.api(reading_state, api_name="reading_state", concurrency_id=SEARCH_CONCURRENCY, concurrency_limit=wide)
        gr.api(learning_path, api_name="learning_path", concurrency_id=SEARCH_CONCURRENCY, concurrency_limit=wide)
        gr.api(explain, api_name="explain", concurrency_id=CHAT_CONCURRENCY, concurrency_limit=wide)
        gr.api(quiz, api_name="quiz", concurrency_id=CHAT_CONCURRENCY, concurrency_limit=wide)
    return demo


def start(settings: Settings, state: AppState | None = None) -> tuple[gr.Blocks, str]:
    """Check the bind, prepare the index, launch without blocking; returns the app and its local URL."""
    auth = check_bind(settings.ui)  # before anything slow: a refused bind is an instant one-line error
    state = state or AppState(settings)
    log.info("%s", state.prepare())
    if state.start_first_crawl():  # before the layout is built, so its status timer starts polling
        log.info("first start: crawling the list in the background; the catalog cards answer meanwhile")
    elif state.start_list_update():
        log.info("the list changed since the last index: updating cards and index in the background")
    demo = build_app(state)
    demo.queue(default_concurrency_limit=4, max_size=64 + 4 * settings.ui.chat_concurrency)
    # Gradio's login covers its pages and API but not the MCP endpoint: guarded from the app's creation on.
    guard = [Middleware(RequireLogin, user=auth[0], password=auth[1])] if auth else []
    try:
        _, url, _ = demo.launch(
            server_name=settings.ui.host, server_port=settings.ui.port, share=False, auth=auth,
            mcp_server=True, prevent_thread_lock=True, quiet=True, show_error=False, ssr_mode=False,
            enable_monitoring=False, footer_links=["api"], css=asset("app.css"), max_file_size="1mb",
            theme=app_theme(), js=asset("chat.js"),
            app_kwargs={"middleware": guard},
        )
    except OSError as exc:
        raise UserError(f"cannot listen on {settings.ui.host}:{settings.ui.port} ({str(exc).splitlines()[0]}); "
                         "pick another with --port") from None
    threading.Thread(target=state.warm_up, name="gpuguide-warm-up", daemon=True).start()
    return demo, url


def wait(demo: gr.Blocks) -> None:
    """Block until Ctrl-C, then close the server."""
    try:
        demo.block_thread()
    finally:
        demo.close()
