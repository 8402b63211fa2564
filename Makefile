# Quick start: `make demo` (the main job on a bundled sample) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test system-deps bench bench-probe clean

$(STAMP): setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,fleet]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mssdiag parse fixtures/cases/demo/vos-host/netstat-stcp.txt
	$(BIN)/mssdiag diff fixtures/cases/demo/vos-host/netstat-stcp.txt
	@# exit 4 = problems found, which is what the sample case is for
	$(BIN)/mssdiag triage fixtures/cases/demo/ || [ $$? -eq 4 ]

# Debian packages the namespace tests need (iptables, iproute2, ...); only as root.
system-deps:
	@scripts/system-deps.sh

test: $(STAMP) system-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider

# Figures beside grep / jc / a minimal typer app (docs/benchmarks.md). bench-probe needs root.
bench: $(STAMP)
	$(BIN)/python benchmarks/parse_bench.py
	$(BIN)/python benchmarks/startup_bench.py

bench-probe: $(STAMP) system-deps
	$(BIN)/python benchmarks/probe_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
