"""host_access, its preflight and teardown.yml run by ansible-playbook against fake tools.

The fakes (docker, ip, kind, sudo, iptables, nft) are small scripts in a temp dir that
print what the real tools print and record every call; `ip` keeps the bridge's addresses
in a state file. Nothing here touches this machine's network: every binary the roles and
modules run is one of the fakes (given by path, and first on PATH).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PLAYBOOK_BIN = Path(sys.executable).parent / "ansible-playbook"
BRIDGE = "br-5e3b1c9f0a7d"

pytestmark = pytest.mark.skipif(not PLAYBOOK_BIN.exists(), reason="ansible-playbook is not beside this Python")

_PRELUDE = '''#!%s
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = sys.argv[1:]
with open(os.path.join(HERE, "calls"), "a") as fh:
    fh.write(os.path.basename(__file__) + " " + " ".join(ARGS) + "\\n")
def state(name, default):
    path = os.path.join(HERE, name)
    return json.load(open(path)) if os.path.exists(path) else default
def fail(text, rc=1):
    sys.stderr.write(text)
    sys.exit(rc)
''' % sys.executable

FAKES = {
    # iproute2 6.1: `ip -V`, `ip -j link show`, `ip -j addr show dev X`, `ip addr add/del`.
    "ip": '''
BR = "%(bridge)s"
addrs = state("addrs.json", [])
if ARGS == ["-V"]:
    print("ip utility, iproute2-6.1.0, libbpf 1.1.2")
elif ARGS == ["-j", "link", "show"]:
    names = ["lo", "eth0"] + state("extra_links.json", []) + [BR]
    print(json.dumps([{"ifindex": i + 1, "ifname": n, "flags": ["UP", "LOWER_UP"], "mtu": 1500, "qdisc": "noqueue",
                       "operstate": "UP", "linkmode": "DEFAULT", "group": "default", "link_type": "ether"}
                      for i, n in enumerate(names)], separators=(",", ":")))
elif ARGS[:3] == ["-j", "addr", "show"]:
    if ARGS[4] != BR:
        fail('Device "%%s" does not exist.\\n' %% ARGS[4])
    info = [{"family": "inet", "local": "172.18.0.1", "prefixlen": 16, "broadcast": "172.18.255.255",
             "scope": "global", "label": BR, "valid_life_time": 4294967295, "preferred_life_time": 4294967295}]
    info += [{"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1]), "scope": "global",
              "label": BR, "valid_life_time": 4294967295, "preferred_life_time": 4294967295} for a in addrs]
    print(json.dumps([{"ifindex": 5, "ifname": BR, "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
                       "qdisc": "noqueue", "operstate": "UP", "group": "default", "link_type": "ether",
                       "address": "02:42:9c:1a:2b:3c", "broadcast": "ff:ff:ff:ff:ff:ff", "addr_info": info}],
                     separators=(",", ":")))
elif ARGS[:2] == ["addr", "add"] and ARGS[3:] == ["dev", BR]:
    if ARGS[2] in addrs:
        fail("RTNETLINK answers: File exists\\n", 2)
    json.dump(addrs + [ARGS[2]], open(os.path.join(HERE, "addrs.json"), "w"))
elif ARGS[:2] == ["addr", "del"] and ARGS[3:] == ["dev", BR]:
    if ARGS[2] not in addrs:
        fail("RTNETLINK answers: Cannot assign requested address\\n", 2)
    json.dump([a for a in addrs if a != ARGS[2]], open(os.path.join(HERE, "addrs.json"), "w"))
else:
    fail("fake ip: unexpected arguments %%r\\n" %% ARGS, 255)
''' % {"bridge": BRIDGE},
    # Docker 29 CLI: `docker info --format '{{json .}}'`, `docker network inspect NAME`.
    "docker": '''
if ARGS[:1] == ["info"]:
    print(json.dumps({"ID": "0f1e2d3c", "ServerVersion": "29.0.2", "OperatingSystem": "Ubuntu 24.04.3 LTS",
                      "OSType": "linux", "SecurityOptions": ["name=apparmor", "name=seccomp,profile=builtin"],
                      "ServerErrors": None}))
elif ARGS[:2] == ["network", "inspect"] and ARGS[2] == "kind":
    print(json.dumps([{"Name": "kind", "Id": "5e3b1c9f0a7d4e2b8c6f1a3d5e7b9c0d2f4a6b8c0e1d3f5a7b9c1d3e5f7a9b0c",
                       "Driver": "bridge", "IPAM": {"Driver": "default", "Config": [
                           {"Subnet": "fc00:f853:ccd:e793::/64"}, {"Subnet": "172.18.0.0/16", "Gateway": "172.18.0.1"}]},
                       "Options": {"com.docker.network.driver.mtu": "1500"}}], indent=4))
elif ARGS[:2] == ["network", "inspect"]:
    print("[]")
    fail("Error response from daemon: network %s not found\\n" % ARGS[2])
else:
    fail("fake docker: unexpected arguments %r\\n" % ARGS, 125)
''',
    # kind v0.32: `kind get clusters`, `kind delete cluster`; `create` must never be reached in these tests.
    "kind": '''
if ARGS[:2] == ["get", "clusters"]:
    print("ingress-lab")
elif ARGS[:2] == ["delete", "cluster"]:
    sys.stderr.write('Deleting cluster "ingress-lab" ...\\nDeleted nodes: ["ingress-lab-control-plane"]\\n')
else:
    fail("fake kind: unexpected arguments %r\\n" % ARGS, 1)
''',
    "helm": '''
print('version.BuildInfo{Version:"v3.19.0", GitCommit:"", GitTreeState:"clean", GoVersion:"go1.24.7"}')
''',
    # sudo run by Ansible without -K (`sudo -H -S -n -u root ...`) when no passwordless rule applies.
    "sudo": '''
fail("sudo: a password is required\\n")
''',
    "iptables": '''
fail("iptables: No chain/target/match by that name.\\n")
''',
    "nft": '''
fail("Error: No such file or directory\\nlist chain ip filter ts-input\\n                    ^^^^^^^^\\n")
''',
}


@pytest.fixture()
def fakes(tmp_path: Path) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in FAKES.items():
        path = bindir / name
        path.write_text(_PRELUDE + body)
        path.chmod(0o755)
    return bindir


def binaries(bindir: Path) -> list[str]:
    return ["-e", "host_access_ip_binary=%s" % (bindir / "ip"), "-e", "host_access_docker_binary=%s" % (bindir / "docker"),
            "-e", "host_access_iptables_binary=%s" % (bindir / "iptables"), "-e", "host_access_nft_binary=%s" % (bindir / "nft")]


def playbook(bindir: Path, *args: str, sudo_asks: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("KIND_EXPERIMENTAL_DOCKER_NETWORK", None)
    env.update(PATH="%s:%s" % (bindir, env.get("PATH", "")), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
               ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               KINDLAB_TWIN_HOME=str(bindir.parent / "twin-home"))  # the twin beside this Python finds no cluster
    if sudo_asks:
        # Ansible skips sudo when the become user is the current user (root here): make it run the fake.
        env["ANSIBLE_BECOME_ALLOW_SAME_USER"] = "true"
        args = args + ("-e", "ansible_become_exe=%s" % (bindir / "sudo"))
    return subprocess.run([str(PLAYBOOK_BIN), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)  # the tests read the exit code themselves


def calls(bindir: Path) -> list[str]:
    path = bindir / "calls"
    return path.read_text().splitlines() if path.exists() else []


def addrs(bindir: Path) -> list[str]:
    path = bindir / "addrs.json"
    return json.loads(path.read_text()) if path.exists() else []


def role_play(tmp_path: Path, state: str) -> str:
    path = tmp_path / ("host_access_%s.yml" % state)
    path.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: kindlab.ingress.host_access\n"
        "      vars:\n        host_access_nodes_on_host_bridge: true\n        host_access_state: %s\n"
        "        host_access_cidrs: [100.64.255.254/16]\n" % state)
    return str(path)


def recap(out: str) -> str:
    return out[out.rfind("PLAY RECAP"):]


def test_host_access_adds_once_and_removes(fakes: Path, tmp_path: Path) -> None:
    present = role_play(tmp_path, "present")
    first = playbook(fakes, present, *binaries(fakes))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "ip addr add 100.64.255.254/16 dev %s" % BRIDGE in calls(fakes)
    assert addrs(fakes) == ["100.64.255.254/16"]

    again = playbook(fakes, present, *binaries(fakes))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "changed=0" in recap(again.stdout)
    assert [c for c in calls(fakes) if c.startswith("ip addr add")] == ["ip addr add 100.64.255.254/16 dev %s" % BRIDGE]

    removed = playbook(fakes, role_play(tmp_path, "absent"), *binaries(fakes))
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert "ip addr del 100.64.255.254/16 dev %s" % BRIDGE in calls(fakes)
    assert addrs(fakes) == []


def test_teardown_removes_the_host_address_before_deleting_the_cluster(fakes: Path, tmp_path: Path) -> None:
    (fakes / "addrs.json").write_text(json.dumps(["100.64.255.254/16"]))
    run = playbook(fakes, "playbooks/teardown.yml", "-e", "lab_backend=kind",
                   "-e", "lab_kubeconfig=%s" % (tmp_path / "kubeconfig"), *binaries(fakes))
    assert run.returncode == 0, run.stdout + run.stderr
    log = calls(fakes)
    deleted = "ip addr del 100.64.255.254/16 dev %s" % BRIDGE
    assert deleted in log and addrs(fakes) == []
    assert log.index(deleted) < next(i for i, c in enumerate(log) if c.startswith("kind delete cluster --name ingress-lab"))

    # Nothing left: a second teardown removes nothing from the bridge.
    again = playbook(fakes, "playbooks/teardown.yml", "-e", "lab_backend=kind",
                     "-e", "lab_kubeconfig=%s" % (tmp_path / "kubeconfig"), *binaries(fakes))
    assert again.returncode == 0, again.stdout + again.stderr
    assert calls(fakes).count(deleted) == 1


def test_teardown_on_the_twin_leaves_the_host_alone(fakes: Path, tmp_path: Path) -> None:
    (fakes / "addrs.json").write_text(json.dumps(["100.64.255.254/16"]))
    run = playbook(fakes, "playbooks/teardown.yml", "-e", "lab_backend=twin",
                   "-e", "lab_kubeconfig=%s" % (tmp_path / "kubeconfig"), *binaries(fakes))
    assert run.returncode == 0, run.stdout + run.stderr
    assert calls(fakes) == [] and addrs(fakes) == ["100.64.255.254/16"]  # no docker, no ip: nodes on no bridge


# auto: kind answers (fake kind, docker and helm), so its host side is checked before anything is created.
@pytest.mark.parametrize("backend", ["kind", "auto"])
def test_lab_stops_before_creating_anything_when_sudo_wants_a_password(fakes: Path, tmp_path: Path, backend: str) -> None:
    run = playbook(fakes, "playbooks/lab.yml", "-e", "lab_backend=%s" % backend, "-e", "lab_verify=false",
                   "-e", "lab_kubeconfig=%s" % (tmp_path / "kubeconfig"), *binaries(fakes), sudo_asks=True)
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "needs root" in out and "sudo: a password is required" in out
    assert "make lab LAB_ARGS=-K" in out and "passwordless sudo" in out
    log = calls(fakes)
    assert "ip -V" not in log  # sudo refused before ip ran
    assert not [c for c in log if c.startswith(("kind create", "ip addr add"))]
    assert "TASK [kindlab.ingress.kind_cluster : Create the cluster]" not in run.stdout


def test_lab_stops_when_tailscale_would_drop_the_pool_replies(fakes: Path, tmp_path: Path) -> None:
    (fakes / "extra_links.json").write_text(json.dumps(["tailscale0"]))
    run = playbook(fakes, "playbooks/lab.yml", "-e", "lab_backend=kind", "-e", "lab_verify=false",
                   "-e", "lab_kubeconfig=%s" % (tmp_path / "kubeconfig"), *binaries(fakes))
    assert run.returncode != 0
    out = run.stdout + run.stderr
    assert "inside 100.64.0.0/10, Tailscale's CGNAT range" in out and "lab_metallb_pools" in out
    assert not [c for c in calls(fakes) if c.startswith(("kind create", "ip addr add", "ip -V"))]
