"""How fast each answer backend reads a prompt, measured on real answers, so the evidence budget follows it.

Why: the first token waits for the whole prompt. On 2 CPU cores the packaged model reads some tens of tokens
a second, on a GPU thousands, and a remote server anything in between; one fixed budget is either slow on the
CPU or starves the GPU of context. Each answer times its first token against the prompt tokens it sent; the
running estimate (an exponential average per backend and device) is kept in the data dir, so the next start
plans with what this machine measured. `llm.prompt_tokens_per_s` overrides the measurement.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from core.settings import LLMSettings
from ingest.storage import atomic_write_text

log = logging.getLogger(__name__)

SMOOTHING = 0.4  # weight of the newest measurement: a changed machine is followed within a few answers
MIN_PROMPT_TOKENS = 40  # shorter prompts time the decode step more than the reading: not a measurement


class PromptSpeed:
    """Measured prompt tokens per second per backend key (e.g. "embedded:CPU"), persisted as JSON."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.rates: dict[str, float] = {}
        if path is not None and path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                self.rates = {str(k): float(v) for k, v in data.items() if float(v) > 0}
            except (ValueError, TypeError, AttributeError, OSError) as exc:
                log.warning("ignoring unreadable prompt speeds in %s (%s); they are measured again", path, exc)

    def rate(self, key: str) -> float | None:
        return self.rates.get(key)

    def observe(self, key: str, prompt_tokens: int, first_token_s: float) -> None:
        """Fold one answer's timing in: `prompt_tokens` read before the first token came after `first_token_s`."""
        if prompt_tokens < MIN_PROMPT_TOKENS or first_token_s <= 0:
            return
        measured = prompt_tokens / first_token_s
        with self.lock:
            old = self.rates.get(key)
            self.rates[key] = measured if old is None else (1 - SMOOTHING) * old + SMOOTHING * measured
            if self.path is not None:
                try:
                    atomic_write_text(self.path, json.dumps({k: round(v, 2) for k, v in self.rates.items()}))
                except OSError as exc:
                    log.warning("could not save prompt speeds to %s: %s", self.path, exc)


def evidence_budget(cfg: LLMSettings, tokens_per_s: float | None, question_tokens: int) -> int:
    """Evidence tokens the backend reads within `cfg.first_token_target_s`, question included, clamped; the
    configured `evidence_tokens` until a speed is known."""
    rate = cfg.prompt_tokens_per_s or tokens_per_s
    if rate is None:
        return cfg.evidence_tokens
    budget = int(rate * cfg.first_token_target_s) - question_tokens
    return max(cfg.evidence_tokens_min, min(cfg.evidence_tokens_max, budget))
