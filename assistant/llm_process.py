"""The embedded chat model in a process of its own (`llm.separate_process`), answering over JSON lines.

Why: on the H200 machine a CUDA build of llama.cpp crashed (SIGSEGV) loading the model in any process that had
imported numpy or torch first, and torch crashed importing after it (`gpuguide doctor` checks a machine).
The app needs numpy and torch, so on a GPU build the model runs in a child that imports llama_cpp before
anything else. A crash there ends the child, not the server: the question gets a one-line error and the next
one starts a new child. The child is `python -c "import llama_cpp; ..."` rather than multiprocessing, whose
spawn would first re-import the parent's main module (and numpy with it).

Protocol, one JSON object per line: the parent sends {"text", "grammar", "max_tokens", "answer_start",
"one_sentence"} (EmbeddedLLM.stream's arguments) or {"warm": true};
the child answers {"piece": str} lines then {"done": true}, or {"error": str}. It starts by sending {"ready": true,
"device": str} once the model is loaded, and ends when its stdin closes.
"""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from core.errors import UserError
from core.settings import LLMSettings

log = logging.getLogger(__name__)

# fd 1 is kept for the protocol and pointed at stderr before anything loads, so no library's own output (llama.cpp
# writes from C) can land among the protocol lines
CHILD = ("import os; protocol = os.dup(1); os.dup2(2, 1); import llama_cpp, sys; "
         "from assistant.llm_child import serve; serve(sys.argv[1:], protocol)")


class ModelProcessError(UserError):
    """The model's process failed to start or stopped; the message says how and what to do."""


def send(out: IO[str], message: dict[str, Any]) -> None:
    """One protocol line, flushed (the other side reads line by line)."""
    out.write(json.dumps(message) + "\n")
    out.flush()


class SeparateProcessLLM:
    """The parent's handle: the same `stream`, `warm` and `device_text` as EmbeddedLLM, one request at a time."""

    def __init__(self, path: Path, cfg: LLMSettings, cache_dir: Path | None) -> None:
        self.path, self.cfg, self.cache_dir = path, cfg, cache_dir
        self.lock = threading.Lock()
        self.restarts = 0
        self._child: subprocess.Popen[str] | None = None
        self._device = "CPU"
        self.gpu_layers = 0

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def device_text(self) -> str:
        """What the status tab shows: where the child runs the model, once it has loaded it."""
        return f"{self._device}, in a process of its own" if self._child is not None else "a process of its own, not started yet"

    def warm(self) -> None:
        with self.lock:
            for _ in self._request({"warm": True}):
                pass

    def stream(self, per_question: str, grammar: str | None, max_tokens: int, answer_start: str = "",
               one_sentence: bool = False) -> Iterator[str]:
        with self.lock:
            yield from self._request({"text": per_question, "grammar": grammar, "max_tokens": max_tokens,
                                      "answer_start": answer_start, "one_sentence": one_sentence})

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None and child.poll() is None:
            child.stdin.close()  # type: ignore[union-attr]
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

    def _request(self, message: dict[str, Any]) -> Iterator[str]:
        child, reply = self._first_reply(message)
        finished = False
        try:
            while "piece" in reply:
                yield reply["piece"]
                reply = self._read(child)
            finished = True
            if "error" in reply:
                raise ModelProcessError(f"the chat model failed: {reply['error']}")
        finally:
            if not finished and child.poll() is None:  # the caller stopped reading: skip the rest of the answer
                while "piece" in self._read(child):
                    pass

    def _first_reply(self, message: dict[str, Any]) -> tuple[subprocess.Popen[str], dict[str, Any]]:
        """Send the request; a child that had died while idle (unnoticed until now) is replaced once."""
        for attempt in (1, 2):
            fresh = self._child is None or self._child.poll() is not None
            child = self._running()
            try:
                try:
                    send(child.stdin, message)  # type: ignore[arg-type]
                except OSError:  # a broken pipe: the child is gone
                    raise self._stopped(child) from None
                return child, self._read(child)
            except ModelProcessError:
                if fresh or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _running(self) -> subprocess.Popen[str]:
        if self._child is not None and self._child.poll() is None:
            return self._child
        if self._child is not None:
            self.restarts += 1
            log.warning("the chat model's process had stopped (%s); starting it again", _how(self._child))
        cache = str(self.cache_dir) if self.cache_dir is not None and self.cfg.prompt_cache else ""
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(self.path), self.cfg.model_dump_json(), cache],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            cwd=Path(__file__).resolve().parent.parent,
        )
        self._child = child
        ready = self._read(child)
        if "error" in ready:
            child.wait(timeout=10)
            raise ModelProcessError(f"the chat model could not load: {ready['error']}")
        self._device, self.gpu_layers = ready["device"], int(ready["gpu_layers"])
        log.info("chat model loaded in process %d (%s)", child.pid, self._device)
        return child

    def _read(self, child: subprocess.Popen[str]) -> dict[str, Any]:
        while line := child.stdout.readline():  # type: ignore[union-attr]
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                message = None
            if isinstance(message, dict):
                return message
            log.debug("chat model process said: %s", line.rstrip())  # not a protocol line: never an answer
        raise self._stopped(child)

    def _stopped(self, child: subprocess.Popen[str]) -> ModelProcessError:
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
        return ModelProcessError(
            f"the chat model's process stopped ({_how(child)}); the next question starts it again. "
            "If it keeps stopping, run `gpuguide doctor` or set llm.gpu_layers = 0"
        )


def _how(child: subprocess.Popen[str]) -> str:
    code = child.returncode
    if code is None:
        return "still running"
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
