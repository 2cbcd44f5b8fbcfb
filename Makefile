# Two entry points (see README): `make demo` and `make test`. Everything runs in .venv.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
RAGQA := $(VENV)/bin/ragqa
STAMP := $(VENV)/.installed
PORT ?= 7860
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc)
# llama.cpp for any x86-64 with AVX2: a -march=native build uses AMX/AVX-512 tiles that some
# virtual machines advertise but do not enable (SIGILL), and pip's wheel cache would carry a
# native build to another CPU. LLAVA_BUILD=OFF skips the multimodal library (text only here),
# a part of the compile a fresh machine waits for.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF

.PHONY: install models ingest-sample demo test test-fast clean-storage debian-demo debian-test

# Reinstall only when the dependencies change. llama-cpp-python compiles from source
# (about 8 minutes on 2 cores); pip caches the wheel, so later venvs reuse it.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install -c constraints.txt -e '.[models,test]'
	touch $@

install: $(STAMP)

models: install
	$(RAGQA) models

ingest-sample: models
	$(RAGQA) ingest data/sample/docs

# Debian packages first: a missing one stops the run at once, not after the 8-minute install.
debian-demo debian-test: debian-%:
	scripts/debian-packages $*

demo: debian-demo ingest-sample
	$(RAGQA) serve --port $(PORT)

test: debian-test models  # lint the whole tree first: a mistake ruff finds costs seconds, not a test run
	$(PY) -m ruff check .
	$(PY) -m pytest

test-fast: install
	$(PY) -m pytest -m "not slow"

clean-storage:  # all of the index, what was uploaded into it and the reports; models and feedback stay
	$(PY) -c 'from rag.settings import load_settings; from rag.store import Store; Store(load_settings()).clean()'
