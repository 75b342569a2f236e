from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CredentialSecret
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.basic_auth import credential_secrets

N = "nginx.ingress.kubernetes.io/"


def test_basic_auth_names_its_secret_in_the_ingress_namespace_by_default() -> None:
    got = credential_secrets("shop", {N + "auth-type": "basic", N + "auth-secret": "admins", N + "auth-realm": "Staff"})
    assert got == [CredentialSecret("shop", "admins", "auth-file", (N + "auth-type", N + "auth-secret", N + "auth-realm"))]


def test_a_namespaced_reference_and_the_map_format_are_read_as_written() -> None:
    got = credential_secrets("shop", {N + "auth-type": "Basic", N + "auth-secret": "auth/admins",
                                      N + "auth-secret-type": "auth-map"})
    assert [(s.namespace, s.name, s.format) for s in got] == [("auth", "admins", "auth-map")]
    assert N + "auth-secret-type" in got[0].annotations


def test_what_is_not_rebuilt_asks_for_no_secret() -> None:
    for annotations in ({N + "auth-type": "digest", N + "auth-secret": "a"},  # digest: htdigest bound to the realm
                        {N + "auth-type": "basic"},  # no secret named
                        {N + "auth-type": "basic", N + "auth-secret": "a/b/c"},
                        {N + "auth-type": "basic", N + "auth-secret": "a", N + "auth-secret-type": "auth-ldap"},
                        {N + "auth-url": "http://auth.example/verify"}):
        assert credential_secrets("shop", annotations) == [], annotations


def test_the_registry_asks_every_type() -> None:
    assert [s.name for s in registry.credential_secrets("shop", {N + "auth-type": "basic", N + "auth-secret": "x"})] == ["x"]
    assert registry.credential_secrets("shop", {"traefik.ingress.kubernetes.io/router.middlewares": "a@kubernetescrd"}) == []
