# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rest.py's kubeconfig reading: which server and credentials a context gives, kubeconfig files merged as
kubectl merges them, paths relative to their file, and a user whose token a plugin (`exec`) gives, which the
kubernetes package's loader runs."""
from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KubeconfigError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.kubeconfig import read_kubeconfig
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.rest import ApiResource, settings_from_kubeconfig

Obj = dict[str, Any]


def kubeconfig(path: Path, server: str, user: Obj, name: str = "lab", current: str | None = "lab") -> str:
    doc: Obj = {"apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": name, "cluster": {"server": server}}],
                "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                "users": [{"name": name, "user": user}]}
    if current is not None:
        doc["current-context"] = current
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_token_a_token_file_and_basic_credentials_become_the_authorization_header(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "a", "http://127.0.0.1:1/", {"token": "abc"})
    settings = settings_from_kubeconfig(read_kubeconfig([path], None))
    assert (settings.host, settings.context, settings.headers) == ("http://127.0.0.1:1", "lab", {"Authorization": "Bearer abc"})
    (tmp_path / "token").write_text("from-file\n")
    path = kubeconfig(tmp_path / "b", "http://127.0.0.1:1", {"tokenFile": "token"})  # relative to the kubeconfig's directory
    assert settings_from_kubeconfig(read_kubeconfig([path], None)).headers == {"Authorization": "Bearer from-file"}
    path = kubeconfig(tmp_path / "c", "http://127.0.0.1:1", {"username": "u", "password": "p"})
    assert settings_from_kubeconfig(read_kubeconfig([path], None)).headers == {"Authorization": "Basic " + base64.b64encode(b"u:p").decode()}


def test_merged_files_take_each_name_from_the_first_file_and_the_first_current_context(tmp_path: Path) -> None:
    first = kubeconfig(tmp_path / "first", "http://127.0.0.1:1", {"token": "one"}, current=None)
    second = kubeconfig(tmp_path / "second", "http://127.0.0.1:2", {"token": "two"}, current="lab")
    settings = settings_from_kubeconfig(read_kubeconfig([first, second], None))
    assert (settings.host, settings.headers["Authorization"]) == ("http://127.0.0.1:1", "Bearer one")


def test_a_missing_certificate_file_names_it(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", "https://127.0.0.1:1", {"client-certificate": "gone.crt", "client-key": "gone.key"})
    with pytest.raises(KubeconfigError, match=r"cannot use kubeconfig .*config \(context lab\): .*gone\.crt"):
        settings_from_kubeconfig(read_kubeconfig([path], "lab"))


def test_an_exec_plugins_token_comes_from_the_kubernetes_loader(tmp_path: Path) -> None:
    pytest.importorskip("kubernetes")
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "from-plugin"}}
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": ["-c", "print(%r)" % json.dumps(credential)], "interactiveMode": "Never"}}
    path = kubeconfig(tmp_path / "config", "https://127.0.0.1:1", user)
    settings = settings_from_kubeconfig(read_kubeconfig([path], None))
    assert (settings.host, settings.headers) == ("https://127.0.0.1:1", {"Authorization": "Bearer from-plugin"})


def test_resource_paths() -> None:
    pods = ApiResource("v1", "Pod", "pods", namespaced=True)
    assert pods.path() == "/api/v1/pods"  # a namespaced kind without a namespace: listed across namespaces
    assert pods.path("one", "web", "log") == "/api/v1/namespaces/one/pods/web/log"
    classes = ApiResource("networking.k8s.io/v1", "IngressClass", "ingressclasses", namespaced=False)
    assert classes.path("ignored", "nginx") == "/apis/networking.k8s.io/v1/ingressclasses/nginx"
