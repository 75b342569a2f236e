# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import json

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils import _helm as helm

# Written from helm's source (pkg/cmd/list.go releaseElement, get_values.go, status.go
# with release/v1 Release+Info and chart/v2 Metadata): revision is a string in `list`
# and an int ("version") in `status`; `updated` is Go's time.Time.String().
LIST_JSON = (
    '[{"name":"ingress","namespace":"two","revision":"3","updated":"2026-11-21 22:58:01.123456789 +0000 UTC",'
    '"status":"deployed","chart":"ingress-nginx-4.15.1","app_version":"1.15.1"}]\n'
)
LIST_EMPTY = "[]\n"
GET_VALUES_JSON = ('{"controller":{"admissionWebhooks":{"enabled":false},"publishService":{"enabled":false,"pathOverride":"two/svc"},'
                   '"scope":{"enabled":false}}}\n')
GET_VALUES_NONE = "null\n"
SEED_TWO = json.loads(GET_VALUES_JSON)


def test_upgrade_install_argv():
    argv = helm.upgrade_install_argv(
        "/usr/bin/helm", "ingress", "ingress-nginx", "https://kubernetes.github.io/ingress-nginx", "4.15.1", "two",
        "/tmp/v.yaml", wait=True, timeout=300, kubeconfig="/k", context="kind-lab",
    )
    assert argv == [
        "/usr/bin/helm", "upgrade", "--install", "ingress", "ingress-nginx",
        "--repo", "https://kubernetes.github.io/ingress-nginx", "--version", "4.15.1",
        "--namespace", "two", "--create-namespace", "--values", "/tmp/v.yaml", "--reset-values",
        "--wait", "--timeout", "300s", "--kubeconfig", "/k", "--kube-context", "kind-lab",
    ]
    bare = helm.upgrade_install_argv("helm", "r", "c", "https://x", "1.0.0", "ns", "/v", create_namespace=False)
    assert "--create-namespace" not in bare and "--wait" not in bare and "--timeout" not in bare


def test_query_argv():
    assert helm.list_argv("helm", "ingress.x", "two") == [
        "helm", "list", "--namespace", "two", "--filter", r"^ingress\.x$", "--deployed", "--failed", "--pending", "-o", "json",
    ]
    assert helm.get_values_argv("helm", "ingress", "two", context="c") == [
        "helm", "get", "values", "ingress", "--namespace", "two", "-o", "json", "--kube-context", "c",
    ]
    assert helm.uninstall_argv("helm", "ingress", "two", wait=True, timeout=60) == [
        "helm", "uninstall", "ingress", "--namespace", "two", "--wait", "--timeout", "60s",
    ]


def test_parse_list():
    (rel,) = helm.parse_list(LIST_JSON)
    assert rel == helm.HelmRelease("ingress", "two", 3, "deployed", "ingress-nginx", "4.15.1", "1.15.1", "2026-11-21 22:58:01.123456789 +0000 UTC")
    assert rel.as_dict()["chart"] == "ingress-nginx-4.15.1"
    assert helm.parse_list(LIST_EMPTY) == []
    assert helm.parse_list("") == []
    assert helm.find_release([rel], "ingress", "one") is None
    assert helm.find_release([rel], "ingress", "two") is rel


@pytest.mark.parametrize(
    "chart,name,version",
    [("ingress-nginx-4.15.1", "ingress-nginx", "4.15.1"), ("my-app-2-1.0.0-rc.1", "my-app-2", "1.0.0-rc.1"), ("x-v0.1.0", "x", "v0.1.0")],
)
def test_split_chart(chart, name, version):
    assert helm.split_chart(chart) == (name, version)


def test_parse_errors_are_readable():
    with pytest.raises(helm.HelmError, match="not JSON"):
        helm.parse_list("NAME NAMESPACE")
    with pytest.raises(helm.HelmError, match="unexpected entry"):
        helm.parse_list('[{"name":"x"}]')
    with pytest.raises(helm.HelmError, match="expected a JSON object"):
        helm.parse_get_values("[1]")


def test_parse_get_values():
    assert helm.parse_get_values(GET_VALUES_JSON) == SEED_TWO
    assert helm.parse_get_values(GET_VALUES_NONE) == {}


DEPLOYED = helm.parse_list(LIST_JSON)[0]


@pytest.mark.parametrize(
    "deployed,values,version,desired,changed,reason",
    [
        (None, None, "4.15.1", SEED_TWO, True, "not installed"),
        (DEPLOYED, SEED_TWO, "4.15.1", SEED_TWO, False, "up to date"),
        (DEPLOYED, SEED_TWO, "4.15.0", SEED_TWO, True, "chart ingress-nginx-4.15.1 deployed, ingress-nginx-4.15.0 wanted"),
        (DEPLOYED, SEED_TWO, "4.15.1", {"controller": {"scope": {"enabled": True}}}, True, "values differ"),
        (DEPLOYED, {}, "4.15.1", {}, False, "up to date"),
        (DEPLOYED, {"controller": {"replicaCount": 2.0}}, "4.15.1", {"controller": {"replicaCount": 2}}, False, "up to date"),
        (DEPLOYED, {"x": 1}, "4.15.1", {"x": True}, True, "values differ"),
        (helm.HelmRelease("ingress", "two", 2, "failed", "ingress-nginx", "4.15.1", "1.15.1"), SEED_TWO, "4.15.1", SEED_TWO, True, "status is failed"),
    ],
)
def test_upgrade_needed(deployed, values, version, desired, changed, reason):
    got, why = helm.upgrade_needed(deployed, values, "ingress-nginx", version, desired)
    assert got is changed
    assert reason in why


def make_chart_dir(root, name="ingress-nginx", version="4.11.0"):
    chart = root / name
    chart.mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: %s\nversion: %s\nappVersion: 1.11.0\n" % (name, version))
    return chart


def test_a_local_chart_directory_or_tgz_is_read_for_its_name_and_version(tmp_path):
    import tarfile
    chart = make_chart_dir(tmp_path)
    src = helm.chart_source("ingress-nginx", "https://repo", "4.15.1", None, None, str(chart))
    assert (src.name, src.version, src.repo, src.ref) == ("ingress-nginx", "4.11.0", "", str(chart))
    tgz = tmp_path / "ingress-nginx-4.11.0.tgz"
    with tarfile.open(tgz, "w:gz") as archive:  # as `helm package` lays it out
        archive.add(chart, arcname="ingress-nginx")
    assert helm.chart_source("ingress-nginx", "https://repo", "4.15.1", None, "4.11.0", str(tgz)).version == "4.11.0"
    # without a path: the pins, or what was asked for
    assert helm.chart_source("ingress-nginx", "https://repo", "4.15.1", None, None, None) == helm.ChartSource(
        "ingress-nginx", "4.15.1", "https://repo")
    assert helm.chart_source("ingress-nginx", "https://repo", "4.15.1", "https://m", "4.14.0", "").as_dict() == {
        "name": "ingress-nginx", "version": "4.14.0", "repo": "https://m", "path": None}


@pytest.mark.parametrize("setup, repo, version, message", [
    (lambda p: str(p / "missing"), None, None, "chart_path: expected a chart directory or .tgz, .* does not exist"),
    (lambda p: str(make_chart_dir(p, name="traefik")), None, None, "holds chart 'traefik', expected 'ingress-nginx'"),
    (lambda p: str(make_chart_dir(p)), None, "4.15.1", "chart_version: '4.15.1' was asked for, but the chart at .* is version 4.11.0"),
    (lambda p: str(make_chart_dir(p)), "https://repo", None, "chart_path and chart_repo: give one chart source"),
    (lambda p: (p / "x.tgz").write_text("not a tar") and str(p / "x.tgz"), None, None, "chart_path: cannot read the chart"),
    (lambda p: (p / "c").mkdir() or str(p / "c"), None, None, "chart_path: cannot read the chart at .*Chart.yaml"),
])
def test_a_bad_chart_source_is_named(tmp_path, setup, repo, version, message):
    with pytest.raises(helm.ChartSourceError, match=message):
        helm.chart_source("ingress-nginx", "https://r", "4.15.1", repo, version, setup(tmp_path))


def test_a_local_chart_takes_neither_repo_nor_version():
    argv = helm.upgrade_install_argv("helm", "ingress", "/charts/ingress-nginx", "", "", "two", "/v")
    assert argv[:5] == ["helm", "upgrade", "--install", "ingress", "/charts/ingress-nginx"]
    assert "--repo" not in argv and "--version" not in argv


@pytest.mark.parametrize("name, valid", [
    ("ingress", True), ("edge-2", True), ("edge.one", True), ("1st", True), ("a" * 53, True),
    # helm's ValidateReleaseName refuses these ("invalid release name, must match regex ...").
    ("Ingress!", False), ("Ingress", False), ("a" * 54, False), ("-edge", False), ("edge-", False), ("edge..one", False),
    ("edge_one", False), ("", False), ("edge\n", False), (None, False),
])
def test_release_names_follow_helms_own_rule(name, valid) -> None:
    assert helm.valid_release_name(name) is valid
