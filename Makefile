# Quick start: `make run` and `make test` on a fresh machine. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast test-long lint typecheck pytest bench bench-cpu bench-gpu clean

$(STAMP): pyproject.toml
	@command -v nvim >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && apt-get install -y -qq neovim) >/dev/null 2>&1) || \
	  echo "note: neovim could not be installed; the Neovim LSP test will skip"
	@(command -v csmith >/dev/null 2>&1 && ls /usr/include/csmith*/csmith.h >/dev/null 2>&1) || \
	  (command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && apt-get install -y -qq csmith libcsmith-dev) >/dev/null 2>&1) || \
	  echo "note: csmith could not be installed; the csmith tests (tests/test_csmith.py) will skip"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/hexplore examples/demo.c

test: $(STAMP) lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Whole modules to each worker, the longest first (tests/conftest.py's FIRST).
DIST := --dist loadfile --no-loadscope-reorder

pytest: $(STAMP)
	$(BIN)/pytest -q -n auto $(DIST)

# The fast tier: ruff, mypy and every test not marked `slow` (tests/conftest.py's SLOW_PATHS: the
# differential, runtime, LLVM-variant, LSP and TUI end-to-end tests), per-pass tests and goldens
# included (the heaviest back-end goldens run in `make test` only): 116 s on a clean clone with two
# idle cores (2026-11-26, cb9b988: 651 tests, 210 s of CPU; mypy's cache warm). `make test` took
# 927 s there (pytest 13:46), and 908 s at 32ecf42 (pytest 13:38, 1515 tests, 1540 s of CPU), at
# CI's 15-minute goal.
# mypy stays in: ~2 s with its cache warm (~20 s of CPU cold).
test-fast: $(STAMP) lint typecheck
	$(BIN)/pytest -q -n 2 $(DIST) -m "not slow"

# The long tier too: every csmith seed (1-60) and every kernel's remarks checked against the registry.
test-long: $(STAMP) lint typecheck
	$(BIN)/pytest -q -n auto $(DIST) --long

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_analyze.py

# The CPU table (gcc -O3 vs hexplore on 1 thread / all cores) with clang-16 + Polly as the peer
# column; the Debian packages are installed when apt can (otherwise the column says n/a).
bench-cpu: $(STAMP)
	@command -v clang-16 >/dev/null 2>&1 || (command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && apt-get install -y -qq clang-16 libpolly-16-dev) >/dev/null 2>&1) || \
	  echo "note: clang-16 and libpolly-16-dev could not be installed; the Polly column will say n/a"
	$(BIN)/python benchmarks/bench_cpu.py $(BENCH_ARGS)

# The GPU table: hexplore's CUDA C on the 30 PolyBench kernels linked into PolyBench's main, against
# gcc -O3 on one core, hexplore at BASELINE=REV (optional) and PPCG's recorded H100 times. Prepares
# gpu_bundle/ (ignored by git); where nvidia-smi sees a GPU it then builds, checks and times it into
# out/bench_gpu/, else it prints what the bundle holds: carry gpu_bundle to a GPU machine and run
# `bash benchmarks/gpu/session.sh` there (benchmarks/bench_gpu.py says more).
bench-gpu: $(STAMP)
	$(BIN)/python benchmarks/bench_gpu.py $(if $(BASELINE),--baseline-rev $(BASELINE)) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache

# ---- VS Code extension (vscode-extension/, TypeScript) -------------------------------------------
# `make test` runs its tests after pytest when node (>= 20) and npm are installed, and says that
# it skips them otherwise. `make vsix` packages it as vscode-extension/hexplore.vsix.
VSCODE_DIR := vscode-extension
VSCODE_NPM := NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false npm

.PHONY: vscode-test vscode-test-if-available vsix vscode-clean

test: vscode-test-if-available

vscode-test-if-available:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && \
	  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then \
	  $(MAKE) --no-print-directory vscode-test; \
	else \
	  echo "skipping VS Code extension tests: node/npm not found (node >= 20 and npm are needed)"; \
	fi

vscode-test: $(STAMP)
	cd $(VSCODE_DIR) && $(VSCODE_NPM) ci --no-progress && $(VSCODE_NPM) run --silent compile && \
	  HEXPLORE_LSP="$(abspath $(BIN)/hexplore-lsp)" $(VSCODE_NPM) test --silent

vsix:
	cd $(VSCODE_DIR) && $(VSCODE_NPM) ci --no-progress && $(VSCODE_NPM) run package
	@echo "built $(VSCODE_DIR)/hexplore.vsix: code --install-extension $(VSCODE_DIR)/hexplore.vsix"

vscode-clean:
	rm -rf $(VSCODE_DIR)/node_modules $(VSCODE_DIR)/out $(VSCODE_DIR)/*.vsix
