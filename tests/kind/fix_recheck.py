"""Every fix a rehearsal calls proven, re-checked by hand on the rehearsal cluster it was proven in (kept with
rehearse_keep), with the target's migrated manifests applied and the attempt's own curl pair.

    fix_recheck.py REHEARSE_DIR KIND_LAB KUBECONFIG

First every closed attempt's baseline curl line runs (every request of it answers the same, by its fix or an
earlier one), with the cluster as the rehearsal left it: the baseline reads the same Ingresses the migrated
manifests edit. Then target by target: its migrated manifests are applied as they are (kubectl apply
--server-side: the API server must take them) and the objects its removed.txt names deleted (made again after
its checks), and each attempt's target curl line runs in the lab's network namespace (KIND_LAB exec) until it
agrees with the baseline's on the status, the Location, which Service answered and what path it received (the
echo backend's JSON), and the headers it received and answered where the attempt's behaviour differed in them (an
Authorization a basic auth must not pass on, its WWW-Authenticate), for up to 15 s while the data plane takes the
manifests up; a repeated request (a canary's weight) agrees on which Services answered.
Prints one line per check; exit 1 when any fails.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence


RESOURCES = {"Ingress": "ingresses.networking.k8s.io"}


def answer(kind_lab: str, line: str, fields: Sequence[str] = ()) -> tuple[str, ...]:
    out = subprocess.run([kind_lab, "exec", "bash", "-c", line], capture_output=True, text=True, timeout=60, check=False).stdout
    head, _sep, body = out.replace("\r\n", "\n").partition("\n\n")
    status = head.split("\n", 1)[0].split(" ")[1] if head.startswith("HTTP") else "no answer"
    location = next((h.split(":", 1)[1].strip() for h in head.split("\n") if h.lower().startswith("location:")), "")
    echo = {}
    try:
        echo = json.loads(body)
    except ValueError:
        pass
    received = {str(k).lower(): ", ".join(v) if isinstance(v, list) else str(v) for k, v in (echo.get("headers") or {}).items()}
    answered = {h.split(":", 1)[0].strip().lower(): h.split(":", 1)[1].strip() for h in head.split("\n")[1:] if ":" in h}
    headers = tuple("%s=%s" % (f, (received if f.startswith("received.") else answered).get(f.split(".", 1)[1].lower(), ""))
                    for f in fields if f.startswith(("received.", "header.")))
    return (status, location, str(echo.get("namespace", "")), str(echo.get("service", "")), str(echo.get("path", ""))) + headers


def kubectl(kind_lab: str, kubeconfig: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([kind_lab, "exec", "kubectl", "--kubeconfig", kubeconfig] + list(args), input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


def answer_of(kind_lab: str, line: str, fields: Sequence[str]) -> tuple[str, ...]:
    """What LINE answers; a repeated request's (`for i in $(seq N); do curl ...; done`, a canary's weight), which
    Services answered its N requests."""
    loop = _LOOP.match(line)
    if not loop:
        return answer(kind_lab, line, fields)
    count, one = loop.groups()
    out = subprocess.run([kind_lab, "exec", "bash", "-c", "for i in $(seq %s); do %s; echo; done" % (count, one)],
                         capture_output=True, text=True, timeout=120, check=False).stdout
    services = sorted({m.group(1) for m in re.finditer(r'"service":\s*"([^"]*)"', out)})
    return ("served by " + ",".join(services) if services else "no answer",)


_LOOP = re.compile(r"for i in \$\(seq (\d+)\); do (curl .*?) -o /dev/null -w '%\{http_code\}\\n'; done")


def main(directory: str, kind_lab: str, kubeconfig: str) -> int:
    base = Path(directory)
    migration = json.loads((base / "verify" / "report.json").read_text())["results"]["migration"]
    closed_attempts = {t: [a for a in p["attempts"] if a["outcome"] in ("closed", "closed by an earlier fix", "closed by a later fix")]
                       for t, p in migration["fixes"].items()}
    # the baseline's answers first, as the rehearsal left the cluster: the baseline reads the same Ingresses, which
    # the migrated manifests edit and their removed.txt deletes
    baseline = {(t, i): answer_of(kind_lab, a["curl"][0], a.get("fields") or [])
                for t, attempts in closed_attempts.items() for i, a in enumerate(attempts)}
    checks = []
    for target, proven in sorted(migration["fixes"].items()):
        folder = base / "migrated" / target
        if list(folder.glob("*.yaml")):
            run = kubectl(kind_lab, kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", str(folder))
            checks.append(("%s: its migrated manifests applied as they are (%s)" % (
                target, re.sub(r"\s+", " ", (run.stderr or run.stdout).strip())[:160]), run.returncode == 0))
        kept = []
        for name in proven.get("removed") or []:  # what a kept fix deleted (migrated/<target>/removed.txt)
            kind, _sp, key = name.partition(" ")
            namespace, _sl, short = key.partition("/")
            resource = RESOURCES.get(kind, kind.lower())
            kept.append(kubectl(kind_lab, kubeconfig, "get", "-n", namespace, resource, short, "-o", "json").stdout)
            run = kubectl(kind_lab, kubeconfig, "delete", "-n", namespace, resource, short)
            listed = name in (folder / "removed.txt").read_text().splitlines() if (folder / "removed.txt").exists() else False
            checks.append(("%s: %s deleted as its removed.txt says (%s)" % (target, name, (run.stderr or run.stdout).strip()[:120]),
                           run.returncode == 0 and listed))
        for i, a in enumerate(closed_attempts[target]):
            want = baseline[(target, i)]
            deadline = time.monotonic() + 15
            got = answer_of(kind_lab, a["curl"][1], a.get("fields") or [])
            while (got != want or got[0] == "no answer") and time.monotonic() < deadline:
                time.sleep(1.5)
                got = answer_of(kind_lab, a["curl"][1], a.get("fields") or [])
            checks.append(("%s: %s, by hand: %s" % (target, a["responsible"], " vs ".join("/".join(g) for g in (want, got))),
                           got == want and got[0] != "no answer"))
        for obj in kept:  # made again for the targets after it, which read the same Ingresses
            made = json.loads(obj)
            for k in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
                made["metadata"].pop(k, None)
            kubectl(kind_lab, kubeconfig, "apply", "-f", "-", stdin=json.dumps(made))
    closed = sum(1 for name, _ok in checks if ", by hand: " in name)
    checks.append(("at least one fix proven closed was re-checked (%d)" % closed, closed > 0))
    failed = 0
    for name, ok in checks:
        failed += not ok
        print("%s  %s" % ("ok  " if ok else "FAIL", name))
    print("fix_recheck: %d passed, %d failed" % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
