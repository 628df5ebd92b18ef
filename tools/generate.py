"""The packaged chat model over a file of prompts, for the data generators (synth_questions, synth_learners):
one sampling loop per backend, and the JSONL files they pass between steps.

Two backends: llama.cpp (this machine's CPU build, one prompt at a time) and transformers reading the same
GGUF (batched, on a GPU where there is one: the device machine has torch but no llama.cpp). Imports of the
backends are late, so each step runs where only its own backend is installed.
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from core.files import atomic_write_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sampling:
    """How a generator samples: the replies must vary, so never greedy."""

    max_tokens: int
    temperature: float
    top_p: float


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """Atomic: a temp file renamed into place."""
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def add_generate_arguments(sub: argparse._SubParsersAction, backend: str, batch: int) -> argparse.ArgumentParser:
    """The `generate` step's options, the same in every generator."""
    p = sub.add_parser("generate", help="run the chat model over the prompts")
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--model", type=Path, required=True, help="the GGUF file")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--backend", choices=("llama", "transformers"), default=backend)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=batch)
    return p


def generate(prompts: list[str], args: argparse.Namespace, sampling: Sampling) -> list[str]:
    """One reply per prompt, in order, from the backend the `generate` options name."""
    if args.backend == "llama":
        return generate_llama(prompts, args.model, args.seed, args.threads, sampling)
    return generate_transformers(prompts, args.model, args.seed, args.batch, sampling)


def generate_llama(prompts: list[str], model: Path, seed: int, threads: int, sampling: Sampling) -> list[str]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), n_ctx=2048, n_threads=threads, n_batch=512, seed=seed, verbose=False)
    out = []
    for i, prompt in enumerate(prompts, start=1):
        reply = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}],
                                           max_tokens=sampling.max_tokens, temperature=sampling.temperature,
                                           top_p=sampling.top_p)
        out.append(reply["choices"][0]["message"]["content"])
        log.info("%d/%d", i, len(prompts))
    return out


def generate_transformers(prompts: list[str], model: Path, seed: int, batch: int, sampling: Sampling) -> list[str]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    tok = AutoTokenizer.from_pretrained(str(model.parent), gguf_file=model.name)
    tok.padding_side = "left"
    lm = AutoModelForCausalLM.from_pretrained(str(model.parent), gguf_file=model.name, torch_dtype=torch.bfloat16)
    lm = lm.to("cuda" if torch.cuda.is_available() else "cpu").eval()
    texts = [tok.apply_chat_template([{"role": "user", "content": p}], tokenize=False, add_generation_prompt=True)
             for p in prompts]
    out: list[str] = []
    for start in range(0, len(texts), batch):
        enc = tok(texts[start:start + batch], return_tensors="pt", padding=True).to(lm.device)
        with torch.no_grad():
            gen = lm.generate(**enc, max_new_tokens=sampling.max_tokens, do_sample=True,
                              temperature=sampling.temperature, top_p=sampling.top_p,
                              pad_token_id=tok.pad_token_id or tok.eos_token_id)
        out += tok.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        log.info("%d/%d", len(out), len(texts))
    return out
