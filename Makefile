# Two entry points: `make run` (the app on the built-in example) and `make test` (the whole suite).
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test test-torch clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.run-deps: pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install -q -c constraints.txt -e '.[onnx]'
	touch $@

$(VENV)/.test-deps: pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install -q -c constraints.txt -e '.[test,onnx]'
	touch $@

# The torch extra is large (about 750 MB installed), so only this target installs it; without
# it the torch tests skip with a reason and .pt2 files still load (they are read as zip + JSON).
$(VENV)/.torch-deps: pyproject.toml constraints.txt $(VENV)/.test-deps
	$(PY) -m pip install -q -c constraints.txt -e '.[test,onnx,torch]'
	touch $@

run: $(VENV)/.run-deps
	$(VENV)/bin/slabscope

# One worker per core, each taking whole files (a module's fixtures then run once).
test: $(VENV)/.test-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n auto --dist loadfile

test-torch: $(VENV)/.torch-deps
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n auto --dist loadfile tests/test_torch_export.py \
		tests/test_pt2_import.py tests/test_pt2_in_place.py tests/test_training_step.py \
		tests/test_run_pt2.py tests/test_run_in_place.py tests/test_docs_commands.py

clean:
	rm -rf $(VENV) build *.egg-info
