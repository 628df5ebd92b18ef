"""How fast each answer backend reads a prompt and writes an answer, measured on real answers, so the
evidence budget follows it.

Why: a learner waits for the whole answer, and its two parts scale differently. Reading the prompt costs
some tens of tokens a second on 2 CPU cores and thousands on a GPU; writing ~80 tokens of answer costs
several seconds on the CPU and well under one on a GPU. One fixed evidence budget is either slow on the CPU
or starves the GPU of context. So each answer times its first token against the prompt tokens it sent
(reading speed) and the rest against the tokens it wrote (writing speed and length); the running estimates
(exponential averages per backend and device) are kept in the data dir, so the next start plans with what
this machine measured. The budget is what the backend reads in the time the answer target leaves after
writing (`llm.answer_target_s`), never less than what it reads in `llm.first_token_target_s`. The sources
and their passages are on screen as soon as retrieval is done, before the model reads anything.
`llm.prompt_tokens_per_s` overrides the measured reading speed.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from core.files import atomic_write_text
from core.settings import LLMSettings

log = logging.getLogger(__name__)

SMOOTHING = 0.4  # weight of the newest measurement: a changed machine is followed within a few answers
MIN_PROMPT_TOKENS = 40  # shorter prompts time the decode step more than the reading: not a measurement
MIN_ANSWER_TOKENS = 8  # a shorter answer times the grammar's start more than the writing
MIN_LEAD_TOKENS = 40  # the first sentence's passage: the source's title and at least a sentence
HELD_TOKENS = 6  # the lead's first words, written before any is shown (assistant/chain.py LEAD_HELD_WORDS)


@dataclass
class BackendSpeed:
    """One backend's measured speeds: prompt tokens read per second; answer tokens written per second and
    answer length in tokens (None until an answer long enough to time was written)."""

    prompt: float
    generate: float | None = None
    answer_tokens: float | None = None

    def writing_s(self) -> float | None:
        """Seconds a typical answer takes to write, once measured."""
        if self.generate is None or self.answer_tokens is None:
            return None
        return self.answer_tokens / self.generate


def _average(old: float | None, new: float) -> float:
    return new if old is None else (1 - SMOOTHING) * old + SMOOTHING * new


class PromptSpeed:
    """Measured speeds per backend key (e.g. "embedded:packaged:cpu"), persisted as JSON."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.speeds: dict[str, BackendSpeed] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                for key, value in data.items():
                    # A bare number is the older file's prompt speed.
                    speed = BackendSpeed(float(value)) if isinstance(value, (int, float)) else BackendSpeed(**value)
                    if speed.prompt > 0:
                        self.speeds[str(key)] = speed
            except (ValueError, TypeError, AttributeError, OSError) as exc:
                log.warning("ignoring unreadable prompt speeds in %s (%s); they are measured again", path, exc)

    def rate(self, key: str) -> float | None:
        """Prompt tokens read per second, once measured."""
        speed = self.speeds.get(key)
        return speed.prompt if speed is not None else None

    def speed(self, key: str) -> BackendSpeed | None:
        return self.speeds.get(key)

    def observe(self, key: str, prompt_tokens: int, first_token_s: float, answer_tokens: int = 0,
                writing_s: float = 0.0) -> None:
        """Fold one answer's timing in: `prompt_tokens` read before the first token came after `first_token_s`
        (0: not a reading measurement, the writing still counts once a reading speed is known), then
        `answer_tokens` written in `writing_s`."""
        reading = prompt_tokens >= MIN_PROMPT_TOKENS and first_token_s > 0
        with self.lock:
            old = self.speeds.get(key)
            if old is None and not reading:
                return
            prompt = _average(old.prompt if old else None, prompt_tokens / first_token_s) if reading else old.prompt
            speed = BackendSpeed(prompt, old.generate if old else None, old.answer_tokens if old else None)
            if answer_tokens >= MIN_ANSWER_TOKENS and writing_s > 0:
                speed.generate = _average(speed.generate, answer_tokens / writing_s)
                speed.answer_tokens = _average(speed.answer_tokens, float(answer_tokens))
            self.speeds[key] = speed
            if self.path is not None:
                data = {k: {f: round(v, 2) for f, v in asdict(s).items() if v is not None}
                        for k, s in self.speeds.items()}
                try:
                    atomic_write_text(self.path, json.dumps(data))
                except OSError as exc:
                    log.warning("could not save prompt speeds to %s: %s", self.path, exc)


def evidence_budget(cfg: LLMSettings, speed: BackendSpeed | float | None, question_tokens: int) -> int:
    """Evidence tokens the backend reads in the time the answer target leaves after writing a typical answer
    (at least `first_token_target_s`), question excluded, clamped; the configured `evidence_tokens` until a
    speed is known. A bare number is a reading speed with the writing not yet measured."""
    if isinstance(speed, (int, float)):
        speed = BackendSpeed(float(speed))
    rate = cfg.prompt_tokens_per_s or (speed.prompt if speed is not None else None)
    if rate is None:
        return cfg.evidence_tokens
    writing = speed.writing_s() if speed is not None else None
    reading_s = cfg.first_token_target_s if writing is None else max(cfg.first_token_target_s,
                                                                      cfg.answer_target_s - writing)
    budget = int(rate * reading_s) - question_tokens
    return max(cfg.evidence_tokens_min, min(cfg.evidence_tokens_max, budget))


def lead_budget(cfg: LLMSettings, speed: BackendSpeed | None, question_tokens: int, spent_s: float = 0.0) -> int | None:
    """Evidence tokens the backend reads in what is left of `first_token_target_s` once `spent_s` (retrieval,
    evidence) has passed and the held first words are written: the part it writes the first sentence from,
    so the first text is on screen within the target. None when that is not known (no speed measured) or
    `llm.lead_sentence` is off."""
    rate = cfg.prompt_tokens_per_s or (speed.prompt if speed is not None else None)
    if not cfg.lead_sentence or rate is None:
        return None
    held_s = HELD_TOKENS / speed.generate if speed is not None and speed.generate else 0.0
    left_s = max(0.0, cfg.first_token_target_s - spent_s - held_s)
    return max(MIN_LEAD_TOKENS, int(rate * left_s) - question_tokens)
