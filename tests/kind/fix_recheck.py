"""Every fix a rehearsal calls proven, re-checked by hand on the rehearsal cluster it was proven in (kept with
rehearse_keep), with the target's migrated manifests applied and the attempt's own curl pair.

    fix_recheck.py REHEARSE_DIR KIND_LAB KUBECONFIG

Target by target: its migrated manifests are applied as they are (kubectl apply --server-side: the API server
must take them), then for each closed attempt (every request of it answers the same) both curl lines run in the
lab's network namespace (KIND_LAB exec) until they agree on the status, the Location, which Service answered and
what path it received (the echo backend's JSON), and the headers it received and answered where the attempt's
behaviour differed in them (an Authorization a basic auth must not pass on, its WWW-Authenticate), for up to 15 s
while the data plane takes the manifests up.
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


def main(directory: str, kind_lab: str, kubeconfig: str) -> int:
    base = Path(directory)
    migration = json.loads((base / "verify" / "report.json").read_text())["results"]["migration"]
    checks = []
    for target, proven in sorted(migration["fixes"].items()):
        folder = base / "migrated" / target
        if list(folder.glob("*.yaml")):
            run = subprocess.run([kind_lab, "exec", "kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side",
                                  "--force-conflicts", "-f", str(folder)], capture_output=True, text=True, timeout=120, check=False)
            checks.append(("%s: its migrated manifests applied as they are (%s)" % (
                target, re.sub(r"\s+", " ", (run.stderr or run.stdout).strip())[:160]), run.returncode == 0))
        for a in proven["attempts"]:
            if a["outcome"] != "closed":
                continue
            deadline = time.monotonic() + 15
            got = [answer(kind_lab, line, a.get("fields") or []) for line in a["curl"]]
            while (got[0] != got[1] or got[0][0] == "no answer") and time.monotonic() < deadline:
                time.sleep(1.5)
                got = [answer(kind_lab, line, a.get("fields") or []) for line in a["curl"]]
            checks.append(("%s: %s, by hand: %s" % (target, a["responsible"], " vs ".join("/".join(g) for g in got)),
                           got[0] == got[1] and got[0][0] != "no answer"))
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
