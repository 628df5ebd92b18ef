"""The app's input conventions shared by its tabs: dropdown values to filters, the question length limit."""

from __future__ import annotations

import re

from assistant.chain import MAX_QUESTION_CHARS
from assistant.render import ANY

MAX_K = 20  # results a search or a plan returns at most


def opt(value: str | None) -> str | None:
    """A dropdown's value as a filter: "any" and empty mean no filter."""
    return None if value in (None, "", ANY) else value


def tier_of(value: str | None) -> int | None:
    """"Tier 2" (a dropdown label) → 2; "any" → None."""
    value = opt(value)
    if value is None:
        return None
    match = re.search(r"\d+", value)
    return int(match.group(0)) if match else None


def too_long(text: str) -> str | None:
    """The problem with an oversized question or query, in words; None when it fits."""
    if len(text) > MAX_QUESTION_CHARS:
        return f"The question is {len(text)} characters long; the limit is {MAX_QUESTION_CHARS}. Please shorten it."
    return None


def clamp(k: int | float | None, low: int, high: int, default: int) -> int:
    """`k` within [low, high]; `default` when it is not given."""
    return max(low, min(int(default if k is None else k), high))
