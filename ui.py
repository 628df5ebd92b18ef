"""The gpuguide web app (Gradio 6): chat with cited answers, the tiered guide with reading progress,
index status with background re-ingest, and the same search / ask / next_reads as API and MCP tools.

This module is the wiring only: the layout, which handler each event calls, the API tools published, and
the safety decided where the server is opened (loopback by default, auth required for any other address, no
share links, no analytics). The handlers are plain functions over the front object, one module per tab
(assistant/app/chat_tab.py, guide_tab.py, status_tab.py; the tools in assistant/app/api.py); HTML comes from
`assistant/render.py` (Jinja2 templates, autoescape on), JSON from `assistant/serialize.py`, shared with the CLI.
"""

from __future__ import annotations

import os

# Gradio reads this at import time: no usage analytics or version checks leave the machine.
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

import functools  # noqa: E402
import inspect  # noqa: E402
import ipaddress  # noqa: E402
import logging  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from types import SimpleNamespace  # noqa: E402
from typing import Any  # noqa: E402

import gradio as gr  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from assistant.app import api, chat_tab, guide_tab, status_tab  # noqa: E402
from assistant.app.chat_tab import Messages, chat_reply, user_turn  # noqa: E402, F401  (tests reach them as ui.*)
from assistant.app_auth import RequireLogin  # noqa: E402
from assistant.backend_status import backend_statuses  # noqa: E402
from assistant.backend_status import default_backend as default_backend_for  # noqa: E402
from assistant.chain import MAX_QUESTION_CHARS  # noqa: E402
from assistant.guide import Guide  # noqa: E402
from assistant.progress_grid import render_progress_grid  # noqa: E402
from assistant.render import (  # noqa: E402
    ANY,
    asset,
    render_answer,  # noqa: F401  (re-exported: tests reach it as ui.render_answer)
    render_backends,
    render_header,
    render_job,
    render_tab_heading,
    safe_url,  # noqa: F401  (re-exported: tests and callers reach it as ui.safe_url)
    tier_label,
)
from assistant.theme import app_theme  # noqa: E402
from core.errors import UserError  # noqa: E402
from core.settings import Settings, UISettings  # noqa: E402
from ingest.catalog import KINDS  # noqa: E402

log = logging.getLogger(__name__)

EXAMPLES = [
    "How does FlashAttention avoid writing the attention matrix to HBM?",
    "I finished siboehm's matmul post, what should I read next?",
    "What does the Hopper TMA unit do?",
    "How does NCCL's ring all-reduce use bandwidth?",
]
# Chat turns and API calls run side by side (ui.chat_concurrency at once); only the embedded model's generation
# is one at a time, by a lock inside the backend (assistant/llm.py), so nothing else waits behind the LLM.
CHAT_CONCURRENCY = "chat"
SEARCH_CONCURRENCY = "search"
CHAT_TOOLS = {"ask", "summary", "self_check"}  # the tools that may write with the model share the chat's limit

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


# --- the API / MCP tools and the app ---------------------------------------------------------------


def tool(fn: Callable[..., Any], guide: Guide) -> Callable[..., Any]:
    """An API tool from a handler of assistant/app/api.py: `guide` bound, the rest of its signature and its
    docstring kept (Gradio reads both for the API page and the MCP schema), a UserError shown to the client."""
    params = list(inspect.signature(fn).parameters.values())[1:]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(guide, *args, **kwargs)
        except UserError as exc:
            raise gr.Error(str(exc)) from None

    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=inspect.signature(fn).return_annotation)
    call.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != "guide"}
    return call


@dataclass
class Choices:
    """The filter dropdowns' values, from the catalog in use."""

    tiers: list[str]
    topics: list[str]
    kinds: list[str]

    @classmethod
    def of(cls, guide: Guide) -> Choices:
        resources = sorted(guide.resources, key=lambda r: r.position)
        return cls([tier_label(t) for t in sorted({r.tier for r in resources if r.tier is not None})],
                   list(dict.fromkeys(r.topic for r in resources)),
                   [k for k in KINDS if any(r.kind == k for r in resources)])


def build_app(guide: Guide) -> gr.Blocks:
    """The Blocks app over one Guide: three tabs, each laid out then wired to its handlers, and the API tools."""
    choices = Choices.of(guide)
    wide = guide.settings.ui.chat_concurrency
    with gr.Blocks(title="gpuguide", analytics_enabled=False) as demo:
        gr.HTML(render_header(), elem_id="gg-header")
        with gr.Tabs():
            with gr.Tab("Chat", id="chat"):
                chat = chat_layout(guide, choices)
            with gr.Tab("Guide", id="guide"):
                shelf = guide_layout(guide, choices)
            with gr.Tab("Index status", id="status"):
                status = status_layout(guide)
        wire_chat(demo, guide, chat, shelf)
        wire_guide(demo, guide, shelf)
        wire_status(demo, guide, status)
        for fn in api.TOOLS:
            gr.api(tool(fn, guide), api_name=fn.__name__, concurrency_limit=wide,
                   concurrency_id=CHAT_CONCURRENCY if fn.__name__ in CHAT_TOOLS else SEARCH_CONCURRENCY)
    return demo


# --- Chat tab ----------------------------------------------------------------------------------------


def chat_layout(guide: Guide, choices: Choices) -> SimpleNamespace:
    settings = guide.settings
    gr.HTML(render_tab_heading("chat"), elem_classes="gg-tab-heading")
    c = SimpleNamespace()
    c.chatbot = gr.Chatbot(
        show_label=False, elem_id="gg-chat", height="calc(100dvh - 330px)", min_height=320,
        render_markdown=False, latex_delimiters=[], feedback_options=None, buttons=["copy"],
        group_consecutive_messages=False, autoscroll=False,
        placeholder="Ask about GPU performance engineering; answers cite the reading list.",
    )
    with gr.Row(elem_id="gg-ask-row", equal_height=True):
        c.question = gr.Textbox(label="Your question", show_label=False, scale=8, min_width=200,
                                placeholder="Ask a question (Enter to send, Shift+Enter for a new line)",
                                max_length=MAX_QUESTION_CHARS, elem_id="gg-question", autofocus=True)
        c.send = gr.Button("Ask", variant="primary", scale=1, min_width=80, elem_id="gg-ask")
    gr.Examples(EXAMPLES, inputs=[c.question], label="Examples")
    with gr.Accordion("Settings", open=False, elem_id="gg-settings"):
        statuses = backend_statuses(settings)
        with gr.Row():
            c.backend = gr.Radio([(b.label, b.name) for b in statuses if b.available],
                                 value=default_backend_for(settings, statuses), label="Answer with",
                                 elem_id="gg-backend")
            c.k = gr.Slider(1, 8, value=3, step=1, label="Sources per answer",
                            info="How many resources an answer may draw on (more: broader, slower)")
        c.backend_help = gr.HTML(render_backends(statuses), elem_id="gg-backend-help")
        with gr.Row():
            c.tier = gr.Dropdown([ANY, *choices.tiers], value=ANY, label="Tier",
                                 info="Only cite this tier (1 essential, 2 deeper, 3 advanced)")
            c.topic = gr.Dropdown([ANY, *choices.topics], value=ANY, label="Topic", info="Only cite this topic")
            c.kind = gr.Dropdown([ANY, *choices.kinds], value=ANY, label="Kind", info="Only cite papers, blogs, …")
            c.unread = gr.Checkbox(False, label="Only what I have not read",
                                   info="Leave out resources ticked as read in the Guide tab")
    c.add_reads = gr.Button("Add these to my reads", visible=False, size="sm", elem_id="gg-add-reads")
    c.clear = gr.Button("New conversation", size="sm")
    c.answers = gr.State([])  # final Answers as dicts: the follow-up rewrite's history
    # The question as sent: a hidden component, not a State, so its value travels with each queued
    # request and a second question sent while the first waits cannot replace it.
    c.asked = gr.Textbox(visible=False)
    return c


def wire_chat(demo: gr.Blocks, guide: Guide, c: SimpleNamespace, shelf: SimpleNamespace) -> None:
    settings = guide.settings

    def echo(message: str, history: Messages) -> tuple[gr.Textbox, gr.Button, Messages, str]:
        # One question at a time per conversation: a second one sent mid-answer would interleave the two. The
        # box stays enabled (a disabled box loses the focus): chat.js holds Enter back while an answer is written.
        history, asked = user_turn(message, history)
        return gr.Textbox(value=""), gr.Button(interactive=False), history, asked

    def unlock() -> tuple[gr.Textbox, gr.Button]:
        return gr.Textbox(interactive=True), gr.Button(interactive=True)

    def respond(asked: str, history: Messages, answers: list[dict[str, Any]], backend: str, k: int, tier: str,
                topic: str, kind: str, unread: bool) -> Iterator[tuple[Messages, list[dict[str, Any]]]]:
        yield from chat_tab.respond(guide, asked, history, answers, backend, k, tier, topic, kind, unread)

    def offer_reads(answers: list[dict[str, Any]]) -> gr.Button:
        """After a reading-plan answer: one click adds what it counted as read (and the profile lacks)."""
        ids = chat_tab.reads_to_offer(guide, answers)
        return gr.Button(chat_tab.offer_label(ids), visible=bool(ids))

    def add_understood(answers: list[dict[str, Any]], interest: str, tier: str, topic: str, kind: str,
                       unread: bool) -> tuple[gr.Button, str, str, str, str]:
        if ids := chat_tab.add_understood(guide, answers):
            gr.Info(f"Marked {len(ids)} as read.")
        return (gr.Button(visible=False), *guide_tab.progress_view(guide, interest),
                guide_tab.guide_view(guide, tier, topic, kind, unread))

    def backend_view() -> tuple[gr.Radio, str]:
        """On each page load: which backends answer now (a server started since shows up after a reload)."""
        found = backend_statuses(settings)
        return (gr.Radio(choices=[(b.label, b.name) for b in found if b.available],
                         value=default_backend_for(settings, found)), render_backends(found))

    for trigger in (c.question.submit, c.send.click):
        trigger(
            echo, [c.question, c.chatbot], [c.question, c.send, c.chatbot, c.asked], queue=False,
            api_visibility="private",
        ).then(
            respond, [c.asked, c.chatbot, c.answers, c.backend, c.k, c.tier, c.topic, c.kind, c.unread],
            [c.chatbot, c.answers], concurrency_id=CHAT_CONCURRENCY, concurrency_limit=settings.ui.chat_concurrency,
            show_progress="minimal", api_visibility="private",
        ).then(unlock, None, [c.question, c.send], queue=False, api_visibility="private",
               ).then(offer_reads, [c.answers], c.add_reads, queue=False, api_visibility="private")
    c.add_reads.click(add_understood, [c.answers, shelf.interest, *shelf.filters],
                      [c.add_reads, *shelf.progress, shelf.guide_list], queue=False, api_visibility="private")
    c.clear.click(lambda: ([], []), None, [c.chatbot, c.answers], queue=False, api_visibility="private")
    c.chatbot.clear(lambda: [], None, c.answers, queue=False, api_visibility="private")  # its own trash button
    demo.load(backend_view, None, [c.backend, c.backend_help], api_visibility="private", show_progress="hidden")


# --- Guide tab ---------------------------------------------------------------------------------------


def guide_layout(guide: Guide, choices: Choices) -> SimpleNamespace:
    gr.HTML(render_tab_heading("guide"), elem_classes="gg-tab-heading")
    g = SimpleNamespace()
    with gr.Row():
        with gr.Column(scale=3):
            summary = gr.Markdown(elem_id="gg-summary")
            plot = gr.HTML(render_progress_grid(guide.progress()), elem_id="gg-grid")
        with gr.Column(scale=2):
            gr.Markdown("### What next?")
            g.interest = gr.Textbox(label="What do you want to get good at?", show_label=False,
                                    placeholder="What do you want to get good at? (Enter)",
                                    max_length=MAX_QUESTION_CHARS, elem_id="gg-interest")
            next_panel = gr.HTML(elem_id="gg-next")
    g.progress = [summary, plot, next_panel]
    with gr.Row():
        with gr.Column(scale=3):
            with gr.Row():
                g.filters = [gr.Dropdown([ANY, *choices.tiers], value=ANY, label="Tier", min_width=100),
                             gr.Dropdown([ANY, *choices.topics], value=ANY, label="Topic"),
                             gr.Dropdown([ANY, *choices.kinds], value=ANY, label="Kind", min_width=100),
                             gr.Checkbox(False, label="Unread only", min_width=100)]
            with gr.Row():
                g.query = gr.Textbox(label="Search the guide", show_label=False, scale=6, min_width=200,
                                     placeholder="Search the guide (words and meaning, no model)",
                                     max_length=MAX_QUESTION_CHARS, elem_id="gg-search")
                g.go = gr.Button("Search", scale=1, min_width=100)
            g.results = gr.HTML(elem_id="gg-results", js_on_load=asset("toggle.js"))
            g.guide_list = gr.HTML(elem_id="gg-guide", js_on_load=asset("toggle.js"))
        with gr.Column(scale=2):
            gr.Markdown("### Summary & self-check")
            g.digest = gr.HTML("<div class='gg-empty'>Press Summary or Self-check on a resource: "
                               "made from its own text, each point cited.</div>", elem_id="gg-digest")
            gr.Markdown("### Export")
            with gr.Row():
                g.exports = [gr.DownloadButton("My path (Markdown)", size="sm", elem_id="gg-export-md"),
                             gr.DownloadButton("Self-checks (Anki CSV)", size="sm", elem_id="gg-export-anki")]
    return g


def wire_guide(demo: gr.Blocks, guide: Guide, g: SimpleNamespace) -> None:
    wide = guide.settings.ui.chat_concurrency

    def guide_view(tier: str, topic: str, kind: str, unread: bool) -> str:
        return guide_tab.guide_view(guide, tier, topic, kind, unread)

    def progress_view(interest: str) -> tuple[str, str, str]:
        return guide_tab.progress_view(guide, interest)

    def toggle(interest: str, evt: gr.SelectData) -> tuple[str, str, str]:
        if guide_tab.select(guide, str(evt.value or ""), str(evt.index), bool(evt.selected)) == "digest":
            return gr.skip(), gr.skip(), gr.skip()  # a Summary / Self-check button: digest_view answers it
        return progress_view(interest)

    def guide_after_state(tier: str, topic: str, kind: str, unread: bool, evt: gr.SelectData) -> str:
        """A state chosen in the guide changes its tiers' time left: redraw it (a read box alone does not)."""
        if not str(evt.value or "").startswith(guide_tab.STATE_PREFIX):
            return gr.skip()
        return guide_view(tier, topic, kind, unread)

    def digest_view(evt: gr.SelectData) -> str:
        html = guide_tab.digest_view(guide, str(evt.value or ""), str(evt.index))
        return gr.skip() if html is None else html

    def exports() -> tuple[str, str]:
        return guide_tab.exports(guide)

    def guide_search(query: str, tier: str, topic: str, kind: str, unread: bool) -> str:
        return guide_tab.search_view(guide, query, tier, topic, kind, unread)

    quiet = {"api_visibility": "private", "show_progress": "hidden"}
    for comp in g.filters:
        comp.change(guide_view, g.filters, g.guide_list, **quiet)
    for trigger in (g.query.submit, g.go.click):
        trigger(guide_search, [g.query, *g.filters], g.results, concurrency_id=SEARCH_CONCURRENCY,
                concurrency_limit=wide, api_visibility="private")
    g.guide_list.select(toggle, [g.interest], g.progress, trigger_mode="multiple", **quiet
                        ).then(exports, None, g.exports, **quiet)
    g.guide_list.select(guide_after_state, g.filters, g.guide_list, trigger_mode="multiple", **quiet)
    g.guide_list.select(digest_view, None, g.digest, api_visibility="private", concurrency_id=CHAT_CONCURRENCY,
                        concurrency_limit=wide, show_progress="minimal")
    demo.load(exports, None, g.exports, **quiet)
    # a search result's read box: the same toggle, then the guide redrawn so both lists agree
    g.results.select(toggle, [g.interest], g.progress, trigger_mode="multiple", **quiet,
                     ).then(guide_view, g.filters, g.guide_list, **quiet)
    g.interest.submit(progress_view, [g.interest], g.progress, api_visibility="private")
    demo.load(guide_view, g.filters, g.guide_list, api_visibility="private")
    demo.load(progress_view, [g.interest], g.progress, api_visibility="private")


# --- Index status tab --------------------------------------------------------------------------------


def status_layout(guide: Guide) -> SimpleNamespace:
    gr.HTML(render_tab_heading("status"), elem_classes="gg-tab-heading")
    s = SimpleNamespace()
    s.status = gr.HTML(elem_id="gg-status")
    with gr.Row(elem_id="gg-reingest-row"):
        s.reingest = gr.Button("Re-ingest (crawl and re-index)", elem_id="gg-reingest", scale=0, min_width=280)
        s.update = gr.Button("Update from the list (no re-crawl)", elem_id="gg-update", scale=0, min_width=280)
        s.job = gr.HTML(render_job(guide.job), elem_id="gg-job")
    gr.Markdown("Re-ingest runs in the background: chat keeps answering from the current index "
                "until the new one is ready. After `gpuguide catalog sync`, *Update from the list* "
                "rebuilds the changed cards and index without re-crawling, then crawls only new "
                "resources.")
    s.timer = gr.Timer(2.0, active=guide.job.running)
    return s


def wire_status(demo: gr.Blocks, guide: Guide, s: SimpleNamespace) -> None:
    def status_view() -> str:
        return status_tab.status_view(guide)

    def start_job(start: Callable[[Guide], tuple[str, bool]]) -> Callable[[], tuple[str, gr.Timer]]:
        def run() -> tuple[str, gr.Timer]:
            panel, started = start(guide)
            if not started:
                gr.Info("A re-ingest is already running.")
            return panel, gr.Timer(active=True)
        return run

    def poll_job() -> tuple[str, str, gr.Timer]:
        panel, running = status_tab.job_view(guide)
        return panel, status_view(), gr.Timer(active=running)

    s.reingest.click(start_job(status_tab.start_reingest), None, [s.job, s.timer], api_visibility="private")
    s.update.click(start_job(status_tab.start_update), None, [s.job, s.timer], api_visibility="private")
    s.timer.tick(poll_job, None, [s.job, s.status, s.timer], api_visibility="private", show_progress="hidden")
    demo.load(status_view, None, s.status, api_visibility="private")


def start(settings: Settings, guide: Guide | None = None) -> tuple[gr.Blocks, str]:
    """Check the bind, prepare the index, launch without blocking; returns the app and its local URL."""
    auth = check_bind(settings.ui)  # before anything slow: a refused bind is an instant one-line error
    guide = guide or Guide(settings)
    log.info("%s", guide.prepare())
    if guide.start_first_crawl():  # before the layout is built, so its status timer starts polling
        log.info("first start: crawling the list in the background; the catalog cards answer meanwhile")
    elif guide.start_list_update():
        log.info("the list changed since the last index: updating cards and index in the background")
    demo = build_app(guide)
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
    threading.Thread(target=guide.warm_up, name="gpuguide-warm-up", daemon=True).start()
    return demo, url


def wait(demo: gr.Blocks) -> None:
    """Block until Ctrl-C, then close the server."""
    try:
        demo.block_thread()
    finally:
        demo.close()
