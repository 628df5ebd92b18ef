"""Shared test fixtures: every test gets its own data dir, never the user's; all share one model cache."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import default_home, default_model_cache

FIXTURES = Path(__file__).parent / "fixtures"


# --- no test touches the user's data dir --------------------------------------------------------------
# Set here, when pytest loads this file and before any fixture runs: a module- or session-scoped fixture (built
# before the per-test `isolated_home`) and a child process that drops GPUGUIDE_HOME both fall back to the default
# data dir, which XDG_DATA_HOME moves into the session's temp dir. The model cache stays the user's shared one
# (or GPUGUIDE_MODEL_CACHE when set), so the suite assembles the 1.1 GB model at most once, and `make run`
# reuses that same file.

USER_DATA_DIR = default_home()  # as the user's environment names it, before the session moves it
SESSION_ROOT = Path(tempfile.mkdtemp(prefix="gpuguide-tests-"))
MODEL_CACHE = Path(os.environ.get("GPUGUIDE_MODEL_CACHE") or default_model_cache()).expanduser()
os.environ["XDG_DATA_HOME"] = str(SESSION_ROOT / "xdg-data")
os.environ["GPUGUIDE_HOME"] = str(SESSION_ROOT / "home")
os.environ["GPUGUIDE_MODEL_CACHE"] = str(MODEL_CACHE)
KEPT_ENV = ("GPUGUIDE_HOME", "GPUGUIDE_MODEL_CACHE")


def _listing(directory: Path) -> dict[str, tuple[int, int]] | None:
    """(size, mtime_ns) of every file under `directory`, or None when it does not exist."""
    if not directory.exists():
        return None
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*")) if p.is_file()}


USER_DATA_BEFORE = _listing(USER_DATA_DIR)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The session fails when it created or changed the user's data dir; its own temp dir is removed."""
    shutil.rmtree(SESSION_ROOT, ignore_errors=True)
    if _listing(USER_DATA_DIR) != USER_DATA_BEFORE:
        session.config.get_terminal_writer().line(
            f"FAILED: the test session wrote into the user's data dir {USER_DATA_DIR}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- in CI a skip is a failure ------------------------------------------------------------------
# A test that skips because a prerequisite is missing (a browser, a model) tests nothing; on a
# developer machine that is a convenience, in CI (env CI=true) it would hide a broken setup. Only a
# test marked `@pytest.mark.allowed_skip(reason="...")` may skip there.


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "allowed_skip(reason): this test may skip in CI (env CI=true); the reason says why that is fine"
    )


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _as_ci_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    report.outcome = "failed"
    report.longrepr = (
        f"skipped in CI ({_skip_reason(report)}): in CI a missing prerequisite is a failure; install it, "
        "or mark the test @pytest.mark.allowed_skip(reason=...)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not (running_in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    marker = item.get_closest_marker("allowed_skip")
    if marker is not None and (marker.kwargs.get("reason") or marker.args):
        return
    _as_ci_failure(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    """A whole module skipped at import (pytest.importorskip) fails in CI too."""
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()
    if running_in_ci() and report.skipped:
        _as_ci_failure(report)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data dir per test and no GPUGUIDE_* setting from the developer's shell (but the model cache)."""
    home = tmp_path / "home"
    monkeypatch.setenv("GPUGUIDE_HOME", str(home))
    monkeypatch.setenv("GPUGUIDE_MODEL_CACHE", str(MODEL_CACHE))
    for var in [v for v in os.environ if v.startswith("GPUGUIDE_") and v not in KEPT_ENV]:
        monkeypatch.delenv(var)
    return home


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


# --- the browser the UI tests drive ----------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Debian chromium for a module's browser tests (each test opens its own context).

    Module scope, not session: Playwright's sync API runs an event loop on this thread while it is open, and
    the crawler tests that follow call `asyncio.run` on the same thread."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run `make browser` (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
