# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The helm CLI: argv builders, parsers of its JSON output, and the no-change decision.

Output formats (helm v3.21 and v4 print the same JSON for these two commands):
- `helm list -o json`: a JSON array (``[]`` when nothing matches) of objects with string
  fields name, namespace, revision (a decimal string), updated (Go time.Time.String(),
  e.g. "2026-11-21 22:58:01.123456789 +0000 UTC", or "-"), status (deployed, failed,
  pending-install, pending-upgrade, pending-rollback, superseded, uninstalling,
  uninstalled, unknown), chart ("<chart name>-<chart version>") and app_version.
- `helm get values -o json`: the user-supplied values as a JSON object, or ``null`` when
  the release has none.

`helm status -o json` is never read: helm v3 and v4 alike strip the chart from the release
before printing it (`rel.Chart = nil` in their status command), so it cannot tell which chart
version is deployed. `helm uninstall --wait` needs helm 3.7 or later.
"""
from __future__ import annotations

import json
import os
import re
import tarfile
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml

Values = dict[str, Any]

# helm's own rule for release names (ValidateReleaseName, helm v3 pkg/chartutil and v4
# pkg/chart/v2/util): a DNS-1123 subdomain of at most 53 characters, leaving 10 of Kubernetes'
# 63 for what charts append to it. helm refuses any other name only once the cluster exists.
RELEASE_NAME_MAX = 53
RELEASE_NAME = ("a helm release name (lower-case letters, digits, '-' and '.', starting and ending with a letter "
                "or digit, at most %d characters)" % RELEASE_NAME_MAX)


def valid_release_name(name: Any) -> bool:
    return is_dns1123_subdomain(name) and len(name) <= RELEASE_NAME_MAX


class HelmError(KindlabError):
    """helm failed or printed something we cannot read; the message is for the user."""


@dataclass(frozen=True)
class HelmRelease:
    name: str
    namespace: str
    revision: int
    status: str
    chart_name: str
    chart_version: str
    app_version: str
    updated: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "revision": self.revision,
            "status": self.status,
            "chart": "%s-%s" % (self.chart_name, self.chart_version),
            "chart_name": self.chart_name,
            "chart_version": self.chart_version,
            "app_version": self.app_version,
            "updated": self.updated,
        }


# ---------------------------------------------------------------- chart source


class ChartSourceError(OptionError, HelmError):
    """chart_path/chart_repo/chart_version do not name a usable chart."""


@dataclass(frozen=True)
class ChartSource:
    """Where `helm upgrade --install` takes the chart: a repository (name + --repo + --version)
    or a local chart directory or .tgz (its path; the version is the chart's own)."""

    name: str
    version: str
    repo: str = ""  # "" for a local chart
    path: str = ""  # "" for a repository chart

    @property
    def ref(self) -> str:
        """The CHART argument of helm upgrade --install."""
        return self.path or self.name

    def as_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "version": self.version, "repo": self.repo or None, "path": self.path or None}


def read_chart_metadata(path: str) -> dict[str, Any]:
    """Chart.yaml of a chart directory, or of the chart inside a packaged .tgz (its first
    `<dir>/Chart.yaml`), as helm reads it; a ChartSourceError naming chart_path otherwise."""
    if yaml is None:
        raise ChartSourceError("chart_path: PyYAML is needed to read %s" % path)
    try:
        if os.path.isdir(path):
            with open(os.path.join(path, "Chart.yaml"), encoding="utf-8") as handle:
                text = handle.read()
        elif os.path.isfile(path):
            with tarfile.open(path, "r:*") as archive:
                member = next((m for m in archive.getmembers()
                               if m.isfile() and m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")), None)
                if member is None:
                    raise ChartSourceError("chart_path: %s is an archive without <chart>/Chart.yaml" % path)
                extracted = archive.extractfile(member)
                text = extracted.read().decode("utf-8") if extracted else ""
        else:
            raise ChartSourceError("chart_path: expected a chart directory or .tgz, %s does not exist" % path)
        data = yaml.safe_load(text)
    except (OSError, tarfile.TarError, UnicodeDecodeError, YAMLError) as exc:
        raise ChartSourceError("chart_path: cannot read the chart at %s: %s" % (path, exc)) from None
    if not isinstance(data, dict) or not data.get("name") or not data.get("version"):
        raise ChartSourceError("chart_path: %s has no Chart.yaml with a name and a version" % path)
    return data


def chart_source(chart_name: str, pinned_repo: str, pinned_version: str, repo: str | None, version: str | None,
                 path: str | None) -> ChartSource:
    """The chart to install: a local PATH (its Chart.yaml must name CHART_NAME, and VERSION, if
    given, must be its version), else REPO/VERSION with the pins as defaults."""
    if not path:
        return ChartSource(chart_name, version or pinned_version, repo or pinned_repo)
    if repo:
        raise ChartSourceError("chart_path and chart_repo: give one chart source, not both")
    meta = read_chart_metadata(path)
    if str(meta["name"]) != chart_name:
        raise ChartSourceError("chart_path: %s holds chart %r, expected %r" % (path, meta["name"], chart_name))
    if version and str(meta["version"]) != version:
        raise ChartSourceError("chart_version: %r was asked for, but the chart at %s is version %s"
                               % (version, path, meta["version"]))
    return ChartSource(chart_name, str(meta["version"]), "", os.path.abspath(path))


# ---------------------------------------------------------------- argv


def _global_flags(kubeconfig: str | None, context: str | None) -> list[str]:
    argv: list[str] = []
    if kubeconfig:
        argv += ["--kubeconfig", kubeconfig]
    if context:
        argv += ["--kube-context", context]
    return argv


def upgrade_install_argv(
    helm: str,
    release: str,
    chart: str,
    repo: str,
    version: str,
    namespace: str,
    values_file: str,
    create_namespace: bool = True,
    wait: bool = False,
    timeout: int | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> list[str]:
    """`helm upgrade --install`. --reset-values makes the values file the whole truth:
    without it helm reuses the previous release's values when the new set is empty. A local
    chart (CHART a path, REPO and VERSION empty) takes neither --repo nor --version."""
    argv = [helm, "upgrade", "--install", release, chart]
    if repo:
        argv += ["--repo", repo]
    if version:
        argv += ["--version", version]
    argv += ["--namespace", namespace]
    if create_namespace:
        argv.append("--create-namespace")
    argv += ["--values", values_file, "--reset-values"]
    if wait:
        argv.append("--wait")
    if timeout is not None:
        argv += ["--timeout", "%ds" % timeout]
    return argv + _global_flags(kubeconfig, context)


def uninstall_argv(
    helm: str,
    release: str,
    namespace: str,
    wait: bool = False,
    timeout: int | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> list[str]:
    argv = [helm, "uninstall", release, "--namespace", namespace]
    if wait:
        argv.append("--wait")
    if timeout is not None:
        argv += ["--timeout", "%ds" % timeout]
    return argv + _global_flags(kubeconfig, context)


def list_argv(helm: str, release: str, namespace: str, kubeconfig: str | None = None, context: str | None = None) -> list[str]:
    """`helm list` for exactly one release name (--filter is a regular expression). The
    status filters are explicit because the defaults differ (v3: deployed and failed
    only; v4: every status, and v4 dropped v3's --all)."""
    argv = [helm, "list", "--namespace", namespace, "--filter", "^%s$" % re.escape(release)]
    argv += ["--deployed", "--failed", "--pending", "-o", "json"]
    return argv + _global_flags(kubeconfig, context)


def get_values_argv(helm: str, release: str, namespace: str, kubeconfig: str | None = None, context: str | None = None) -> list[str]:
    """User-supplied values only (no --all)."""
    return [helm, "get", "values", release, "--namespace", namespace, "-o", "json"] + _global_flags(kubeconfig, context)


# ---------------------------------------------------------------- parsers


_CHART_RE = re.compile(r"^(?P<name>.+?)-(?P<version>v?\d+\.\d+\.\d+\S*)$")


def split_chart(chart: str) -> tuple[str, str]:
    """"ingress-nginx-4.15.1" → ("ingress-nginx", "4.15.1"): the version starts at the
    first "-<digits>.<digits>.<digits>" (chart names may contain dashes and digits)."""
    m = _CHART_RE.match(chart)
    if not m:
        raise HelmError("cannot read chart %r as <name>-<version>" % chart)
    return m.group("name"), m.group("version")


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise HelmError("%s printed output that is not JSON (%s): %.200s" % (what, exc, text)) from exc


def parse_list(text: str) -> list[HelmRelease]:
    data = _load_json(text or "[]", "helm list")
    if data is None:
        return []
    if not isinstance(data, list):
        raise HelmError("helm list: expected a JSON array, got %s" % type(data).__name__)
    out = []
    for item in data:
        try:
            chart_name, chart_version = split_chart(item["chart"])
            out.append(
                HelmRelease(
                    name=item["name"],
                    namespace=item["namespace"],
                    revision=int(item["revision"]),
                    status=item["status"],
                    chart_name=chart_name,
                    chart_version=chart_version,
                    app_version=item.get("app_version", ""),
                    updated=item.get("updated", ""),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise HelmError("helm list: unexpected entry %r (%s)" % (item, exc)) from exc
    return out


def find_release(releases: list[HelmRelease], name: str, namespace: str) -> HelmRelease | None:
    for rel in releases:
        if rel.name == name and rel.namespace == namespace:
            return rel
    return None


def parse_get_values(text: str) -> Values:
    data = _load_json(text or "null", "helm get values")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise HelmError("helm get values: expected a JSON object or null, got %s" % type(data).__name__)
    return data


# ---------------------------------------------------------------- decision


def canonical(value: Any) -> Any:
    """A form in which equal values compare equal the way helm sees them: numbers by
    value (helm keeps them as float64, so 1 == 1.0) but never equal to booleans."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", float(value))
    if isinstance(value, dict):
        return ("map", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(canonical(v) for v in value))
    return ("str", value) if isinstance(value, str) else ("other", repr(value))


def upgrade_needed(
    deployed: HelmRelease | None,
    deployed_values: Values | None,
    chart_name: str,
    chart_version: str,
    desired_values: Values,
) -> tuple[bool, str]:
    """(change needed, why). No change when a deployed release has the same chart and
    version and the same user-supplied values."""
    if deployed is None:
        return True, "release not installed"
    if deployed.status != "deployed":
        return True, "release status is %s" % deployed.status
    if deployed.chart_name != chart_name or deployed.chart_version != chart_version:
        return True, "chart %s-%s deployed, %s-%s wanted" % (deployed.chart_name, deployed.chart_version, chart_name, chart_version)
    if canonical(deployed_values or {}) != canonical(desired_values or {}):
        return True, "user-supplied values differ"
    return False, "release %s revision %d is up to date" % (deployed.name, deployed.revision)


def values_diff(deployed_values: Values | None, desired_values: Values) -> dict[str, Any]:
    """An Ansible diff of the user-supplied values."""
    return {"before": deployed_values or {}, "after": desired_values or {}}
