from __future__ import annotations

import base64

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CredentialSecret
from ansible_collections.kindlab.ingress.plugins.module_utils.lab import credentials as cred
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import ensure
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

N = "nginx.ingress.kubernetes.io/"
FILE = CredentialSecret("shop", "admins", "auth-file", ())
MAP = CredentialSecret("shop", "staff", "auth-map", ())


def decoded(obj: dict) -> dict:
    return {k: base64.b64decode(v).decode() for k, v in obj["data"].items()}


def test_the_hash_is_the_sha_scheme_nginx_and_traefik_read() -> None:
    # htpasswd -nbs user password prints user:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g= (Traefik's own test fixture)
    assert cred.hashed("password") == "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="


def test_each_format_writes_its_users_where_the_ingress_reads_them() -> None:
    assert decoded(cred.secret_object(FILE, "kindlab", "pw", {})) == {"auth": "kindlab:%s\n" % cred.hashed("pw")}
    assert decoded(cred.secret_object(MAP, "kindlab", "pw", {})) == {"kindlab": cred.hashed("pw")}


def test_generated_once_then_kept_and_read_back_and_never_shown() -> None:
    client = FakeClient(["shop"])
    first = cred.ensure_credentials(client, [FILE], [], False, {})
    assert [r.changed for r in first] == [True]
    user, password = cred.read_credentials(client, FILE) or ("", "")
    assert user == cred.USER and len(password) >= 20
    assert password not in str(first[0].after) and password not in str(first[0].diff)
    second = cred.ensure_credentials(client, [FILE], [], False, {})
    assert [r.changed for r in second] == [False]
    assert cred.read_credentials(client, FILE) == (user, password)  # kept as it is


def test_check_mode_writes_nothing_and_a_secret_the_lab_did_not_make_stays_unknown() -> None:
    client = FakeClient(["shop"])
    assert [r.changed for r in cred.ensure_credentials(client, [FILE], [], True, {})] == [True]
    assert client.writes == 0
    client.apply_all([{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "staff", "namespace": "shop"},
                       "data": {"team": "e30="}}])
    assert [r.changed for r in cred.ensure_credentials(client, [MAP], [], False, {})] == [False]
    assert cred.read_credentials(client, MAP) is None


def test_a_lab_with_a_basic_auth_ingress_makes_its_secret_and_removes_only_that() -> None:
    specs = [{"name": "admin", "namespace": "shop",
              "ingress": {"host": "admin.shop.test", "annotations": {N + "auth-type": "basic", N + "auth-secret": "admins"}}}]
    client = FakeClient(["shop"])
    result = ensure(client, parse_workloads(specs), "present", False, False, 1)
    assert "Secret shop/admins" in {o["object"] for o in result["objects"]}
    assert cred.read_credentials(client, FILE) is not None
    ensure(client, parse_workloads(specs), "absent", False, False, 1)
    assert client.get("v1", "Secret", "admins", "shop") is None
