"""The evidence budget follows the backend's measured reading and writing speeds, remembered in the data dir."""

from __future__ import annotations

import json
from pathlib import Path

from assistant.speed import HELD_TOKENS, MIN_LEAD_TOKENS, BackendSpeed, PromptSpeed, evidence_budget, lead_budget
from core.settings import LLMSettings


def test_without_a_measurement_the_configured_budget_is_used():
    assert evidence_budget(LLMSettings(evidence_tokens=220), None, 20) == 220


def test_before_the_writing_is_timed_the_budget_is_what_the_backend_reads_in_the_first_token_target():
    cfg = LLMSettings(first_token_target_s=2.0, evidence_tokens_min=40, evidence_tokens_max=5000)
    assert evidence_budget(cfg, BackendSpeed(prompt=100.0), 30) == 170


def test_the_budget_is_what_the_backend_reads_in_the_time_left_after_writing_a_typical_answer():
    cfg = LLMSettings(first_token_target_s=2.0, answer_target_s=10.0, evidence_tokens_min=40, evidence_tokens_max=5000)
    # 80 tokens at 20 tokens/s: 4 s of writing leaves 6 s of reading at 100 tokens/s
    assert evidence_budget(cfg, BackendSpeed(prompt=100.0, generate=20.0, answer_tokens=80.0), 30) == 570


def test_slow_writing_never_cuts_the_reading_below_the_first_token_target():
    cfg = LLMSettings(first_token_target_s=2.0, answer_target_s=10.0, evidence_tokens_min=40, evidence_tokens_max=5000)
    assert evidence_budget(cfg, BackendSpeed(prompt=100.0, generate=5.0, answer_tokens=80.0), 0) == 200


def test_a_slow_cpu_gets_the_floor_and_a_gpu_the_ceiling():
    cfg = LLMSettings(evidence_tokens_min=120, evidence_tokens_max=1400)
    assert evidence_budget(cfg, BackendSpeed(prompt=10.0), 20) == 120
    assert evidence_budget(cfg, BackendSpeed(prompt=5000.0, generate=300.0, answer_tokens=80.0), 20) == 1400


def test_a_configured_speed_overrides_the_measured_reading():
    cfg = LLMSettings(prompt_tokens_per_s=100.0, first_token_target_s=2.0, evidence_tokens_min=40)
    assert evidence_budget(cfg, BackendSpeed(prompt=1000.0), 0) == 200


def test_the_lead_is_what_the_backend_reads_in_the_first_token_target_left_after_retrieval_and_held_words():
    cfg = LLMSettings(first_token_target_s=2.5)
    speed = BackendSpeed(prompt=100.0, generate=2 * HELD_TOKENS, answer_tokens=80.0)  # held words: 0.5 s
    # 2.5 s - 0.5 s spent on retrieval - 0.5 s writing the held words leaves 1.5 s: 150 tokens, less the question
    assert lead_budget(cfg, speed, 30, spent_s=0.5) == 120


def test_there_is_no_lead_before_the_reading_is_timed_or_when_it_is_switched_off():
    assert lead_budget(LLMSettings(), None, 30) is None
    assert lead_budget(LLMSettings(lead_sentence=False), BackendSpeed(prompt=100.0), 30) is None


def test_a_slow_retrieval_still_leaves_the_lead_a_sentence():
    assert lead_budget(LLMSettings(first_token_target_s=2.5), BackendSpeed(prompt=100.0), 30, spent_s=9.0) == MIN_LEAD_TOKENS


def test_measurements_are_averaged_and_survive_a_restart(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 200, 2.0, 60, 3.0)
    speed.observe("embedded:cpu", 200, 1.0, 100, 5.0)
    again = PromptSpeed(tmp_path / "prompt-speed.json").speed("embedded:cpu")
    assert again == BackendSpeed(prompt=100 * 0.6 + 200 * 0.4, generate=20.0, answer_tokens=60 * 0.6 + 100 * 0.4)


def test_a_prompt_too_short_to_time_is_not_a_measurement(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 10, 0.5)
    assert speed.rate("embedded:cpu") is None


def test_an_answer_without_a_reading_measurement_still_times_the_writing(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 200, 2.0, 60, 3.0)
    speed.observe("embedded:cpu", 0, 0.1, 100, 2.0)
    assert speed.speed("embedded:cpu") == BackendSpeed(prompt=100.0, generate=20 * 0.6 + 50 * 0.4,
                                                       answer_tokens=60 * 0.6 + 100 * 0.4)


def test_writing_alone_is_no_measurement_before_a_reading_speed_is_known(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 0, 0.1, 100, 2.0)
    assert speed.speed("embedded:cpu") is None


def test_an_answer_too_short_to_time_leaves_the_writing_unmeasured(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 200, 2.0, 3, 0.2)
    assert speed.speed("embedded:cpu") == BackendSpeed(prompt=100.0)


def test_the_older_file_of_bare_reading_speeds_is_still_read(tmp_path: Path):
    path = tmp_path / "prompt-speed.json"
    path.write_text(json.dumps({"embedded:cpu": 68.7}))
    assert PromptSpeed(path).speed("embedded:cpu") == BackendSpeed(prompt=68.7)


def test_an_unreadable_speed_file_is_measured_again(tmp_path: Path):
    path = tmp_path / "prompt-speed.json"
    path.write_text("{not json")
    assert PromptSpeed(path).rate("embedded:cpu") is None
