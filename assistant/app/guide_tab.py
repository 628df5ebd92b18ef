"""The Guide tab: the tiered list with reading states and times, progress per topic × tier, the next reads for
a stated interest, search over the guide, summaries and self-checks, and the export files."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from assistant.app.options import opt, tier_of
from assistant.chain import MAX_QUESTION_CHARS
from assistant.guide import Guide
from assistant.progress_grid import render_progress_grid
from assistant.render import (
    filter_guide,
    path_summary,
    progress_summary,
    render_digest,
    render_error,
    render_guide,
    render_hits,
    render_plan,
)
from core.errors import UserError

PLAN_PICKS = 5
SEARCH_HITS = 8
DIGEST_PREFIX, STATE_PREFIX = "digest:", "state:"  # the guide's buttons say what they are (toggle.js)


def guide_view(guide: Guide, tier: str, topic: str, kind: str, unread: bool) -> str:
    """The list, filtered, with each resource's state, reading time and its tier's time left."""
    read = guide.read_ids()
    return render_guide(filter_guide(guide.resources, read, tier, topic, kind, unread), read,
                        guide.settings.catalog.list_url, states=guide.states(), times=guide.times(),
                        path=guide.learning_path())


def progress_view(guide: Guide, interest: str) -> tuple[str, str, str]:
    """(summary line, progress grid, next reads for the interest) — the tab's top row."""
    rows = guide.progress()
    plan = guide.plan(interest=interest or "", k=PLAN_PICKS).plan
    panel = render_plan(plan, guide.settings.catalog.list_url, times=guide.times())
    return f"{progress_summary(rows)} · {path_summary(guide.learning_path())}", render_progress_grid(rows), panel


def select(guide: Guide, value: str, resource_id: str, selected: bool) -> str:
    """A click in the list: a state chosen ("state:reading"), a read box ticked, or a summary/self-check
    button ("digest:self-check", answered by `digest_view`). Returns what it was: "state", "read" or "digest"."""
    if value.startswith(DIGEST_PREFIX):
        return "digest"
    if value.startswith(STATE_PREFIX):
        guide.set_state([resource_id], value.removeprefix(STATE_PREFIX))
        return "state"
    guide.set_read(resource_id, selected)
    return "read"


def digest_view(guide: Guide, value: str, resource_id: str) -> str | None:
    """The summary or self-check a button asked for, as HTML; None when the click was no such button."""
    if not value.startswith(DIGEST_PREFIX):
        return None
    try:
        digest = guide.digest_maker().digest(resource_id, value.removeprefix(DIGEST_PREFIX))
    except UserError as exc:
        return render_error(str(exc))
    return render_digest(digest)


def search_view(guide: Guide, query: str, tier: str, topic: str, kind: str, unread: bool) -> str:
    """Search results with the same read boxes and states as the list."""
    query = (query or "").strip()[:MAX_QUESTION_CHARS]
    if not query:
        return ""
    hits = guide.search(query, k=SEARCH_HITS, tier=tier_of(tier), topic=opt(topic), kind=opt(kind),
                        unread_only=bool(unread))
    return render_hits(hits, guide.settings.catalog.list_url, outcome=guide.outcome(query, hits),
                       read=guide.read_ids(), states=guide.states(), times=guide.times())


EXPORTS_PREFIX = "gpuguide-exports-"


def export_dir() -> Path:
    """Where the export buttons write their files: the system temp dir, which Gradio serves from; removed when
    the app's process ends, and those of app processes that ended by a signal (no exit handlers ran) are removed
    by the next one, so runs do not leave one folder each behind."""
    out = Path(tempfile.gettempdir()) / f"{EXPORTS_PREFIX}{os.getpid()}"
    if not out.exists():
        for stale in out.parent.glob(f"{EXPORTS_PREFIX}*"):
            if stale != out and not _process_alive(stale.name.removeprefix(EXPORTS_PREFIX)):
                shutil.rmtree(stale, ignore_errors=True)
        atexit.register(shutil.rmtree, out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _process_alive(pid: str) -> bool:
    """Is a process with this id running (or not ours to judge)? A name that is no id counts as alive."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def exports(guide: Guide, out: Path | None = None) -> tuple[str, str]:
    """The path as Markdown and the self-checks made so far as Anki CSV, for the download buttons."""
    out = out or export_dir()
    md, csv_file = out / "gpuguide-path.md", out / "gpuguide-self-checks.csv"
    guide.export(markdown=md, anki=csv_file)
    return str(md), str(csv_file)
