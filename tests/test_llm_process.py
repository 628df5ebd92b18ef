"""The embedded chat model in a process of its own (`llm.separate_process`): the packaged GGUF on this
machine's CPU build, in a real child process."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from assistant import prompt
from assistant.llm_process import ModelProcessError, SeparateProcessLLM
from assistant.llm import EmbeddedLLM, assemble_packaged_gguf, embedded_llm, gpu_offload_available, runs_separately
from core.settings import LLMSettings, Settings

MODELS_DIR = Path(os.environ["GPUGUIDE_MODEL_CACHE"])  # the one shared model cache (tests/conftest.py)
GRAMMAR = prompt.answer_grammar(1, 1)


@pytest.fixture(scope="module")
def model_file() -> Path:
    return assemble_packaged_gguf(MODELS_DIR)


@pytest.fixture
def child(model_file: Path):
    llm = SeparateProcessLLM(model_file, LLMSettings(model_path=str(model_file), threads=2, prompt_cache=False), None)
    yield llm
    llm.close()


def question(text: str = "What does FlashAttention avoid?") -> str:
    evidence = prompt.render_evidence([prompt.EvidenceBlock(1, "FlashAttention", (
        "FlashAttention tiles attention so the full score matrix never reaches HBM.",))])
    return prompt.per_question_text(evidence, text)


def test_a_model_in_its_own_process_answers_with_a_citation(child):
    text = "".join(child.stream(question(), GRAMMAR, 24))
    assert "[1]" in text
    assert child.pid not in (None, os.getpid())
    assert child.device_text() == "CPU, in a process of its own"


def test_a_model_process_that_died_between_questions_is_started_again(child):
    child.warm()
    os.kill(child.pid, signal.SIGKILL)
    text = "".join(child.stream(question(), GRAMMAR, 24))
    assert "[1]" in text
    assert child.restarts == 1


def test_a_model_process_that_dies_mid_answer_gives_a_one_line_error_naming_the_signal(child):
    pieces = child.stream(question(), GRAMMAR, 48)
    next(pieces)
    os.kill(child.pid, signal.SIGSEGV)
    with pytest.raises(ModelProcessError, match="killed by SIGSEGV") as caught:
        list(pieces)
    assert "\n" not in str(caught.value)


def test_an_answer_left_unread_does_not_leak_into_the_next_one(child):
    whole = "".join(child.stream(question(), GRAMMAR, 24))
    abandoned = child.stream(question(), GRAMMAR, 24)
    next(abandoned)
    abandoned.close()
    assert "".join(child.stream(question(), GRAMMAR, 24)) == whole  # greedy: the same answer, whole, again


def test_a_file_that_is_no_model_gives_a_one_line_error(tmp_path):
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"this is not a GGUF file")
    llm = SeparateProcessLLM(bad, LLMSettings(model_path=str(bad), threads=1, prompt_cache=False), None)
    with pytest.raises(ModelProcessError, match="could not load|stopped") as caught:
        llm.warm()
    assert "\n" not in str(caught.value)
    llm.close()


def test_the_setting_chooses_where_the_model_runs_and_unset_follows_the_build(tmp_path, model_file):
    def settings(separate: bool | None) -> Settings:
        return Settings(home=tmp_path, llm={"model_path": str(model_file), "threads": 2, "prompt_cache": False,
                                            "separate_process": separate})

    assert isinstance(embedded_llm(settings(True)), SeparateProcessLLM)
    assert isinstance(embedded_llm(settings(False)), EmbeddedLLM)
    assert runs_separately(settings(None).llm) is gpu_offload_available()
    embedded_llm(settings(True)).close()
