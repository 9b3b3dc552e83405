# logsig developer targets.
#   make venv          .venv with the package and its dev tools (re-installs when pyproject.toml changes)
#   make lint          ruff and mypy
#   make test          lint, then every test under tests/ (integration tests start their own broker)
#   make broker-start  local Kafka broker in $(KAFKA_STATE); prints its bootstrap address
#   make broker-stop   stop it
#   make demo          run deploy/local/demo.py
#   make topics        create the default topics on the local broker
#   make run           logsig run against the local broker (deploy/logsig.example.yaml, local address)
#   make clean         stop the broker, remove caches and run state (keeps .venv and the Kafka jars)
#   make distclean     clean, and remove .venv and .cache

PYTHON ?= python3.11
VENV ?= .venv
VENV_PYTHON := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.logsig-installed
KAFKA_SCRIPT := deploy/local/kafka.py
KAFKA_STATE ?= .cache/kafka-run

.PHONY: venv lint test broker-start broker-stop broker-status demo topics run clean distclean

venv: $(VENV_STAMP)

$(VENV_PYTHON):
	$(PYTHON) -m venv $(VENV)

$(VENV_STAMP): pyproject.toml | $(VENV_PYTHON)
	$(VENV_PYTHON) -m pip install -e '.[dev]'
	touch $(VENV_STAMP)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy logsig
	$(VENV)/bin/mypy --strict $(KAFKA_SCRIPT)

test: venv lint
	$(VENV)/bin/pytest -q tests

broker-start:
	$(PYTHON) $(KAFKA_SCRIPT) start --state-dir $(KAFKA_STATE)

broker-stop:
	$(PYTHON) $(KAFKA_SCRIPT) stop --state-dir $(KAFKA_STATE)

broker-status:
	$(PYTHON) $(KAFKA_SCRIPT) status --state-dir $(KAFKA_STATE)

demo: venv
	$(VENV_PYTHON) deploy/local/demo.py

topics: venv
	$(VENV_PYTHON) deploy/local/local_run.py topics

run: venv topics
	exec $(VENV)/bin/logsig run --config "$$($(VENV_PYTHON) deploy/local/local_run.py config)"

clean: broker-stop
	rm -rf $(KAFKA_STATE) .pytest_cache .mypy_cache .ruff_cache .hypothesis build dist
	rm -rf logsig.egg-info
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .cache
