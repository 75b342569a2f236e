from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from ansible_collections.kindlab.ingress.plugins import module_utils
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError

# Exception classes that are stand-ins for a third-party library's own, not the collection's errors.
_FOREIGN = {("_yaml", "YAMLError")}


def _error_classes() -> list[tuple[str, type[BaseException]]]:
    found = []
    # Every module, in the packages too (controllers/, cluster/, verify/, lab/).
    for info in pkgutil.walk_packages(module_utils.__path__, module_utils.__name__ + "."):
        mod = importlib.import_module(info.name)
        short = info.name[len(module_utils.__name__) + 1:]
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == mod.__name__
                    and (short, name) not in _FOREIGN):
                found.append(("%s.%s" % (short, name), obj))
    return found


def test_the_scan_finds_the_collections_errors() -> None:
    names = {name for name, _cls in _error_classes()}
    # A scan that finds nothing would make the next test pass vacuously.
    assert {"_errors.KindlabError", "_errors.OptionError", "k8s.errors.K8sError", "cluster.pools.PoolError",
            "controllers.errors.ControllerError", "controllers.traefik.values.ValuesError"} <= names
    assert len(names) >= 16


@pytest.mark.parametrize("name,cls", _error_classes(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_error_class_derives_from_the_root(name: str, cls: type[BaseException]) -> None:
    assert issubclass(cls, KindlabError), "%s does not derive from KindlabError" % name


def test_option_errors_are_value_errors() -> None:
    options = [name for name, cls in _error_classes() if issubclass(cls, OptionError)]
    assert "lab.definition.LabError" in options and "k8s.selection.SelectionError" in options
    for name, cls in _error_classes():
        if issubclass(cls, OptionError):
            assert issubclass(cls, ValueError), name


def test_cluster_and_tool_errors_are_not_option_errors() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError
    from ansible_collections.kindlab.ingress.plugins.module_utils._helm import HelmError
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, WaitTimeout

    for cls in (ClusterError, HelmError, K8sError, WaitTimeout):
        assert not issubclass(cls, ValueError), cls.__name__


def test_details_travel_with_the_error() -> None:
    exc = KindlabError("timed out", last_seen={"ready": 0})
    assert str(exc) == "timed out" and exc.details == {"last_seen": {"ready": 0}}
    assert OptionError("pools[0]: bad").details == {}
