"""The llama.cpp build `make install` makes: compiled for this CPU, without ggml's AMX kernels, kept per CPU.

Why it matters: the answer's evidence budget follows the measured reading speed, and on the 2-core Xeon the
native AVX-512 build reads about twice as fast as the portable AVX2 one (docs/benchmarks.md); ggml's AMX path
crashed decoding the packaged Q4_K model, so it must stay out.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make_variables(*args: str) -> dict[str, str]:
    """The Makefile's variables as make resolves them (nothing is run)."""
    out = subprocess.run(["make", "-pn", "-C", str(ROOT), *args, "llama-wheel"], capture_output=True, text=True,
                         check=True).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"^(LLAMA_[A-Z_]+|CMAKE_ARGS) :?= (.*)$", line)
        if m:
            found.setdefault(m.group(1), m.group(2))
    return found


def _pinned_llama_version() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("llama-cpp-python"))
    return pin.split("==", 1)[1]


def test_the_wheel_is_built_for_the_version_pyproject_pins(tmp_path: Path) -> None:
    plan = subprocess.run(["make", "-n", "-C", str(ROOT), f"LLAMA_WHEELS={tmp_path}", "llama-wheel"],
                          capture_output=True, text=True, check=True).stdout
    assert f'"llama-cpp-python=={_pinned_llama_version()}"' in plan


def test_the_default_build_is_native_without_amx_on_x86() -> None:
    variables = _make_variables()
    assert "-DGGML_NATIVE=ON" in variables["LLAMA_CMAKE_ARGS"]
    if platform.machine() in ("x86_64", "AMD64"):
        assert "-mno-amx-int8" in variables["LLAMA_CMAKE_ARGS"]


def test_a_portable_build_on_request_is_kept_apart_from_the_native_one() -> None:
    native, portable = _make_variables(), _make_variables("LLAMA_NATIVE=0")
    assert "-DGGML_NATIVE=OFF" in portable["LLAMA_CMAKE_ARGS"]
    assert "-mno-amx" not in portable["LLAMA_CMAKE_ARGS"]
    assert portable["LLAMA_WHEELS"] != native["LLAMA_WHEELS"]


# a CPU flag (/proc/cpuinfo) and how llama.cpp's system info names the kernels built for it, widest first
_VECTOR_FLAGS = (("avx512f", "AVX512"), ("avx2", "AVX2"))


@pytest.mark.allowed_skip(reason="a GPU build, or a CPU with neither AVX2 nor AVX-512, has no native x86-64 build to check")
def test_the_installed_llama_cpp_uses_this_cpus_widest_vectors_and_not_amx() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("a GPU build (make gpu-build) is portable by design")
    cpuinfo = Path("/proc/cpuinfo")
    text = cpuinfo.read_text(encoding="utf-8") if cpuinfo.exists() else ""
    flags = set(m.group(1).split()) if (m := re.search(r"^flags\s*:(.*)$", text, re.M)) else set()
    widest = next((name for flag, name in _VECTOR_FLAGS if flag in flags), None)
    if widest is None:
        pytest.skip("this CPU has neither AVX2 nor AVX-512: the native x86-64 build's check does not apply")
    from assistant.llm import llama_system_info

    info = llama_system_info()
    assert f"{widest} = 1" in info, f"llama.cpp was built without this CPU's {widest} ({info}); run 'make clean install'"
    assert "AMX_INT8 = 1" not in info, f"llama.cpp was built with ggml's AMX kernels ({info})"
