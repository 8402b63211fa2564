# Quick start: `make demo` (the main job on a bundled sample) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test system-deps bench bench-probe fast-spec clean

$(STAMP): setup.cfg pyproject.toml scripts/help_cache.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,fleet]'
	@# `mssdiag ... --help` as typer prints it without a terminal, for the fast path (not in git;
	@# without it help is rendered by typer each time, as on a terminal)
	$(BIN)/python scripts/help_cache.py || echo "help cache not made: mssdiag --help renders through typer"
	@# bytecode ahead of time: the first run (and a read-only checkout) starts without compiling
	$(BIN)/python -m compileall -q toolkit parsers
	touch $(STAMP)

# Made at install (above); made again after a source edit, which leaves them stale (a stale help
# cache is not wrong, only slow: typer renders the help, 0.2 s instead of 0.02 s)
HELP_CACHE := toolkit/commands/_help.py
SOURCES := $(shell find toolkit parsers -name '*.py' ! -name '_help.py')

$(HELP_CACHE): $(SOURCES) | $(STAMP)
	$(BIN)/python scripts/help_cache.py || echo "help cache not made: mssdiag --help renders through typer"
	$(BIN)/python -m compileall -q toolkit parsers

demo: $(STAMP) $(HELP_CACHE)
	$(BIN)/mssdiag parse fixtures/cases/demo/vos-host/netstat-stcp.txt
	$(BIN)/mssdiag diff fixtures/cases/demo/vos-host/netstat-stcp.txt
	@# exit 4 = problems found, which is what the sample case is for
	$(BIN)/mssdiag triage fixtures/cases/demo/ || [ $$? -eq 4 ]

# Debian packages the namespace tests need (iptables, iproute2, ...); only as root.
system-deps:
	@scripts/system-deps.sh

test: $(STAMP) $(HELP_CACHE) system-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider

# Figures beside grep / tracepath / scamper (docs/benchmarks.md). bench-probe needs root.
bench: $(STAMP) $(HELP_CACHE)
	$(BIN)/python benchmarks/parse_bench.py
	$(BIN)/python benchmarks/startup_bench.py

# toolkit/commands/spec.py from the typer app, after changing a command the fast path runs
# (tests/test_fast_cli.py fails until it is current), and the help the fast path prints
fast-spec: $(STAMP)
	$(BIN)/python scripts/fast_spec.py
	$(BIN)/python scripts/help_cache.py
	$(BIN)/python -m compileall -q toolkit/commands

bench-probe: $(STAMP) system-deps
	$(BIN)/python benchmarks/probe_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
