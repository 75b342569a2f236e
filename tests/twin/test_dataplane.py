"""The data plane: routing rules (pure) and real HTTP over loopback listeners of a running
twin (the real control plane with the emulations)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "emulations"))

from twinlib import (ECHO_IMAGE, MANAGER, connect_to, deployment, http_get, ingress, ingress_addr, metallb,  # noqa: E402
                     namespace, nginx_release, ready_deployment, service, started_twin, target_for, update_retry,
                     wait_for)

from kindlab_twin.dataplane import ready_endpoints  # noqa: E402
from kindlab_twin.cluster import TwinClusterHandle  # noqa: E402

DEP = ("apps/v1", "Deployment")


def test_http_through_metallb_ip_and_ingress_nginx(twin: TwinClusterHandle) -> None:
    s = twin.store
    metallb(s, ["100.64.0.0/16"])
    namespace(s, "one")
    nginx_release(s, "one", scope=True, publish_service=True)
    s.create(deployment("web", "one", "nginx:1.27"), MANAGER)
    s.create(service("web", "one", {"app": "web"}, [{"port": 80}]), MANAGER)
    s.create(deployment("echo", "one", ECHO_IMAGE, replicas=2, ports=[{"name": "http", "containerPort": 8080}]), MANAGER)
    s.create(service("echo", "one", {"app": "echo"}, [{"port": 80, "targetPort": "http"}]), MANAGER)
    ann = {"kubernetes.io/ingress.class": "nginx"}
    s.create(ingress("web", "one", "web", host="web.test", annotations=ann), MANAGER)
    s.create(ingress("echo", "one", "echo", host="echo.test", annotations=ann), MANAGER)
    ready_deployment(s, "one", "echo")
    ready_deployment(s, "one", "ingress-ingress-nginx-controller")
    # both echo pods in the EndpointSlice (the real controller-manager's endpointslice controller)
    wait_for(lambda: len(ready_endpoints(s, "one", "echo", None)) == 2, what="2 ready echo endpoints")
    port = wait_for(lambda: target_for(twin.state_dir, "100.64.0.0", 80), what="LB listener")
    entry = [e for e in connect_to(twin.state_dir) if e["host"] == "100.64.0.0" and e["port"] == 80][0]
    assert entry["target_host"] == "127.0.0.1" and entry["what"] == "one/ingress-ingress-nginx-controller"
    code, body = wait_for(lambda: (r := http_get(port, "/", "web.test")) and r[0] == 200 and r, what="web 200")
    assert "<title>Welcome to nginx!</title>" in body
    pods = set()
    for _request in range(4):
        code, body = http_get(port, "/hello", "echo.test")
        assert code == 200 and "namespace: one" in body and "path: /hello" in body
        pods.add(body.splitlines()[0])
    assert len(pods) == 2  # round-robin over both ready endpoints
    code, body = http_get(port, "/", "nobody.test")
    assert code == 404 and "404 Not Found" in body and "nginx" in body
    d = s.get(DEP, "one", "echo")
    d["spec"]["replicas"] = 0
    update_retry(s, d)
    code, body = wait_for(lambda: (r := http_get(port, "/", "echo.test")) and r[0] == 503 and r, what="503")
    assert "503 Service Temporarily Unavailable" in body


def test_unannounced_pool_and_host_ports(twin: TwinClusterHandle) -> None:
    s = twin.store
    metallb(s, ["100.64.0.0/16"], l2=False)
    s.create(deployment("web", "default", "nginx:1.27"), MANAGER)
    s.create(service("web", "default", {"app": "web"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    s.create(deployment("hp", "default", ECHO_IMAGE, ports=[{"containerPort": 8080, "hostPort": 8080}]), MANAGER)
    ready_deployment(s, "default", "web")
    svc = wait_for(lambda: (x := s.get(("v1", "Service"), "default", "web"))
                   and (x.get("status") or {}).get("loadBalancer", {}).get("ingress") and x, what="LB IP")
    node_port = svc["spec"]["ports"][0]["nodePort"]
    np = wait_for(lambda: target_for(twin.state_dir, "172.18.0.2", node_port), what="nodePort listener")
    # The listener exists as soon as the Service does; until the real EndpointSlice controller has
    # published the ready pod (a moment after Ready, as for kube-proxy), the connection is reset.
    assert wait_for(lambda: http_get(np)[0] == 200, what="200 through the nodePort")
    hp = wait_for(lambda: target_for(twin.state_dir, "172.18.0.2", 8080), what="hostPort listener")
    code, body = http_get(hp, "/x")
    assert code == 200 and body.startswith("pod: hp-")
    assert svc["status"]["loadBalancer"]["ingress"][0]["ip"] == "100.64.0.0"
    time.sleep(1.0)  # a few data-plane passes
    assert target_for(twin.state_dir, "100.64.0.0", 80) is None  # assigned but not announced (no L2Advertisement)
    used = {p.get("nodePort") for x in s.list(("v1", "Service")) for p in x["spec"].get("ports") or []}
    unused = next(p for p in range(32767, 30000, -1) if p not in used)
    assert target_for(twin.state_dir, "172.18.0.2", unused) is None  # nothing there: no mapping
    s.create({"apiVersion": "metallb.io/v1beta1", "kind": "L2Advertisement",
              "metadata": {"name": "l2", "namespace": "metallb-system"}, "spec": {"ipAddressPools": ["default"]}}, MANAGER)
    lb = wait_for(lambda: target_for(twin.state_dir, "100.64.0.0", 80), what="announced")
    assert "Welcome to nginx!" in http_get(lb)[1]


def test_kind_extra_port_mappings_to_an_ingress_host_port() -> None:
    """kind's ingress set-up: node label from kubeadmConfigPatches, extraPortMappings 80→8080,
    a controller pod with hostPort 80 selected by nodeSelector ingress-ready=true."""
    patch = "kind: InitConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    node-labels: \"ingress-ready=true\"\n"
    cfg = {"nodes": [{"role": "control-plane", "kubeadmConfigPatches": [patch],
                      "extraPortMappings": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}]}
    with started_twin(cfg) as rt:
        s = rt.store
        node = s.get(("v1", "Node"), None, "kind-control-plane")
        assert node is not None and node["metadata"]["labels"]["ingress-ready"] == "true"
        namespace(s, "ingress-nginx")
        nginx_release(s, "ingress-nginx", scope=False, publish_service=False, service_type="NodePort",
                      extra_args=["--watch-ingress-without-class=true", "--publish-status-address=localhost"])
        d = s.get(DEP, "ingress-nginx", "ingress-ingress-nginx-controller")
        c0 = d["spec"]["template"]["spec"]["containers"][0]
        c0["ports"][0]["hostPort"] = 80
        d["spec"]["template"]["spec"]["nodeSelector"] = {"ingress-ready": "true"}
        update_retry(s, d)
        s.create(deployment("web", "default", "nginx:1.27"), MANAGER)
        s.create(service("web", "default", {"app": "web"}, [{"port": 80}]), MANAGER)
        s.create(ingress("web", "default", "web"), MANAGER)
        ready_deployment(s, "ingress-nginx", "ingress-ingress-nginx-controller")
        port = wait_for(lambda: target_for(rt.state_dir, "127.0.0.1", 8080), what="extraPortMappings entry")
        assert target_for(rt.state_dir, "172.18.0.2", 80) is not None
        code, body = wait_for(lambda: (r := http_get(port, "/", "anything")) and r[0] == 200 and r, what="200")
        assert "Welcome to nginx!" in body
        assert wait_for(lambda: ingress_addr(s, "default", "web"), what="status") == ["localhost"]


def test_no_speaker_no_announcement(twin: TwinClusterHandle) -> None:
    s = twin.store
    metallb(s, ["100.64.0.0/16"])
    s.create(deployment("web", "default", "nginx:1.27"), MANAGER)
    s.create(service("web", "default", {"app": "web"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    wait_for(lambda: target_for(twin.state_dir, "100.64.0.0", 80), what="announced")
    s.delete(("apps/v1", "DaemonSet"), "metallb-system", "speaker")  # speakers gone: nobody answers ARP
    wait_for(lambda: target_for(twin.state_dir, "100.64.0.0", 80) is None, what="withdrawn")


def test_default_backend_service_flag(twin: TwinClusterHandle) -> None:
    s = twin.store
    namespace(s, "edge")
    s.create(deployment("fallback", "edge", ECHO_IMAGE, ports=[{"containerPort": 8080}]), MANAGER)
    s.create(service("fallback", "edge", {"app": "fallback"}, [{"port": 80, "targetPort": 8080}]), MANAGER)
    nginx_release(s, "edge", scope=False, publish_service=False, service_type="NodePort",
                  extra_args=["--default-backend-service=$(POD_NAMESPACE)/fallback"])
    ready_deployment(s, "edge", "fallback")
    ready_deployment(s, "edge", "ingress-ingress-nginx-controller")
    svc = s.get(("v1", "Service"), "edge", "ingress-ingress-nginx-controller")
    port = wait_for(lambda: target_for(twin.state_dir, "172.18.0.2", svc["spec"]["ports"][0]["nodePort"]), what="nodePort")
    code, body = wait_for(lambda: (r := http_get(port, "/nothing", "x.test")) and r[0] == 200 and r, what="fallback")
    assert body.startswith("pod: fallback-") and "path: /nothing" in body


def test_whoami_pods_answer_with_their_hostname(twin: TwinClusterHandle) -> None:
    s = twin.store
    s.create(deployment("who", "default", "traefik/whoami:v1.11.0", ports=[{"containerPort": 80, "hostPort": 8081}]), MANAGER)
    port = wait_for(lambda: target_for(twin.state_dir, "172.18.0.2", 8081), what="hostPort listener")
    code, body = http_get(port, "/x", "who.test")
    pod = s.list(("v1", "Pod"), "default", {"app": "who"})[0]["metadata"]["name"]
    assert code == 200 and body.splitlines()[0] == "Hostname: " + pod
    assert "GET /x HTTP/1.1" in body and "Host: who.test" in body
