# Two commands on a fresh machine: `make run` (the app) and `make test` (the suite).
# Both go through `make install`, which is idempotent and fast when nothing changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python ships as source and is compiled once per CPU, for that CPU (GGML_NATIVE): on the 2-core
# Xeon we measure on, its AVX-512/VNNI kernels read prompts about twice as fast as the portable AVX2 build, and
# the answer's evidence budget follows the reading speed (docs/benchmarks.md, "llama.cpp built for the CPU").
# ggml's AMX kernels are left out: in llama-cpp-python 0.3.36 they crash decoding the packaged Q4_K model. The
# wheel is kept per CPU under LLAMA_WHEELS, since pip's own wheel cache keys a build by its source alone and
# would hand one CPU's native build to another. LLAMA_NATIVE=0 builds the portable one (AVX2).
LLAMA_NATIVE ?= 1
LLAMA_VERSION := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
LLAMA_NO_AMX := $(if $(filter x86_64 amd64,$(shell uname -m)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
LLAMA_CMAKE_ARGS := -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
	$(if $(filter 1,$(LLAMA_NATIVE)),-DGGML_NATIVE=ON "-DCMAKE_C_FLAGS=$(LLAMA_NO_AMX)" "-DCMAKE_CXX_FLAGS=$(LLAMA_NO_AMX)",-DGGML_NATIVE=OFF)
LLAMA_KEY := $(shell uname -m)-$(shell grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | cksum | cut -d' ' -f1)-native$(LLAMA_NATIVE)
LLAMA_WHEELS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpuguide/wheels/$(LLAMA_KEY)
export CMAKE_ARGS ?= $(LLAMA_CMAKE_ARGS)

.PHONY: install llama-wheel install-gpu gpu-build browser a11y run test bench clean clean-models

install: $(STAMP)

# The llama.cpp wheel first, so the project's install takes it (an existing venv keeps the build it has:
# `make clean install` replaces it).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(MAKE) --no-print-directory llama-wheel
	$(BIN)/python -m pip install --quiet --find-links $(LLAMA_WHEELS) -e '.[test]'
	touch $(STAMP)

# Built into a temp folder and moved into place, so an interrupted build leaves no half wheel behind.
llama-wheel:
	@ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
		echo "compiling llama-cpp-python $(LLAMA_VERSION) for this CPU ($(LLAMA_KEY)), several minutes on 2 cores"; \
		rm -rf $(LLAMA_WHEELS).tmp && \
		$(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
			-w $(LLAMA_WHEELS).tmp "llama-cpp-python==$(LLAMA_VERSION)" && \
		mkdir -p $(LLAMA_WHEELS) && mv $(LLAMA_WHEELS).tmp/*.whl $(LLAMA_WHEELS)/ && rm -rf $(LLAMA_WHEELS).tmp; }

# The GPU path (NVIDIA): llama-cpp-python rebuilt with CUDA (needs nvcc; about 4 min on 16 cores for one
# architecture), then torch's CUDA wheel if the installed one is CPU-only. llm.gpu_layers then defaults to all
# layers and embed.device=auto picks CUDA. Another GPU generation: make install-gpu CUDA_ARCH=89.
# `gpu-build` is the CUDA step alone, for any Python (GPU_PY) and source (LLAMA_SRC: a version pin, an sdist or
# an unpacked source folder), so a machine without network can build from a copied source:
#   make gpu-build GPU_PY=python3 LLAMA_SRC=/path/llama_cpp_python-0.3.36 GPU_PIP_FLAGS="--no-index --no-build-isolation"
# GGML_CUDA_FA=ON also builds llama.cpp's flash-attention kernels (several times the build time).
CUDA_ARCH ?= native
GGML_CUDA_FA ?= OFF
GPU_PY ?= $(BIN)/python
GPU_PIP_FLAGS ?=
GPU_CMAKE_EXTRA ?=
LLAMA_SRC ?= llama-cpp-python==$$($(GPU_PY) -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')
install-gpu: install
	$(MAKE) gpu-build
gpu-build:
	@command -v nvcc >/dev/null || { echo "install-gpu: nvcc not found; install the CUDA toolkit and put its bin/ on PATH"; exit 1; }
	CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$(CUDA_ARCH) -DGGML_CUDA_FA=$(GGML_CUDA_FA) -DGGML_CUDA_NCCL=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF $(GPU_CMAKE_EXTRA)" \
		$(GPU_PY) -m pip install --force-reinstall --no-deps --no-cache-dir --no-binary llama-cpp-python $(GPU_PIP_FLAGS) "$(LLAMA_SRC)"
	$(GPU_PY) -c "import torch, sys; sys.exit(0 if torch.version.cuda else 1)" || \
		$(GPU_PY) -m pip install --force-reinstall --no-deps $(GPU_PIP_FLAGS) "torch==$$($(GPU_PY) -c 'import torch; print(torch.__version__.split("+")[0])')"
	$(GPU_PY) -c "import llama_cpp, sys; ok = llama_cpp.llama_supports_gpu_offload(); print('llama.cpp GPU offload:', ok); sys.exit(0 if ok else 1)"

run: install
	$(BIN)/gpuguide serve

# The browser tests drive Debian's chromium (Playwright's own browser download is not needed).
browser:
	command -v chromium >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)

# axe-core for the accessibility test, pinned by tests/a11y/package-lock.json; npm from Debian when missing.
A11Y := tests/a11y
a11y: $(A11Y)/node_modules/.installed

$(A11Y)/node_modules/.installed: $(A11Y)/package.json $(A11Y)/package-lock.json
	command -v npm >/dev/null || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y npm)
	npm ci --prefix $(A11Y) --no-audit --no-fund
	touch $@

# The suite runs in temp data dirs (tests/conftest.py; the user's data dir is never touched) and shares the one
# model cache with `make run` and `make bench`: the packaged model is assembled at most once per user.
test: install browser a11y
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/run_all.py

# `clean` keeps the shared model cache (model_cache, default ~/.cache/gpuguide/models); `clean-models` empties it.
clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

clean-models:
	test -x $(BIN)/python && rm -rf "$$($(BIN)/python -c 'from core.settings import load_settings; print(load_settings().model_cache)')"
