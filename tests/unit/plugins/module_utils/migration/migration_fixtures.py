"""Ingress objects as the API returns them, for the migration tests."""
from __future__ import annotations


def ingress(name: str, host: str | None, paths: list[tuple[str, str]], annotations: dict[str, str] | None = None,
            ns: str = "shop") -> dict:
    rule: dict = {"http": {"paths": [{"path": p, "pathType": t, "backend": {"service": {"name": name, "port": {"number": 80}}}}
                                     for p, t in paths]}}
    if host:
        rule["host"] = host
    return {"metadata": {"namespace": ns, "name": name,
                         "annotations": {"nginx.ingress.kubernetes.io/" + k: v for k, v in (annotations or {}).items()}},
            "spec": {"rules": [rule]}}
