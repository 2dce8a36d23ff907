# Two entry points: `make run` (the app on the built-in example) and `make test` (the whole suite).
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.run-deps: pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install -q -c constraints.txt -e '.[onnx]'
	touch $@

$(VENV)/.test-deps: pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install -q -c constraints.txt -e '.[test,onnx]'
	touch $@

run: $(VENV)/.run-deps
	$(VENV)/bin/slabscope

test: $(VENV)/.test-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
