"""The report verify wrote on a broken lab (tests/broken_lab): every file there, each absence a verdict naming it.

    python tests/broken_lab/check_report.py VERIFY_DIR [--gateway-api absent|any]

The lab is scenarios/missing-publish-service.yml built with build.yml (nothing expects controller
two to crash, so lab.yml stops at the controllers, before the workloads) and verified with
verify.yml. Used by the molecule scenario twin_broken_lab and by hack/test-kind.sh on kind. Prints
each verdict it checks; exits 1 naming the first that is not what a user must read.

--gateway-api absent (the twin's new cluster) requires the Gateways' verdict to say the cluster has no
Gateway API CRDs; any (kind's shared cluster keeps the CRDs an earlier scenario applied) also takes
"the lab's namespaces hold no Gateway".
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

# (check, subject) -> what its observed text must say
EXPECTED = {
    ("controllers", "two/ingress"): r"CrashLoopBackOff.*no service with name ingress-nginx-missing",
    ("reachability", "one/test"): r"^fail: could not probe: ingress: Ingress one/test not found \(the lab's controllers did not "
                                  r"all start - two/ingress: cannot start: .*so the build stopped before the workloads\)$",
    ("reachability", "one/test steadily"): r"^fail: could not probe: ingress: Ingress one/test not found \(the lab's controllers",
    ("status", "two/test"): r"^fail: not observed \(no such Ingress selected\) \(the lab's controllers did not all start",
    ("gateways", "(could not run)"): r"^fail: no Gateway watched: the cluster does not serve Gateway API \(its CRDs are not installed\)$",
    ("routes", "(could not run)"): r"^fail: no HTTPRoute watched: the cluster does not serve Gateway API \(its CRDs are not installed\)$",
    ("actions", "one/test ships"): r"^fail: Deployment one/test not found",
}


CRDS_KEPT = {
    ("gateways", "(could not run)"): r"^fail: no Gateway watched: (the cluster does not serve Gateway API \(its CRDs are not installed\)"
                                     r"|the lab's namespaces hold no Gateway)$",
    ("routes", "(could not run)"): r"^fail: no HTTPRoute watched: (the cluster does not serve Gateway API \(its CRDs are not installed\)"
                                   r"|the lab's namespaces hold no HTTPRoute)$",
}


def main(verify_dir: str, gateway_api: str) -> int:
    where = Path(verify_dir)
    expected = EXPECTED | (CRDS_KEPT if gateway_api == "any" else {})
    missing = [name for name in ("report.json", "summary.md", "report.html") if not (where / name).is_file()]
    if missing:
        print("broken lab: FAIL: verify wrote no %s in %s" % (", ".join(missing), where))
        return 1
    report = json.loads((where / "report.json").read_text())
    unmet = {(v["check"], v["subject"]): v["observed"] for v in report["unmet"]}
    summary = (where / "summary.md").read_text()
    for key, pattern in expected.items():
        observed = unmet.get(key)
        if observed is None or not re.search(pattern, observed, re.DOTALL):
            print("broken lab: FAIL: %s %s: expected an unmet verdict matching %r, got %r" % (key[0], key[1], pattern, observed))
            return 1
        if "| %s | %s |" % key not in summary:
            print("broken lab: FAIL: summary.md has no row for %s %s" % key)
            return 1
        print("%-13s %-20s %s" % (key[0], key[1], observed[:160]))
    if report["passed"]:
        print("broken lab: FAIL: the report passed")
        return 1
    print("broken lab: PASS: report.json, summary.md and report.html written; %d verdicts, each absence named" % len(report["verdicts"]))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and (args[1] != "--gateway-api" or args[2] not in ("absent", "any"))):
        sys.exit(__doc__)
    sys.exit(main(args[0], args[2] if len(args) == 3 else "absent"))
