# coordkit: `make lab` opens the notebooks, `make test` runs ruff (lint and format), every test and notebook.
# Both run tools/kit.py, the one implementation (Windows users without make run it directly: py tools\kit.py lab).
# It creates .venv with Python >= 3.12 (override with PYTHON=...) and installs what is needed: the kit and
# JupyterLab for `lab`, the test tools as well for `test`.

LAB_ARGS  ?=
TEST_ARGS ?= -q
# Any Python 3.7+ can run kit.py; it finds a Python >= 3.12 for .venv by itself.
BOOT      := $(firstword $(PYTHON) $(shell for p in python3 python3.13 python3.12 python; do command -v $$p && break; done))
KIT       := $(BOOT) tools/kit.py

.PHONY: lab test test-loaded venv venv-lab binder-url clean

lab:
	@$(KIT) lab $(LAB_ARGS)

test:
	@$(KIT) test $(TEST_ARGS)

# The same suite with 2 CPU-bound processes per core running beside it (killed when it ends, however it ends): how
# the suite fares on a machine shared with other work.
test-loaded:
	@$(KIT) test-loaded $(TEST_ARGS)

# Install only: the lab environment (the notebooks' packages), or everything the tests need as well.
venv-lab:
	@$(KIT) install lab

venv:
	@$(KIT) install test

# The mybinder.org link (and a README badge) for this repository's remote `origin`, once it is on GitHub.
binder-url:
	@$(KIT) binder-url

clean:
	@$(KIT) clean
