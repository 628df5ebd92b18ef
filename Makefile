# Two commands on a fresh machine: `make run` (the app) and `make test` (the suite).
# Both go through `make install`, which is idempotent and fast when nothing changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python ships as source; these flags make it build portably in a few minutes on 2 cores.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

.PHONY: install install-gpu gpu-build browser a11y run test bench clean clean-models

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

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
