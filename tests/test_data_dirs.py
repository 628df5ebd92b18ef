"""Where files go: a data dir holds only its own data, the model lives once in the shared model cache, and the
test suite never touches the user's data dir (tests/conftest.py moves the default into the session's temp dir
and fails the session if the real one changed)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MODEL_CACHE, SESSION_ROOT, USER_DATA_BEFORE, USER_DATA_DIR, _listing

from assistant.llm import PACKAGED_GGUF_SHA256, assemble_packaged_gguf, gguf_path
from core.settings import Settings, default_home

ROOT = Path(__file__).resolve().parent.parent


def test_the_default_data_dir_in_the_suite_is_inside_the_session_temp_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUGUIDE_HOME")
    assert default_home().is_relative_to(SESSION_ROOT)
    assert Settings().home.is_relative_to(SESSION_ROOT)
    assert Settings().home != USER_DATA_DIR


def test_a_child_process_without_a_data_dir_setting_does_not_use_the_users() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GPUGUIDE_HOME"}
    code = "from core.settings import Settings; print(Settings().home)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert Path(done.stdout.strip()).is_relative_to(SESSION_ROOT)


def test_the_users_data_dir_is_unchanged_so_far() -> None:
    """The same check runs again when the session ends (conftest.pytest_sessionfinish), after every test."""
    assert _listing(USER_DATA_DIR) == USER_DATA_BEFORE


def test_the_model_cache_is_the_same_for_every_data_dir_and_inside_none(tmp_path: Path) -> None:
    one, two = Settings(home=tmp_path / "one"), Settings(home=tmp_path / "two")
    assert one.model_cache == two.model_cache == MODEL_CACHE
    assert not one.model_cache.is_relative_to(one.home)


def test_the_model_cache_is_a_setting_with_its_own_environment_variable(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUGUIDE_MODEL_CACHE", str(tmp_path / "models"))
    assert Settings().model_cache == tmp_path / "models"


def _parts(tmp_path: Path) -> tuple[list[Path], str]:
    parts = []
    for i, data in enumerate([b"GGUF-one", b"-two"]):
        parts.append(tmp_path / f"part{i}.bin")
        parts[-1].write_bytes(data)
    return parts, hashlib.sha256(b"GGUF-one-two").hexdigest()


def test_an_assembled_model_is_named_by_its_hash(tmp_path: Path) -> None:
    parts, sha = _parts(tmp_path)
    assert assemble_packaged_gguf(tmp_path / "cache", parts, sha) == tmp_path / "cache" / f"{sha}.gguf"


def test_a_model_in_the_cache_is_reused_not_assembled_again(tmp_path: Path) -> None:
    parts, sha = _parts(tmp_path)
    first = assemble_packaged_gguf(tmp_path / "cache", parts, sha)
    stamp = first.stat().st_mtime_ns
    for part in parts:
        part.unlink()  # a second assembly would fail: the parts are gone
    assert assemble_packaged_gguf(tmp_path / "cache", None, sha) == first
    assert first.stat().st_mtime_ns == stamp


def test_two_data_dirs_use_one_packaged_model_file(tmp_path: Path) -> None:
    one, two = gguf_path(Settings(home=tmp_path / "one")), gguf_path(Settings(home=tmp_path / "two"))
    assert one == two == MODEL_CACHE / f"{PACKAGED_GGUF_SHA256}.gguf"
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()
