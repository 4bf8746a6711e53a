# clamber: `make demo` runs the main job on the defaults, `make test` runs the suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

# The locked versions first (requirements.lock), then clamber itself without resolving again.
$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg MUJOCO_GL=egl $(BIN)/clamber demo --out out/demo

# The fast suite (checks marked slow are left out: a fast test covers the same code); the
# 15 slowest tests are listed at the end.
test: $(STAMP)
	MPLBACKEND=Agg MUJOCO_GL=egl $(BIN)/python -m pytest -q --durations=15

lint: $(STAMP)
	$(BIN)/ruff check clamber tests benchmarks examples

clean:
	rm -rf $(VENV) out .pytest_cache
