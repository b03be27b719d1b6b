# dpcd: differentially private causal discovery — one command to reproduce, one to test.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PROFILE ?= quick
JOBS   ?= 2
OUT    ?= results
ARGS   ?=
ONLY   ?=

.PHONY: reproduce test bench lab docs clean venv venv-test

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[papers]"
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

venv: $(VENV)/.installed
venv-test: $(VENV)/.installed-test

## Regenerate every table and figure into $(OUT)/ (PROFILE=smoke|quick|full, JOBS=N, ONLY=NAME for one notebook;
## OUT=figures refreshes the committed results; RECOMPUTE=1 reuses no cached or committed grid cell).
reproduce: venv
	$(PY) -m dpcd_papers reproduce --profile $(PROFILE) --jobs $(JOBS) --out $(OUT) $(if $(ONLY),--only $(ONLY)) $(if $(RECOMPUTE),--recompute)
	$(PY) -m dpcd_papers report --out $(OUT)

## Run the test suite, including every notebook in the smoke profile.
test: venv-test
	$(PY) -m pytest -n 2 --dist loadgroup

## Benchmarks against causal-learn (not part of `make test`).
bench: venv-test
	$(PY) -m pytest tests/benchmarks -p no:xdist -s -m benchmark -o "norecursedirs=.*"

## The documentation site, offline, warnings as errors: build/docs/docs/index.html.
docs: venv-test
	$(PY) -m sphinx -W --keep-going -q -c docs -b html . build/docs
	@echo "open build/docs/docs/index.html"

## JupyterLab on the notebooks; ARGS is passed to Jupyter (e.g. make lab ARGS=--allow-root as root).
lab: venv
	$(PY) -m pip install --quiet -e ".[lab]"
	$(PY) -m jupyter lab notebooks $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build src/*.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
