"""Plain words for what the app shows a learner: times as "3 minutes ago" in local time, a search's outcome
as "strong / weak / no good match", instead of ISO timestamps and raw scores."""

from __future__ import annotations

from datetime import datetime, timezone

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
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def ago(value: str | datetime | None, now: datetime | None = None) -> str:
    """'just now', '3 minutes ago', 'yesterday', '2 weeks ago'; '' when there is no time."""
    when = parse_time(value)
    if when is None:
        return ""
    now = now or datetime.now(timezone.utc)
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
