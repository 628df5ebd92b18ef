"""`gpuguide doctor` (assistant/doctor.py): each case runs in a fresh interpreter and reports how far it got;
the verdict says what the cases mean for the settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from assistant.doctor import APPS_WAY, run_case, verdict
from assistant.llm import gpu_offload_available

ROOT = Path(__file__).resolve().parent.parent


def _case(outcome: str) -> dict:
    return {"imports": [], "outcome": outcome, "last_step": "answered" if outcome == "ok" else "imported",
            "steps": [], "seconds": 1.0}


def test_a_case_that_cannot_load_its_model_reports_the_step_it_reached(tmp_path: Path) -> None:
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"this is no GGUF file")
    case = run_case(["numpy"], str(bogus), timeout_s=120)
    assert case["outcome"] == "exit 1"
    assert case["last_step"] == "imported"


def test_the_verdict_on_a_cpu_build_with_no_cases_points_at_the_gpu_install() -> None:
    assert "make install-gpu" in verdict({"gpu_offload_available": False, "cases": {}})


def test_the_verdict_keeps_the_model_in_its_own_process_when_only_that_answers() -> None:
    cases = {"numpy, then llama_cpp": _case("killed by SIGSEGV"), APPS_WAY: _case("ok")}
    assert "separate_process" in verdict({"gpu_offload_available": True, "cases": cases})


def test_the_verdict_falls_back_to_the_cpu_when_the_apps_way_fails() -> None:
    cases = {"llama_cpp first": _case("ok"), APPS_WAY: _case("killed by SIGSEGV")}
    assert "gpu_layers = 0" in verdict({"gpu_offload_available": True, "cases": cases})


def test_the_verdict_when_every_case_answers() -> None:
    cases = {"llama_cpp first": _case("ok"), APPS_WAY: _case("ok")}
    assert verdict({"gpu_offload_available": True, "cases": cases}).startswith("every case")


def test_the_cli_doctor_prints_its_findings_as_json() -> None:
    done = subprocess.run([sys.executable, "-m", "assistant.cli", "doctor", "--json"], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=600, check=False)
    report = json.loads(done.stdout)
    assert report["gpu_offload_available"] == gpu_offload_available()
    assert report["model"].endswith(".gguf") and report["verdict"]
    if not report["gpu_offload_available"]:  # a CPU build: nothing to check, nothing run
        assert report["cases"] == {} and done.returncode == 0
