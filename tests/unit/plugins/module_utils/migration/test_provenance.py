"""The proof of origin of a replay's answers (migration/provenance.py): a backend pod this cluster's EndpointSlices
hold, passed by a pod behind the data plane's Service, named by the header its proxy type adds."""
from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import proxy_markers
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import provenance
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.provenance import ForeignAnswer, Origin, why_foreign
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address, Observation

BACKENDS = {"shop/web": frozenset({"web-5c-abcde"})}
TRAEFIK = Origin("traefik-nginx-provider", Address("100.66.0.2"), frozenset({"traefik-6f-xyz12"}), "X-Forwarded-Server")
NGINX = Origin("ingress-nginx", Address("100.66.0.1"), frozenset({"ingress-nginx-controller-7b-qwert"}), "")
REQUEST = Request(id="shop/web a.test/ [path] /", ingress="shop/web", host="a.test", target="/", kind="path", rule="/ (Prefix)")


def answer(pod: str = "web-5c-abcde", **received: str) -> Observation:
    return Observation(status=200, backend="shop/web", pod=pod, received=dict(received))


def test_traefik_names_its_pod_in_x_forwarded_server() -> None:
    assert "X-Forwarded-Server" in proxy_markers()


@pytest.mark.parametrize("origin, got, why", [
    (TRAEFIK, answer(**{"X-Forwarded-Server": "traefik-6f-xyz12"}), ""),
    (NGINX, answer(), ""),
    (TRAEFIK, Observation(status=404), ""),  # no backend answered: nothing names a pod or a proxy
    (TRAEFIK, answer(pod="web-other-cluster", **{"X-Forwarded-Server": "traefik-6f-xyz12"}),
     "pod web-other-cluster of Service shop/web answered, which no EndpointSlice of that Service in this cluster holds"),
    (TRAEFIK, answer(), "the request reached pod web-5c-abcde without X-Forwarded-Server: no pod behind it passed it"),
    (TRAEFIK, answer(**{"x-forwarded-server": "traefik-other-cluster"}),
     "the request was passed by traefik-other-cluster (X-Forwarded-Server: traefik-other-cluster), not by a pod behind it "
     "(traefik-6f-xyz12)"),
    (NGINX, answer(**{"X-Forwarded-Server": "traefik-6f-xyz12"}),
     "the request was passed by traefik-6f-xyz12 (X-Forwarded-Server: traefik-6f-xyz12), not by a pod behind it "
     "(ingress-nginx-controller-7b-qwert)"),
])
def test_why_an_answer_is_foreign(origin: Origin, got: Observation, why: str) -> None:
    assert why_foreign(got, origin, BACKENDS, proxy_markers()) == why


def test_a_data_plane_given_by_address_proves_its_backend_only() -> None:
    by_address = Origin("t", Address("127.0.0.1"), frozenset(), "")
    assert why_foreign(answer(**{"X-Forwarded-Server": "anyone"}), by_address, BACKENDS, proxy_markers()) == ""
    assert why_foreign(answer(pod="x"), by_address, BACKENDS, proxy_markers()).startswith("pod x of Service shop/web")


def test_check_names_the_first_foreign_answer_in_one_line_and_counts_the_rest() -> None:
    answers = {"ingress-nginx": [[answer(), answer()]],
               "traefik-nginx-provider": [[answer(pod="web-elsewhere", **{"X-Forwarded-Server": "nginx-elsewhere"})]]}
    provenance.check({"ingress-nginx": answers["ingress-nginx"]}, [REQUEST], [NGINX], BACKENDS)  # every answer is ours
    with pytest.raises(ForeignAnswer) as err:
        provenance.check(answers, [REQUEST], [NGINX, TRAEFIK], BACKENDS)
    assert str(err.value) == (
        "the answers did not all come from the rehearsal's own data planes, so none is judged: traefik-nginx-provider at "
        "100.66.0.2:80 (its Service's pods: traefik-6f-xyz12), GET http://a.test/: pod web-elsewhere of Service shop/web "
        "answered, which no EndpointSlice of that Service in this cluster holds. Another cluster on the same network may "
        "hold that address: give the rehearsal a pool of its own")


def test_backend_pods_reads_every_slice_of_a_service() -> None:
    class Client:
        def list(self, api_version: str, kind: str) -> list[dict]:
            assert (api_version, kind) == ("discovery.k8s.io/v1", "EndpointSlice")

            def eps(name: str, *pods: str) -> dict:
                return {"metadata": {"namespace": "shop", "name": name, "labels": {"kubernetes.io/service-name": "web"}},
                        "endpoints": [{"targetRef": {"kind": "Pod", "name": p}} for p in pods]}
            return [eps("web-a", "web-1"), eps("web-b", "web-2"), {"metadata": {"namespace": "x", "name": "mirror"}}]
    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import backend_pods

    assert backend_pods(Client()) == {"shop/web": frozenset({"web-1", "web-2"})}
