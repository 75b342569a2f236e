"""The twin's nodes, named, labelled and addressed as kind makes them (registered by the
control plane; kwok then keeps them Ready, and the controller-manager gives each its pod CIDR).

kind (v0.32.0 pkg/cluster/internal/providers/common/namer.go) names nodes
`<cluster>-<role>` then `<cluster>-<role>2`, `3`…; roles are control-plane and worker.
kind creates the containers concurrently (providers/docker/provider.go UntilErrorConcurrent),
so docker hands out 172.18.0.2.. in a racy order; the twin uses config order, control
planes first as written, which is what a single control-plane cluster always shows.
kubeadminit/init.go removes the control-plane taint (and the
exclude-from-external-load-balancers label) only when the cluster has exactly one node.
kind v0.32.0's default node image is kindest/node:v1.35.0.
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from kindlab_twin import ipam
from kindlab_twin.contract import Obj

DEFAULT_KUBELET_VERSION = "v1.35.0"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}


def node_roles(kind_config: Obj | None) -> list[dict[str, Any]]:
    nodes = (kind_config or {}).get("nodes") or [{"role": "control-plane"}]
    return [dict(n) for n in nodes]


def node_names(cluster: str, kind_config: Obj | None) -> list[str]:
    counter: dict[str, int] = {}
    names = []
    for n in node_roles(kind_config):
        role = n.get("role", "control-plane")
        counter[role] = counter.get(role, 0) + 1
        suffix = "" if counter[role] == 1 else str(counter[role])
        names.append(f"{cluster}-{role}{suffix}")
    return names


def patch_node_labels(node_cfg: dict[str, Any]) -> dict[str, str]:
    """Labels from kubeadmConfigPatches' kubelet `node-labels` (kind's ingress guide sets
    ingress-ready=true this way), v1beta3 map form or v1beta4 name/value list form."""
    out: dict[str, str] = {}
    for patch in node_cfg.get("kubeadmConfigPatches") or []:
        text = str(patch)
        found = re.findall(r'node-labels:\s*"?([^"\n]+)"?', text)
        found += re.findall(r'name:\s*"?node-labels"?\s*\n\s*value:\s*"?([^"\n]+)"?', text)
        for item in found:
            for pair in item.split(","):
                k, _sep, v = pair.strip().partition("=")
                if k:
                    out[k] = v
    return out


def kubelet_version(node_cfg: dict[str, Any], kind_config: Obj | None) -> str:
    image = node_cfg.get("image") or ""
    m = re.search(r":(v\d+\.\d+\.\d+[^@]*)", image)
    return m.group(1) if m else DEFAULT_KUBELET_VERSION


def desired_nodes(cluster: str, kind_config: Obj | None) -> list[Obj]:
    roles = node_roles(kind_config)
    names = node_names(cluster, kind_config)
    single = len(roles) == 1
    out: list[Obj] = []
    for i, (cfg, name) in enumerate(zip(roles, names)):
        control = cfg.get("role", "control-plane") == "control-plane"
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
        }
        labels.update(cfg.get("labels") or {})
        labels.update(patch_node_labels(cfg))
        taints: list[dict[str, str]] = []
        if control:
            labels["node-role.kubernetes.io/control-plane"] = ""
            if not single:
                labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
                taints.append(dict(CONTROL_PLANE_TAINT))
        version = kubelet_version(cfg, kind_config)
        ts = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        # No podCIDR: the controller-manager allocates it from the pod subnet, as on kind.
        spec: dict[str, Any] = {"providerID": f"kind://docker/{cluster}/{name}"}
        if taints:
            spec["taints"] = taints
        out.append({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": spec,
            "status": {
                "addresses": [{"type": "InternalIP", "address": ipam.node_ip(i)},
                              {"type": "Hostname", "address": name}],
                "allocatable": {"cpu": "8", "ephemeral-storage": "100Gi", "memory": "16Gi", "pods": "110"},
                "capacity": {"cpu": "8", "ephemeral-storage": "100Gi", "memory": "16Gi", "pods": "110"},
                "conditions": [
                    {"type": t, "status": "False", "reason": r, "message": m,
                     "lastHeartbeatTime": ts, "lastTransitionTime": ts}
                    for t, r, m in (
                        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    )
                ] + [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                      "message": "kubelet is posting ready status",
                      "lastHeartbeatTime": ts, "lastTransitionTime": ts}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "architecture": "amd64", "bootID": "", "machineID": "", "systemUUID": "",
                    "containerRuntimeVersion": "containerd://2.1.4",
                    "kernelVersion": "6.8.0", "kubeProxyVersion": version, "kubeletVersion": version,
                    "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)",
                },
            },
        })
    return out
