"""`ansible-playbook playbooks/lab.yml --check` on a machine where the lab does not exist: exit 0,
print what lab.yml would create, create nothing.

ansible-playbook runs with the default inventory (inventories/local) and the lab in a temporary
lab_state_dir. The twin is a fake that records its calls, or absent; the twin that verify.yml
asks (the one beside this Python) looks at an empty KINDLAB_TWIN_HOME. For kind, no kind binary
is on PATH and the fake docker says its engine does not answer.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ansible_collections.kindlab.ingress.tests.unit.roles.test_host_access_playbooks import (
    _PRELUDE,
    FAKES,
    PLAYBOOK_BIN,
    ROOT,
    binaries,
    calls,
)

pytestmark = pytest.mark.skipif(not PLAYBOOK_BIN.exists(), reason="ansible-playbook is not beside this Python")

SYSTEM_PATH = "/usr/bin:/bin"

FAKE_TWIN = '''
if ARGS[:2] == ["get", "clusters"]:
    sys.stderr.write("No kind clusters found.\\n")
else:
    fail("fake kindlab-twin: unexpected arguments %r (check mode must not create anything)\\n" % ARGS, 1)
'''

# Docker 29's CLI with the engine down: `docker info` still prints its client part, with the error.
DOCKER_DOWN = '''
ERROR = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
if ARGS[:1] == ["info"]:
    print(json.dumps({"ID": "", "ServerVersion": "", "ServerErrors": [ERROR]}))
    sys.exit(1)
fail(ERROR + "\\n")
'''

# What lab.yml's plan says about the default lab (inventories/local/group_vars/all/lab.yml).
PLAN_LINES = [
    "cluster ingress-lab (backend {backend}): 1 control-plane node",
    "with address pools: lab-pool 100.64.0.0/16 (65536 addresses)",
    "namespaces: one, two, three",
    "controller one/ingress (ingress_nginx, namespace-scoped): /nginx-ingress-controller",
    "controller three/ingress (ingress_nginx, namespace-scoped)",
    "workload two/test: nginx:1.29.3 x1, Ingress two/test (annotation ingress.class=nginx, paths /)",
    "then wait for a status address on: one/test, two/test, three/test",
    "nodes: ingress-lab-control-plane; pod subnets 10.244.0.0/16, service subnets 10.96.0.0/16",
    "kubeconfig: {state}/kubeconfig (context kind-ingress-lab)",
    "then verify (playbooks/verify.yml): skipped in check mode, there is no cluster to verify",
    "verify: skipped in check mode: cluster ingress-lab does not exist yet, so there is nothing to verify",
]


def fake_bin(tmp_path: Path, bodies: dict[str, str]) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for name, body in bodies.items():
        path = bindir / name
        path.write_text(_PRELUDE + body)
        path.chmod(0o755)
    return bindir


def check_lab(tmp_path: Path, bindir: Path, backend: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    for name in ("KIND_EXPERIMENTAL_DOCKER_NETWORK", "ANSIBLE_INVENTORY", "KUBECONFIG"):
        env.pop(name, None)
    env.update(PATH="%s:%s" % (bindir, SYSTEM_PATH), KINDLAB_TWIN_HOME=str(tmp_path / "twin-home"),
               ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"), ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_DISPLAY_ARGS_TO_STDOUT="0")
    argv = [str(PLAYBOOK_BIN), "playbooks/lab.yml", "--check", "-e", "lab_backend=%s" % backend,
            "-e", "lab_state_dir=%s" % (tmp_path / "state"), *args]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)  # the tests read the exit code themselves


def flat(text: str) -> str:
    """The output with the callback's line wrapping undone."""
    return " ".join(text.split())


def assert_planned_and_nothing_created(run: subprocess.CompletedProcess[str], tmp_path: Path, backend: str) -> str:
    out = flat(run.stdout)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for line in PLAN_LINES:
        assert line.format(backend=backend, state=tmp_path / "state") in out, line
    for task in ("Install MetalLB and its address pools", "Create the namespaces and install the ingress controllers",
                 "Wait for the ingress controllers to start",
                 "Create the test workloads and their Ingresses", "Every lab Ingress gets a status address",
                 "Run every check and judge it"):
        assert "TASK [%s] *" % task in run.stdout and "failed=0" in out
    state = tmp_path / "state"
    assert not (state / "kubeconfig").exists() and not (state / "verify").exists()
    assert not state.exists() or not any(state.iterdir())
    return out


def test_check_mode_with_a_fake_twin_prints_the_plan_and_creates_nothing(tmp_path: Path) -> None:
    bindir = fake_bin(tmp_path, {"kindlab-twin": FAKE_TWIN})
    run = check_lab(tmp_path, bindir, "twin", "-e", "kind_cluster_twin_binary=%s" % (bindir / "kindlab-twin"))
    out = assert_planned_and_nothing_created(run, tmp_path, "twin")
    assert "controllers installed with manifests" in out and "a real run would fail" not in out
    assert calls(bindir) == ["kindlab-twin get clusters"]  # never create
    assert "changed=" in out and "skipping: [localhost]" in run.stdout


def test_check_mode_without_the_twin_says_a_real_run_would_fail(tmp_path: Path) -> None:
    bindir = fake_bin(tmp_path, {})
    missing = tmp_path / "nowhere" / "kindlab-twin"
    run = check_lab(tmp_path, bindir, "twin", "-e", "kind_cluster_twin_binary=%s" % missing)
    out = assert_planned_and_nothing_created(run, tmp_path, "twin")
    assert ("the twin backend cannot be used on this machine, so a real run would fail: twin_binary: %s is not an "
            "executable file" % missing) in out


def test_check_mode_on_kind_without_kind_or_a_docker_engine(tmp_path: Path) -> None:
    if shutil.which("kind", path=SYSTEM_PATH):
        pytest.skip("a kind binary is installed in %s; this test needs a machine without one" % SYSTEM_PATH)
    fakes = {name: body for name, body in FAKES.items() if name in ("ip", "iptables", "nft")}
    bindir = fake_bin(tmp_path, dict(fakes, docker=DOCKER_DOWN))
    run = check_lab(tmp_path, bindir, "kind", *binaries(bindir))
    out = assert_planned_and_nothing_created(run, tmp_path, "kind")
    # The callback doubles the quotes in kind_binary: 'kind' (YAML).
    assert "the kind backend cannot be used on this machine, so a real run would fail: kind_binary: ''kind'' was not found on PATH" in out
    assert "the Docker engine does not answer: Cannot connect to the Docker daemon" in out
    assert "controllers installed with helm" in out
    assert not any(c.startswith(("ip addr", "docker run", "docker network create")) for c in calls(bindir))


GATEWAY_LAB = """---
lab_gateway_api: true
lab_gateways:
  classes: [{name: lab-gateway}]
  gateways:
    - {namespace: one, name: web, class: lab-gateway, listeners: [{name: web, port: 8000, allowed_routes: All}]}
lab_workloads:
  - name: test
    namespace: one
    ingress: {annotations: {kubernetes.io/ingress.class: nginx}}
    httproute: {parent_refs: [one/web], hostnames: [app.example.test]}
lab_expect: {}
"""


def test_check_mode_plans_the_gateway_api_crds_classes_gateways_and_routes(tmp_path: Path) -> None:
    bindir = fake_bin(tmp_path, {"kindlab-twin": FAKE_TWIN})
    lab_vars = tmp_path / "gateway-lab.yml"
    lab_vars.write_text(GATEWAY_LAB)
    run = check_lab(tmp_path, bindir, "twin", "-e", "kind_cluster_twin_binary=%s" % (bindir / "kindlab-twin"), "-e", "@%s" % lab_vars)
    out = flat(run.stdout)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for line in ("Gateway API v1.6.1 CRDs (standard channel), before the controllers",
                 "GatewayClass lab-gateway (controller traefik.io/gateway-controller)",
                 "Gateway one/web (class lab-gateway): web HTTP:8000, routes from All",
                 "HTTPRoute one/test (parents one/web, hosts app.example.test, paths PathPrefix /)"):
        assert line in out, line
    assert "TASK [Apply the Gateway API CRDs] *" in run.stdout and "TASK [Create the GatewayClasses and Gateways] *" in run.stdout
    assert not (tmp_path / "state" / "kubeconfig").exists()
