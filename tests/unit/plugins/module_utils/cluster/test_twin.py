from __future__ import annotations

import stat

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import twin as tw
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import BinaryNotFound, ClusterError, get_provider

# `kindlab-twin get connect-to --name lab` prints curl --connect-to entries, one a line.
CONNECT_TO = "100.64.0.1:80:127.0.0.1:41234\n100.64.0.1:443:127.0.0.1:41235\n172.18.0.2:30080:127.0.0.1:41236\n"


def test_argv() -> None:
    assert tw.create_argv("/v/bin/kindlab-twin", "lab", "/tmp/c.yaml", "/k", None) == [
        "/v/bin/kindlab-twin", "create", "cluster", "--name", "lab", "--config", "/tmp/c.yaml", "--kubeconfig", "/k"]
    assert tw.create_argv("t", "lab", "c", "k", 60.0)[-2:] == ["--time-scale", "60"]
    assert tw.create_argv("t", "lab", "c", "k", 2.5)[-2:] == ["--time-scale", "2.5"]
    assert tw.get_clusters_argv("t") == ["t", "get", "clusters"]
    assert tw.get_kubeconfig_argv("t", "lab") == ["t", "get", "kubeconfig", "--name", "lab"]
    assert tw.delete_argv("t", "lab", "/k") == ["t", "delete", "cluster", "--name", "lab", "--kubeconfig", "/k"]
    assert tw.export_kubeconfig_argv("t", "lab", "/k") == ["t", "export", "kubeconfig", "--name", "lab", "--kubeconfig", "/k"]
    assert tw.connect_to_argv("t", "lab") == ["t", "get", "connect-to", "--name", "lab"]


def test_parse_connect_to() -> None:
    assert tw.parse_connect_to(CONNECT_TO) == [
        "100.64.0.1:80:127.0.0.1:41234", "100.64.0.1:443:127.0.0.1:41235", "172.18.0.2:30080:127.0.0.1:41236"]
    assert tw.parse_connect_to("") == []
    assert tw.parse_connect_to("[fd00:64::1]:80:127.0.0.1:4000\n") == ["[fd00:64::1]:80:127.0.0.1:4000"]
    # an IPv6 host printed without brackets gets them, as curl needs
    assert tw.parse_connect_to("fd00:64::1:80:127.0.0.1:4000\n") == ["[fd00:64::1]:80:127.0.0.1:4000"]


@pytest.mark.parametrize("line", ["100.64.0.1:80", "100.64.0.1 80 127.0.0.1 4000", "a:b:c:d", "h:80:127.0.0.1:", ":80:t:1"])
def test_parse_connect_to_rejects_other_lines(line) -> None:
    with pytest.raises(ClusterError, match="line 1 is not HOST:PORT:127.0.0.1:PORT"):
        tw.parse_connect_to(line)


def _executable(path) -> str:
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_twin_is_found_beside_the_python_first(tmp_path) -> None:
    twin = _executable(tmp_path / "kindlab-twin")
    p = get_provider("twin", lambda argv, data=None: (0, "", ""), lambda n: "/usr/bin/kindlab-twin",
                     executable=str(tmp_path / "python3"))
    assert p.twin == twin


def test_twin_falls_back_to_path(tmp_path) -> None:
    p = get_provider("twin", lambda argv, data=None: (0, "", ""), lambda n: "/usr/bin/kindlab-twin",
                     executable=str(tmp_path / "python3"))
    assert p.twin == "/usr/bin/kindlab-twin"


def test_twin_missing_is_explained(tmp_path) -> None:
    p = get_provider("twin", lambda argv, data=None: (0, "", ""), lambda n: None, executable=str(tmp_path / "python3"))
    with pytest.raises(BinaryNotFound, match="kindlab-twin was found neither beside .*python3 nor on PATH"):
        p.check_available()


def test_twin_binary_option_wins(tmp_path) -> None:
    twin = _executable(tmp_path / "my-twin")
    p = get_provider("twin", lambda argv, data=None: (0, "", ""), lambda n: None, {"twin": twin})
    assert p.twin == twin


def test_provider_verbs(tmp_path) -> None:
    twin = _executable(tmp_path / "kindlab-twin")
    calls = []

    def run(argv, data=None):
        calls.append(argv)
        if argv[1:3] == ["get", "clusters"]:
            return 0, "lab\n", ""
        if argv[1:3] == ["get", "connect-to"]:
            return 0, CONNECT_TO, ""
        return 0, "", ""

    p = get_provider("twin", run, lambda n: None, {"twin": twin}, time_scale=30.0)
    assert p.exists("lab")
    assert p.network_subnets() == ["172.18.0.0/16"]
    assert len(p.connect_to("lab")) == 3
    p.create("lab", "kind: Cluster\n", "/k", 300, "img")
    assert calls[-1][:3] == [twin, "create", "cluster"] and calls[-1][-2:] == ["--time-scale", "30"]
    assert "--wait" not in calls[-1] and "--image" not in calls[-1]
    p.delete("lab", "/k")
    assert calls[-1] == [twin, "delete", "cluster", "--name", "lab", "--kubeconfig", "/k"]
    p.export_kubeconfig("lab", "/k")
    assert calls[-1] == [twin, "export", "kubeconfig", "--name", "lab", "--kubeconfig", "/k"]


def test_a_stopped_cluster_is_reported_as_a_warning(tmp_path) -> None:
    """The twin process stops when a control-plane component dies; the next create says so."""
    twin = _executable(tmp_path / "kindlab-twin")
    stale = ('cluster "lab" is not running: kube-apiserver exited with status -9; last lines of its log (...) '
             '(stale state; "kindlab-twin delete cluster --name lab" removes it)')

    def run(argv, data=None):
        if argv[1:3] == ["get", "clusters"]:
            return 0, "", "WARNING: " + stale + "\nNo kind clusters found.\n"
        return 0, "", ""

    p = get_provider("twin", run, lambda n: None, {"twin": twin})
    assert not p.exists("lab")
    assert p.warnings == [stale]
