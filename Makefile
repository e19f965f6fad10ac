# The two commands: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)

.PHONY: run url test lint typecheck format check-imports bench lock clean help

help:
	@echo "make run    - start the whole product (kubesim, redis, watcher, worker, beat, web)"
	@echo "make test   - lint, types (mypy --strict), import contracts and the full test suite"
	@echo "make bench  - run the benchmarks, write bench/results/ (KUBECONFIG=FILE: on that cluster)"
	@echo "make url    - the URL and login of the running \`make run\` (also: kill -USR1 its pid)"

# Creates the virtual environment and installs the lock, once per lock change.
$(STAMP): requirements.txt
	@test -x $(BIN)/python || { echo "==> creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@echo "==> installing pinned dependencies from requirements.txt"
	@$(BIN)/pip install --disable-pip-version-check --progress-bar on -r requirements.txt
	@rm -f $(VENV)/.installed-*; touch $@

run: $(STAMP)
	@$(BIN)/python -m opsboard.launcher

# What `make run` printed last: its URL and login, read from its state directory, if its
# launcher still runs (one killed outright leaves its url file behind). Not running: one
# line on stderr and a failing exit, so `url=$(make -s url)` gets nothing and a script can
# tell. make adds its "*** [url] Error 1" line to that: GNU make cannot fail quietly.
url:
	@state="$${OPSBOARD_STATE_DIR:-.opsboard}"; \
	if test -s "$$state/url" && kill -0 "$$(cat "$$state/launcher.pid" 2>/dev/null)" 2>/dev/null; then \
	  echo "opsboard is up:  $$(cat "$$state/url")"; \
	  echo "log in as admin with password: $$(cat "$$state/admin_password")"; \
	else echo "opsboard is not running from $$state: start it with make run" >&2; exit 1; fi

# The whole suite on SQLite, then every test that touches the database or the engine again
# on a PostgreSQL server the suite starts itself (tests/fixtures/postgres.py).
# In parallel (pytest-xdist): each worker starts its own servers and databases
# (tests/support/workers.py); PYTEST_WORKERS=0 runs in one process. Three on two cores:
# the tests mostly wait on the servers and engine processes they start.
PYTEST_WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup
test: $(STAMP) lint typecheck
	@start=$$(date +%s); $(PYTEST); rc=$$?; \
	echo "==> pytest on SQLite: $$(( $$(date +%s) - start )) s (load average $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	exit $$rc
	@echo "==> again on PostgreSQL: the tests that touch the database or the engine"
	@start=$$(date +%s); OPSBOARD_TEST_DATABASE=postgres $(PYTEST) --database-tests-only; rc=$$?; \
	echo "==> pytest on PostgreSQL: $$(( $$(date +%s) - start )) s (load average $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	exit $$rc

lint: $(STAMP) check-imports
	@$(BIN)/ruff check .
	@$(BIN)/ruff format --check .

typecheck: $(STAMP)
	@$(BIN)/mypy opsboard controllers kubesim bench

format: $(STAMP)
	@$(BIN)/ruff check --fix .
	@$(BIN)/ruff format .

check-imports: $(STAMP)
	@PYTHONPATH=. $(BIN)/lint-imports

# `make bench KUBECONFIG=FILE` runs them on that cluster instead (only when given here:
# a KUBECONFIG merely exported in the shell does not move the benchmarks off kubesim).
bench: $(STAMP)
	@$(BIN)/python -m bench $(if $(filter command line,$(origin KUBECONFIG)),--kubeconfig $(KUBECONFIG))

# Re-resolves requirements.in into the exact pins of requirements.txt.
lock:
	@rm -rf /tmp/opsboard-lock && $(PYTHON) -m venv /tmp/opsboard-lock
	@/tmp/opsboard-lock/bin/pip install -q -r requirements.in
	@{ echo '# Generated from requirements.in by `make lock`; do not edit by hand.'; \
	  /tmp/opsboard-lock/bin/pip freeze --exclude-editable; } > requirements.txt

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache staticfiles
