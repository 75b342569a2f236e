"""Checks of the rehearsal as a CI gate on a team's manifests (hack/test-kind.sh, tests/kind/team/manifests):
every behaviour allowed but the Gateway API target's answer for the store's default backend, so the run must fail
naming that one Ingress, junit.xml must have one failing case for it and the others passing, and the rest of the
rehearsal must have run as it must (captured from files, the chart's ingress-nginx as the baseline, the round trip).
The run proves fixes too (rehearse_fix): one attempt per behaviour, the cart's canary by header pattern and by cookie
kept (an HTTPRoute of the migrated manifests carries them); tests/kind/fix_recheck.py re-sends their curl pairs.

    python tests/kind/gate_check.py RC REHEARSE_LOG REHEARSAL_DIR
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml
from rehearsal_check import KEPT

KEEPS = "kindlab.ingress/keeps"  # the annotation each migrated object says its behaviours in (fixes/base.py)


def main(rc: str, log_path: str, directory: str) -> int:
    base = Path(directory)
    log = Path(log_path).read_text()
    captured = yaml.safe_load((base / "captured.yml").read_text())
    report = json.loads((base / "verify" / "report.json").read_text())
    suite = ET.parse(base / "verify" / "junit.xml").getroot()
    failing = [c for c in suite.findall("testcase") if c.find("failure") is not None]
    proven = report["results"]["migration"].get("fixes", {}).get("gateway-api", {"attempts": []})
    kept = {a["responsible"] for a in proven["attempts"] if a["outcome"] in KEPT and a.get("objects") and a.get("curl")}
    pattern = [a for a in proven["attempts"] if a["responsible"] == "nginx.ingress.kubernetes.io/canary-by-header"
               and "by its pattern" in a.get("says", "")]
    migrated = sorted((base / "migrated" / "gateway-api").glob("*.yaml"))
    rows = [r for body in report["results"]["migration"]["comparison"]["targets"].values() for r in body["rows"]]
    checks = [
        ("the run fails (rc %s)" % rc, rc not in ("", "0")),
        ("it fails on the gate alone, naming the one Ingress no allowance accepts",
         "1 Ingress(es) change in ways rehearse_allow does not allow" in log and "gateway-api: store/not-found" in log
         and "the rehearsal did not run as it must; see" not in log),
        ("captured from the files: the chart's ingress-nginx for class nginx is the baseline, no Secret kept",
         [(c["namespace"], c["release"]) for c in captured["lab_controllers"]] == [("ingress-nginx", "ingress-nginx")]
         and "not-for-the-rehearsal" not in (base / "captured.yml").read_text()),
        ("the rebuild captures back as the files are", "the rebuild captures back as the cluster was" in log),
        ("junit.xml: one case per behaviour, the one failing that of store/not-found on gateway-api",
         len(suite.findall("testcase")) >= 4 and len(failing) == 1 and failing[0].get("classname") == "rehearsal.gateway-api"
         and "store/not-found" in failing[0].get("name", "") and suite.get("failures") == "1"),
        ("fixes from the files: one attempt per behaviour, each with an outcome (%d)" % len(proven["attempts"]),
         bool(proven["attempts"]) and proven.get("kept", -1) + proven.get("remain", -1) == len(proven["attempts"])),
        ("every behaviour has a fix or the reason there is none (no 'no fix known': %s)"
         % [a["responsible"] for a in proven["attempts"] if a["outcome"] == "no fix known"],
         not [a for a in proven["attempts"] if a["outcome"] == "no fix known"]),
        ("the cart's canary kept by its header pattern and its cookie (%s)" % ", ".join(sorted(kept)),
         {"nginx.ingress.kubernetes.io/canary-by-header", "nginx.ingress.kubernetes.io/canary-by-cookie"} <= kept
         and bool(pattern)),
        ("the migrated manifests: an HTTPRoute that says which behaviours it keeps",
         any("kind: HTTPRoute" in p.read_text() and "cart" in p.read_text() and KEEPS in p.read_text() for p in migrated)),
        ("no difference unexplained", not [d for r in rows for d in r.get("differences") or []
                                           if d["cause"].startswith("unexplained")]),
    ]
    failed = 0
    for name, ok in checks:
        print("%s  %s" % ("ok  " if ok else "FAIL", name))
        failed += not ok
    print("gate_check: %d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
