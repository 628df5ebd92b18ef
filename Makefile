# Two commands on a fresh machine: `make run` (the app) and `make test` (the suite).
# Both go through `make install`, which is idempotent and fast when nothing changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# llama-cpp-python ships as source; these flags make it build portably in a few minutes on 2 cores.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

.PHONY: install browser a11y run test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

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

test: install browser a11y
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
