"""The GPU knobs on the real packaged model and embedder: `llm.gpu_layers` reaches llama.cpp's model
parameters, a CPU-only build keeps answering with it set, and the embedder's pipelined GPU path gives the
vectors of sentence-transformers' own `encode` (checked here on the CPU, where it runs the same code)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from fixtures.llm import tokens_until_end

from assistant import prompt
from assistant.llm import (
    EmbeddedLLM,
    assemble_packaged_gguf,
    describe_device,
    gpu_offload_available,
    resolve_gpu_layers,
)
from core.settings import LLMSettings, Settings, load_settings

MODELS_DIR = Path(os.environ["GPUGUIDE_MODEL_CACHE"])  # the one shared model cache (tests/conftest.py)
ALL_LAYERS = 0x7FFFFFFF  # what llama-cpp-python passes to llama.cpp for n_gpu_layers=-1


@pytest.fixture(scope="module")
def model_file() -> Path:
    return assemble_packaged_gguf(MODELS_DIR)


def load(tmp_path: Path, model_file: Path, **llm) -> tuple[Settings, EmbeddedLLM]:
    settings = Settings(home=tmp_path, llm={"model_path": str(model_file), "threads": 2, "prompt_cache": False, **llm})
    return settings, EmbeddedLLM(model_file, settings.llm, None)


def test_gpu_layers_setting_reaches_llama_cpp_model_params(tmp_path, model_file):
    _, model = load(tmp_path, model_file, gpu_layers=7)
    assert model.llm.model_params.n_gpu_layers == 7


def test_unset_gpu_layers_mean_all_layers_with_a_gpu_build_and_none_without(tmp_path, model_file):
    _, model = load(tmp_path, model_file)
    expected = ALL_LAYERS if gpu_offload_available() else 0
    assert model.llm.model_params.n_gpu_layers == expected


def test_gpu_layers_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUGUIDE_HOME", str(tmp_path))
    monkeypatch.setenv("GPUGUIDE_LLM__GPU_LAYERS", "12")
    assert resolve_gpu_layers(load_settings().llm) == 12


def test_zero_gpu_layers_is_the_cpu_whatever_the_build():
    assert resolve_gpu_layers(LLMSettings(gpu_layers=0)) == 0
    assert describe_device(Settings(llm={"gpu_layers": 0})) == "CPU"


@pytest.mark.skipif(gpu_offload_available(), reason="this machine's llama.cpp is a GPU build that sees a GPU")
def test_a_cpu_only_build_answers_with_gpu_layers_set_and_says_it_runs_on_the_cpu(tmp_path, model_file):
    settings, model = load(tmp_path, model_file, gpu_layers=99)
    evidence = prompt.render_evidence([prompt.EvidenceBlock(1, "FlashAttention", (
        "FlashAttention computes exact attention without writing the full attention matrix to HBM.",))])
    text = "".join(model.stream(prompt.per_question_text(evidence, "What does FlashAttention avoid?"),
                                prompt.answer_grammar(1, 1), 48))
    assert "[1]" in text
    assert model.device_text() == "CPU"
    assert describe_device(settings) == "CPU"


def test_pipelined_encoding_gives_the_vectors_of_encode():
    from index.embed import encode_pipelined, load_model, packaged_model_path

    model = load_model(packaged_model_path(), "cpu")
    texts = ["x", "shared memory bank conflicts " * 30, "warp divergence", "roofline model of a GEMM " * 8] * 5
    expected = model.encode(texts, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    got = encode_pipelined(model, texts, batch_size=3, prefetch=2)
    assert got.shape == expected.shape and got.dtype == np.float32
    assert float((got * expected).sum(axis=1).min()) > 1 - 1e-5


def test_the_status_tab_says_where_the_chat_model_runs():
    from assistant.app_state import IndexStatus
    from assistant.render import render_status

    html = render_status(IndexStatus(resources=3, model_device="GPU (29 of 29 layers)"))
    assert "Chat model runs on" in html and "GPU (29 of 29 layers)" in html


def test_greedy_under_grammar_picks_the_tokens_of_llama_cpps_grammar_sampler(tmp_path, model_file):
    from llama_cpp import LlamaGrammar

    from assistant.llm import greedy_under_grammar

    _, model = load(tmp_path, model_file)
    evidence = prompt.render_evidence([
        prompt.EvidenceBlock(1, "FlashAttention", ("FlashAttention tiles attention so the score matrix never reaches HBM.",)),
        prompt.EvidenceBlock(2, "vLLM", ("PagedAttention stores the key-value cache in fixed-size blocks.",)),
    ])
    body = model.llm.tokenize(prompt.per_question_text(evidence, "How does vLLM store the KV cache?").encode(),
                              add_bos=False, special=False)
    tokens = model.prefix + body + model.tail
    grammar = prompt.answer_grammar(2, 2)

    reference = tokens_until_end(model, model.llm.generate(tokens, temp=0.0, top_k=1, repeat_penalty=1.0,
                                                           grammar=LlamaGrammar.from_string(grammar, verbose=False)), 40)
    assert tokens_until_end(model, greedy_under_grammar(model.llm, tokens, grammar), 40) == reference
    assert "[2]" in model.llm.detokenize(reference).decode()


def test_pipelined_encoding_in_worker_processes_gives_the_vectors_of_encode():
    from index.embed import encode_pipelined, load_model, packaged_model_path

    model = load_model(packaged_model_path(), "cpu")
    texts = [f"tile {i} of a GEMM in shared memory " * (1 + i % 7) for i in range(40)]
    expected = model.encode(texts, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    got = encode_pipelined(model, texts, batch_size=6, prefetch=2, processes=2)
    assert got.shape == expected.shape
    assert float((got * expected).sum(axis=1).min()) > 1 - 1e-5


def test_the_fast_tokenizer_gives_the_models_own_input_ids_and_mask():
    from index.embed import load_model, packaged_model_path
    from index.gpu_tokenizer import FastTokenizer

    model = load_model(packaged_model_path(), "cpu")
    texts = ["  Bank conflicts in SMEM ", "warp " * 400, "cp.async and TMA"]
    fast = FastTokenizer.for_model(model)
    assert fast is not None
    got, want = fast(texts), model.tokenize(texts)
    for key in ("input_ids", "attention_mask"):
        assert got[key].tolist() == want[key].tolist()


def test_big_gpu_jobs_tokenize_in_worker_processes_and_small_ones_on_threads(tmp_path, monkeypatch):
    from index.embed import Embedder

    monkeypatch.setattr("os.cpu_count", lambda: 16)
    embedder = Embedder(Settings(home=tmp_path, embed={"gpu_processes_from": 1000}))
    assert embedder.tokenize_processes(999) == 0
    assert embedder.tokenize_processes(1000) == 15
    assert Embedder(Settings(home=tmp_path, embed={"gpu_tokenize_processes": 0})).tokenize_processes(10**6) == 0


def test_torchs_cpu_threads_are_held_at_one_for_the_block_and_restored_after():
    import torch

    from index.embed import torch_cpu_threads

    before = torch.get_num_threads()
    with torch_cpu_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_the_chat_benchmarks_steady_decode_runs_on_a_model_that_was_not_warmed(tmp_path, model_file, monkeypatch):
    """bench/gpu_chat.py's decode measure once took the model's lock and then warmed it, which takes it again."""
    import importlib.util
    import threading

    bench = Path(__file__).resolve().parent.parent / "bench"
    monkeypatch.syspath_prepend(str(bench))
    spec = importlib.util.spec_from_file_location("gpu_chat_bench", bench / "gpu_chat.py")
    gpu_chat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_chat)
    _, model = load(tmp_path, model_file)
    tokens: list[int] = []
    worker = threading.Thread(target=lambda: tokens.extend(gpu_chat.decode_pieces(model, "What is a warp?", 3)),
                              daemon=True)
    worker.start()
    worker.join(timeout=300)
    assert not worker.is_alive(), "decode_pieces never finished (a lock taken twice?)"
    assert len(tokens) == 3
