"""Shared test fixtures: every test gets its own data dir, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    for var in [v for v in __import__("os").environ if v.startswith("GPUGUIDE_") and v != "GPUGUIDE_HOME"]:
        monkeypatch.delenv(var)
    return home


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
