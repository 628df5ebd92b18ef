"""The chat model's own process (see assistant/llm_process.py): started by `SeparateProcessLLM` as
`python -c "import llama_cpp, ...; serve(argv)"`, so llama.cpp loads before numpy and torch."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from assistant.llm_process import send
from assistant.llm import EmbeddedLLM
from core.settings import LLMSettings


def serve(argv: list[str], protocol_fd: int) -> None:
    """The child: load the model named on the command line, then answer requests from stdin until it closes.

    Protocol lines go to `protocol_fd` (the parent's pipe); fd 1 already points at stderr."""
    path, cfg_json, cache = Path(argv[0]), argv[1], argv[2]
    # this process only generates, so all of it yields to the server (os.nice below), not thread by thread
    cfg = LLMSettings.model_validate_json(cfg_json)
    nice, cfg = cfg.generation_nice, cfg.model_copy(update={"generation_nice": 0})
    out = os.fdopen(protocol_fd, "w", encoding="utf-8")
    try:
        if nice > 0:
            os.nice(nice)
        model = EmbeddedLLM(path, cfg, Path(cache) if cache else None)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it as a UserError
        send(out, {"error": str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__})
        return
    send(out, {"ready": True, "device": model.device_text(), "gpu_layers": model.gpu_layers})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request.get("warm"):
                model.warm()
            else:
                for piece in model.stream(request["text"], request.get("grammar"), int(request["max_tokens"]),
                                          str(request.get("answer_start", "")), bool(request.get("one_sentence"))):
                    send(out, {"piece": piece})
            send(out, {"done": True})
        except Exception as exc:  # noqa: BLE001 - the parent raises it; the child keeps serving
            send(out, {"error": str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__})
