"""In CI (env CI=true) a skipped test fails, so a missing prerequisite cannot pass unnoticed; a skip the
test marks `allowed_skip(reason=...)` stays a skip. Runs pytest on a small suite with this conftest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SUITE = '''
import pytest

def test_missing_prerequisite():
    pytest.skip("no browser installed")

@pytest.mark.allowed_skip(reason="needs a GPU; CI has none")
def test_allowed():
    pytest.skip("no GPU")
'''


def run_suite(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )


def test_in_ci_a_skip_is_a_failure_naming_the_missing_prerequisite(tmp_path: Path) -> None:
    out = run_suite(tmp_path, "true")
    assert out.returncode == 1, out.stdout
    assert "FAILED test_suite.py::test_missing_prerequisite - skipped in CI (no browser installed)" in out.stdout
    assert "1 failed, 1 skipped" in out.stdout


def test_outside_ci_a_skip_stays_a_skip(tmp_path: Path) -> None:
    out = run_suite(tmp_path, None)
    assert out.returncode == 0, out.stdout
    assert "2 skipped" in out.stdout
