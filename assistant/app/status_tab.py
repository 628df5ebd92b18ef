"""The Index status tab: what is indexed and from which list, and the background re-ingest / update jobs."""

from __future__ import annotations

from assistant.guide import Guide
from assistant.render import render_job, render_status


def status_view(guide: Guide) -> str:
    return render_status(guide.status())


def job_view(guide: Guide) -> tuple[str, bool]:
    """(the job's panel, whether it still runs: the poll timer stays on while it does)."""
    return render_job(guide.job), guide.job.running


def start_reingest(guide: Guide) -> tuple[str, bool]:
    """Crawl and re-index in the background; the bool is False when another job was already running."""
    started = guide.start_reingest()
    return render_job(guide.job), started


def start_update(guide: Guide) -> tuple[str, bool]:
    """Cards and index in line with the list, then crawl what waits; False when a job was already running."""
    started = guide.start_update()
    return render_job(guide.job), started
