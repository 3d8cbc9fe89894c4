# Two commands set everything up on a fresh machine:
#   make demo   -- builds .venv, runs the main job on the CPU with the packaged defaults
#                  (DEMO_ARGS="key.path=value ..." passes arguments to the demo)
#   make test   -- builds .venv, runs the CPU test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: venv demo test test-gpu lint calibration clean

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev,train]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m ai_economist.foundation.scenarios.covid19.training.demo $(DEMO_ARGS)

test: $(STAMP)
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -q

test-gpu: $(STAMP)
	$(PY) -m pytest -m gpu -q

lint: $(STAMP)
	$(VENV)/bin/ruff check ai_economist tests benchmarks tutorials
	$(VENV)/bin/ruff format --check ai_economist tests benchmarks tutorials

calibration: $(STAMP)
	$(PY) -m ai_economist.datasets.covid19.build --source ../shared/data/covid19

clean:
	rm -rf $(VENV) build *.egg-info
