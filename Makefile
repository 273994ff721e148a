# Two commands set up everything on a fresh machine:  make run  (the app)  and  make test  (the tests).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
MODEL  ?= resources/models/opus-mt-en-zh
MODEL_ZH_EN ?= resources/models/opus-mt-zh-en

.PHONY: run test test-slow bench model model-zh-en fixture lint clean package smoke system-deps

# System packages first, every time (a fraction of a second; a package removed since is noticed): the Qt runtime
# libraries for the app, plus Xvfb, xdotool, strace and the rest for the frozen-app tests. packaging/system_deps.py
# installs what is missing with apt-get as root or with passwordless sudo, or stops with the exact command to run.
SYSTEM_DEPS ?= venv
run test-slow: SYSTEM_DEPS = run
test smoke package: SYSTEM_DEPS = test
system-deps:
	@$(PYTHON) packaging/system_deps.py $(SYSTEM_DEPS)

# The venv (see README for its size). torch is the model build's oracle: install_torch.py fetches the CPU-only wheel
# (PyTorch's CPU index) where pip would otherwise resolve the multi-GB CUDA build.
$(BIN)/.installed: pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python packaging/install_torch.py torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The app. Builds the real models first when they are missing, en→zh and zh→en (needs internet once); offline, the
# app still opens and explains where a model goes.
run: $(BIN)/.installed
	@[ -f $(MODEL)/manifest.json ] || $(BIN)/qiao model build --from Helsinki-NLP/opus-mt-en-zh --out $(MODEL) \
		|| echo "Could not build the en→zh model (offline?). Starting without it; see README 'Getting the model'."
	@[ -f $(MODEL_ZH_EN)/manifest.json ] || $(BIN)/qiao model build --from Helsinki-NLP/opus-mt-zh-en --out $(MODEL_ZH_EN) \
		|| echo "Could not build the zh→en model (offline?). Starting without it; see README 'Getting the model'."
	$(BIN)/qiao

# The test suite CI runs: ruff (lint, format), mypy, the fast tier (everything except the full-size model, benchmarks,
# producers and packaging), the producers tier (documents made by pandoc and LibreOffice, translated and opened again
# by them; ~20 s), then the frozen app (freeze with the fixture model, offline self-test without Python, GUI under
# Xvfb, budgets; Linux).
test: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest
	$(BIN)/python -m pytest -m producers
	$(BIN)/python -m pytest -m packaging

test-slow: $(BIN)/.installed
	$(BIN)/python -m pytest -m slow

model: $(BIN)/.installed
	$(BIN)/qiao model build --from Helsinki-NLP/opus-mt-en-zh --out $(MODEL)

model-zh-en: $(BIN)/.installed
	$(BIN)/qiao model build --from Helsinki-NLP/opus-mt-zh-en --out $(MODEL_ZH_EN)

fixture: $(BIN)/.installed
	$(BIN)/python tests/fixtures/tiny_marian/make.py
	$(BIN)/python tests/fixtures/tiny_marian/make.py --direction zh-en

bench: $(BIN)/.installed
	$(BIN)/python bench/run.py

# The frozen app in dist/qiao with the real model (build it first: make model), and the zh→en one when it has been
# built (make model-zh-en); MODEL=fixture for the test model, PACKAGE_MODELS="A B" to choose every bundle.
PACKAGE_MODELS ?= $(MODEL) $(if $(wildcard $(MODEL_ZH_EN)/manifest.json),$(MODEL_ZH_EN))
package: $(BIN)/.installed
	PYTHON=$(BIN)/python packaging/build.sh $(foreach m,$(PACKAGE_MODELS),--model $(m))

# The offline smoke test of the frozen app (freezes it with the fixture model into build/smoke/dist first).
smoke: $(BIN)/.installed
	$(BIN)/python packaging/smoke_test.py --build

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
