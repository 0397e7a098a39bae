# coordkit: `make lab` opens the notebooks, `make test` runs ruff (lint and format), every test and notebook.
# Both create .venv (Python >= 3.12, found by tools/find-python; override with PYTHON=...) when needed.

VENV      := .venv
VPY       := $(VENV)/bin/python
MARKER    := $(VENV)/.installed
START     := notebooks/00_start_here.ipynb
LAB_ARGS  ?=
# Jupyter refuses to start as root without this flag (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
TEST_ARGS ?= -q

.PHONY: lab test clean venv

lab: $(MARKER)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=$(CURDIR) $(START) $(ROOT_FLAG) $(LAB_ARGS)

test: $(MARKER)
	$(VPY) -m ruff check .
	$(VPY) -m ruff format --check .
	$(VPY) -m pytest tests notebooks --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg $(TEST_ARGS)

venv: $(MARKER)

# Reuse .venv if its Python is new enough, otherwise (re)create it; then install the kit with its test tools.
$(MARKER): pyproject.toml tools/lab-overrides.json
	@if $(VPY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then \
		echo "Using $(VENV) ($$($(VPY) --version))"; \
	else \
		python=$$(tools/find-python) || exit 1; \
		echo "Creating $(VENV) with $$python ($$($$python --version))"; \
		"$$python" -m venv --clear $(VENV) || exit 1; \
	fi
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e ".[test]"
	@# JupyterLab defaults for this environment: save widget state, so a saved notebook shows its panels
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp tools/lab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	@touch $@

clean:
	rm -rf $(VENV)
