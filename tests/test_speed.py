"""The evidence budget follows the backend's measured prompt speed, remembered in the data dir."""

from __future__ import annotations

from pathlib import Path

from assistant.speed import PromptSpeed, evidence_budget
from core.settings import LLMSettings


def test_without_a_measurement_the_configured_budget_is_used():
    assert evidence_budget(LLMSettings(evidence_tokens=220), None, 20) == 220


def test_the_budget_is_what_the_backend_reads_in_the_target_time_less_the_question():
    cfg = LLMSettings(first_token_target_s=2.0, evidence_tokens_min=40, evidence_tokens_max=5000)
    assert evidence_budget(cfg, 100.0, 30) == 170


def test_a_slow_cpu_gets_the_floor_and_a_gpu_the_ceiling():
    cfg = LLMSettings(evidence_tokens_min=120, evidence_tokens_max=1400)
    assert evidence_budget(cfg, 10.0, 20) == 120
    assert evidence_budget(cfg, 5000.0, 20) == 1400


def test_a_configured_speed_overrides_the_measurement():
    cfg = LLMSettings(prompt_tokens_per_s=100.0, first_token_target_s=2.0, evidence_tokens_min=40)
    assert evidence_budget(cfg, 1000.0, 0) == 200


def test_measurements_are_averaged_and_survive_a_restart(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 200, 2.0)
    speed.observe("embedded:cpu", 200, 1.0)
    assert speed.rate("embedded:cpu") == 100 * 0.6 + 200 * 0.4
    assert PromptSpeed(tmp_path / "prompt-speed.json").rate("embedded:cpu") == 140.0


def test_a_prompt_too_short_to_time_is_not_a_measurement(tmp_path: Path):
    speed = PromptSpeed(tmp_path / "prompt-speed.json")
    speed.observe("embedded:cpu", 10, 0.5)
    assert speed.rate("embedded:cpu") is None


def test_an_unreadable_speed_file_is_measured_again(tmp_path: Path):
    path = tmp_path / "prompt-speed.json"
    path.write_text("{not json")
    assert PromptSpeed(path).rate("embedded:cpu") is None
