"""HTML for the web app, from Jinja2 templates with autoescape on: every catalog or crawled string is escaped
unless it is `Markup` built here from escaped parts (the answer text with its [n] links, checked URLs).

Templates live in `assistant/templates/` (package data). Their source is joined line by line with the
indentation dropped, so a template can be laid out readably and still render as one compact line (Gradio's
Chatbot keeps newlines); a space that matters is written inside a line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FunctionLoader, StrictUndefined
from markupsafe import Markup, escape

from assistant.app_state import IndexStatus, IngestJob, ProgressRow
from assistant.backend_status import LABELS as BACKEND_LABELS
from assistant.backend_status import BackendStatus
from assistant.fragments import cite_link
from assistant.plain import outcome_word, status_facts, when_text
from assistant.snippets import snippet_html
from assistant.records import Answer, Citation
from core.records import Resource

TEMPLATES = Path(__file__).parent / "templates"
PASSAGE_CHARS = 420  # a source's passage under a chat answer
HIT_PASSAGE_CHARS = 300  # a search result's passage in the Guide tab
ANY = "any"
STATE_NAMES = ("unread", "reading", "read", "skipped")


def _load(name: str) -> tuple[str, str, Callable[[], bool]] | None:
    path = TEMPLATES / name
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if name.endswith(".html"):
        text = "".join(line.strip() for line in text.splitlines())
    mtime = path.stat().st_mtime
    return text, str(path), lambda: path.stat().st_mtime == mtime


ENV = Environment(loader=FunctionLoader(_load), autoescape=True, undefined=StrictUndefined)


# --- small helpers (also used by the templates) ----------------------------------------------------


def safe_url(url: str) -> Markup:
    """An escaped http(s) URL, or "" for anything else (a `javascript:` link must never be clickable)."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return Markup("")
    return escape(url.strip()) if scheme in ("http", "https") else Markup("")


def trim(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + " …"


def tier_label(tier: int | None) -> str:
    return f"Tier {tier}" if tier is not None else "Untiered"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def lines(text: str) -> Markup:
    """Escaped text with its line breaks kept as <br>."""
    return Markup("<br>").join(escape(text).split("\n"))


_MARKER = re.compile(r"\[(\d{1,2})\]")


def text_with_links(text: str, citations: list[Citation]) -> Markup:
    """Escaped text, line breaks kept, every [n] of a known source a link to it (built from escaped parts)."""
    by_n = {c.n: c for c in citations}
    ref = ENV.get_template("ref.html")
    out: list[Markup] = []
    pos = 0
    for match in _MARKER.finditer(text):
        cite = by_n.get(int(match.group(1)))
        if cite is None:
            continue
        out.append(lines(text[pos:match.start()]))
        out.append(Markup(ref.render(cite=cite)))
        pos = match.end()
    out.append(lines(text[pos:]))
    return Markup("").join(out)


def snippet(markdown: str, limit: int) -> Markup:
    """A passage's Markdown as escaped prose (assistant/snippets.py builds it from escaped parts)."""
    return Markup(snippet_html(markdown, limit))


ENV.globals.update(safe_url=safe_url, cite_link=cite_link, trim=trim, tier_label=tier_label, size=size, lines=lines, snippet=snippet,
                   when_text=when_text, backend_label=lambda name: BACKEND_LABELS.get(name, name),
                   PASSAGE_CHARS=PASSAGE_CHARS, HIT_PASSAGE_CHARS=HIT_PASSAGE_CHARS)


def render(name: str, **values: Any) -> str:
    return ENV.get_template(name).render(**values)


@cache
def asset(name: str) -> str:
    """A static asset shipped with the templates (the app's CSS, the guide's checkbox script)."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


# --- chat -----------------------------------------------------------------------------------------


def render_sources(answer: Answer) -> str:
    return render("sources.html", answer=answer)


def render_dropped(answer: Answer) -> str:
    """Generated sentences the source check removed, struck through with the reason: nothing is hidden."""
    return render("dropped.html", answer=answer)


def render_answer(answer: Answer, pending: str = "") -> str:
    """One assistant message: the answer with linked [n], its notes (weak match, why the sources are quoted,
    sentences the check removed), the sources panel. With `pending` the text is still being written."""
    return render("answer.html", answer=answer, pending=pending,
                  text=text_with_links(answer.text, answer.citations))


def render_streaming(sources: Answer, draft: str, backend: str, second: bool = False) -> str:
    """While tokens stream: the draft grows above the sources as plain text (its [n] are not checked yet);
    the verified answer takes its place when it is done. `second`: the first draft held nothing and this one
    is written from the closest passages alone."""
    return render("streaming.html", answer=sources, draft=draft, backend=backend, second=second)


def render_user(question: str) -> str:
    return render("user.html", question=question)


def render_error(message: str) -> str:
    return render("error.html", message=message)


def render_searching() -> str:
    return render("searching.html")


# --- guide ----------------------------------------------------------------------------------------


def list_order(resources: list[Resource]) -> list[Resource]:
    """The list's reading order: topics and their sections where they first appear, tiers ascending."""
    first_topic: dict[str, int] = {}
    first_section: dict[tuple[str, str], int] = {}
    for res in sorted(resources, key=lambda r: r.position):
        first_topic.setdefault(res.topic, res.position)
        first_section.setdefault((res.topic, res.section), res.position)
    return sorted(resources, key=lambda r: (first_topic[r.topic], first_section[(r.topic, r.section)],
                                            -1 if r.tier is None else r.tier, r.position))


def filter_guide(resources: list[Resource], read: set[str], tier: str, topic: str, kind: str,
                 unread_only: bool) -> list[Resource]:
    out = list_order(resources)
    if tier and tier != ANY:
        out = [r for r in out if tier_label(r.tier) == tier]
    if topic and topic != ANY:
        out = [r for r in out if r.topic == topic]
    if kind and kind != ANY:
        out = [r for r in out if r.kind == kind]
    if unread_only:
        out = [r for r in out if r.id not in read]
    return out


def render_guide(resources: list[Resource], read: set[str], list_url: str, states: dict[str, str] | None = None,
                 times: dict[str, Any] | None = None, path: Any = None) -> str:
    """Topics → sections → tiers → resources, in the order given (the list's, see `list_order`). With `states`
    each resource has its reading state (unread / reading / read / skipped), with `times` its reading time, with
    `path` (an `assistant.path.LearningPath`) each topic and tier its time left."""
    left: dict[tuple[str, int | None], str] = {}
    topic_left: dict[str, str] = {}
    if path is not None:
        from assistant.readtime import total

        left = {(g.topic, g.tier): g.left.label() for g in path.groups}
        for topic_name in dict.fromkeys(g.topic for g in path.groups):
            topic_left[topic_name] = total(i.estimate for g in path.groups if g.topic == topic_name
                                           for i in g.items if i.state in ("unread", "reading")).label()
    topics = []
    for topic, in_topic in groupby(resources, key=lambda r: r.topic):
        items = list(in_topic)
        sections = [
            {"name": section, "anchor": anchor,
             "tiers": [(tier, list(in_tier)) for tier, in_tier in groupby(in_section, key=lambda r: r.tier)]}
            for (section, anchor), in_section in groupby(items, key=lambda r: (r.section, r.list_anchor))
        ]
        topics.append({"name": topic, "done": sum(1 for r in items if r.id in read), "total": len(items),
                       "sections": sections})
    return render("guide.html", topics=topics, read=read, list_url=list_url, states=states or {}, times=times or {},
                  left=left, topic_left=topic_left, state_names=STATE_NAMES)


def render_hits(hits: list[Any], list_url: str, outcome: str = "answer", read: set[str] | None = None,
                states: dict[str, str] | None = None, times: dict[str, Any] | None = None) -> str:
    """Guide-tab search results in the order the search scored them: the outcome in words above them (a weak
    or no match says so), each hit with its best passage as prose (or the catalog note) and a read box; with
    `states`, the same reading-state menu (and reading time) as the guide's own entries."""
    word, sentence = outcome_word(outcome)
    return render("hits.html", hits=hits, list_url=list_url, outcome=outcome, outcome_word=word,
                  outcome_sentence=sentence, read=read or set(), states=states, times=times or {},
                  state_names=STATE_NAMES)


def render_plan(plan: Any, list_url: str, times: dict[str, Any] | None = None) -> str:
    """The "What next?" panel from a planner `Plan`; with `times` each pick's reading time and the total."""
    took = ""
    if times:
        from assistant.readtime import total

        took = total(times[p.resource.id] for p in plan.picks if p.resource.id in times).label()
    return render("plan.html", plan=plan, list_url=list_url, times=times or {}, took=took)


def render_digest(digest: Any) -> str:
    """A resource's summary or self-check (`assistant.digest.Digest`): how it was made, the points or the
    questions (answers folded), and each cited passage's quoted sentence."""
    cites = {}
    for item in [*digest.points, *digest.questions]:
        cites.setdefault(item.cite.n, item.cite)
    return render("digest.html", d=digest, cites=[cites[n] for n in sorted(cites)])


def path_summary(path: Any) -> str:
    """Markdown (numbers only): states over the whole list and the time left."""
    return f"**{path.summary()}**"


def progress_summary(rows: list[ProgressRow]) -> str:
    """Markdown (numbers only, nothing crawled): how much of the list is read."""
    read, total = sum(r.read for r in rows), sum(r.total for r in rows)
    share = round(100 * read / total) if total else 0
    return f"**Read {read} of {total}** ({share}%)"


# --- status ---------------------------------------------------------------------------------------


def render_status(status: IndexStatus) -> str:
    """The index status as sentences that say what each number means for answers and what to do about it."""
    return render("status.html", status=status, facts=status_facts(status))


# --- page furniture -------------------------------------------------------------------------------

TAB_HEADINGS = {
    "chat": ("Ask the guide", "Answers quote and cite the reading list; each [n] links to its source."),
    "guide": ("The guide", "The reading list by topic and tier: tick what you have read, search it, see what is next."),
    "status": ("Index status", "What the assistant knows about each resource, and how to give it more."),
}


def render_header() -> str:
    return render("header.html")


def render_tab_heading(tab: str) -> str:
    title, line = TAB_HEADINGS[tab]
    return render("tab_heading.html", title=title, line=line)


def render_backends(statuses: list[BackendStatus]) -> str:
    """One line of help per answer backend; the unusable ones say why and how to make them usable."""
    return render("backends.html", statuses=statuses)


def render_job(job: IngestJob) -> str:
    return render("job.html", job=job, elapsed=f"{job.elapsed_s():.0f}")
