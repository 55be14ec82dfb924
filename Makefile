# oam-operator — developer entry points. `make demo` and `make test` are the two set-up commands.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: help venv venv-demo devcluster image browser test test-unit test-cluster lint demo demo-multi demo-down cluster-up cluster-down bench soak clean

help:
	@echo "make demo          the operator on the full local control plane, reconciling examples/shop.yaml to Ready"
	@echo "make demo-multi    a hub and a spoke control plane: examples/shop.yaml delivered to the spoke (namespace shop-spoke; beside make demo, in either order)"
	@echo "make test          create .venv, build or reuse the control plane, build the image, run the whole suite"
	@echo "make image         build the operator image with podman (localhost/oam-operator:<version>)"
	@echo "make test-unit     the pure tests only: tests/unit (no control plane, podman or network)"
	@echo "make lint          ruff + mypy + the import-direction check (tools/lint_imports.py)"
	@echo "make bench         the benchmarks on the local control plane; writes bench/results/REPORT.md"
	@echo "make soak          a chaos soak (SEED=1 DURATION=900 APPS=60); writes bench/results/SOAK.md"
	@echo "make docs-screenshots   the UI's browser tests, writing the screenshots under docs/ui/"
	@echo "make cluster-up / cluster-down   a full control plane named 'dev'"

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

venv: $(VENV)/.installed

# `make demo` installs only the operator and the control plane's needs (the `demo` extra), with
# pip's progress visible; a full dev venv satisfies it too.
$(VENV)/.installed-demo: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "installing oam-operator and the demo's dependencies into $(VENV) (not the dev extras)"
	$(PY) -m pip install --progress-bar on -e '.[demo]'
	touch $@

venv-demo:
	@test -f $(VENV)/.installed -a $(VENV)/.installed -nt pyproject.toml || $(MAKE) --no-print-directory $(VENV)/.installed-demo

devcluster:
	tools/devcluster/build.sh

# The operator image, built with podman from a local Debian base (tools/image/build.sh, docs/image.md).
image: devcluster
	tools/image/build.sh

# Debian's Chromium for the browser tests (tests/e2e/test_ui_e2e.py, docs/ui.md#tests); Playwright
# drives it from the `dev` extra and never downloads a browser of its own.
browser:
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y --no-install-recommends chromium; }

# The whole suite in TEST_WORKERS pytest-xdist workers, each with its own control planes; a test
# module stays on one worker (--dist loadfile), in collection order so the long e2e modules start
# first (xdist would start the modules with the most tests first); tools/worker_locks.py keeps the tests marked
# run_alone or exclusive(name) from overlapping (docs/devcluster.md#parallel-workers).
TEST_WORKERS ?= 3
test: venv devcluster image browser
	$(PY) -m tools.devcluster down --stale
	OAM_REQUIRE_CLUSTER=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The pure tier: tests/unit needs no control plane, podman or network (tests/unit/conftest.py
# refuses a test there that asks for a cluster); tests/integration and tests/e2e run in `make test`.
# The pure tier in two worker processes (pytest-xdist): its tests share no state, and on the
# 2-core machines this project runs on one process leaves a core idle (62 s -> 45 s measured).
UNIT_WORKERS ?= 2
test-unit: venv
	$(PY) -m pytest tests/unit -n $(UNIT_WORKERS) $(PYTEST_ARGS)

test-cluster: venv devcluster image browser
	OAM_REQUIRE_CLUSTER=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "cluster or full_cluster" $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check operator tests tools bench
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --strict tools/devcluster tools/chaos tools/operatorprocess.py tools/lint_imports.py tools/worker_locks.py
	$(PY) tools/lint_imports.py operator/oam_operator

cluster-up: venv devcluster
	$(PY) -m tools.devcluster up --profile full --name dev

cluster-down: venv
	$(PY) -m tools.devcluster down --name dev

demo: venv-demo devcluster
	$(PY) -m tools.demo up

demo-multi: venv-demo devcluster
	$(PY) -m tools.demo up --multi

demo-down: venv-demo
	$(PY) -m tools.demo down

bench: venv devcluster
	$(PY) bench/run_all.py $(BENCH_ARGS); status=$$?; $(PY) bench/report.py && exit $$status

# The chaos soak (docs/chaos.md#the-soak): not part of `make test`.
SEED ?= 1
DURATION ?= 900
APPS ?= 60
soak: venv devcluster
	$(PY) -m tools.chaos --seed $(SEED) --duration $(DURATION) --apps $(APPS)

# The screenshots of docs/ui.md (docs/ui/*.png), taken by the UI's browser tests: kept in docs/ui
# only here, never by `make test` (docs/ui.md#screenshots).
.PHONY: docs-screenshots
docs-screenshots: venv devcluster browser
	OAM_REQUIRE_CLUSTER=1 OAM_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(PY) -m pytest tests/e2e/test_ui_e2e.py $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
