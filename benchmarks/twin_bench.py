"""Benchmarks of the twin backend (kindlab-twin). Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/twin_bench.py [--skip-lab] [--samples N] [--watch-samples M]

1. lab: wall time of `ansible-playbook playbooks/lab.yml -e lab_verify=false` on the twin
   (lab up + its basic address check; first run, then the idempotent second run), then of
   `playbooks/verify.yml` (every verification check) and `playbooks/teardown.yml`.
   Goal (from the issue, for lab up + basic check): < 30 s.
2. api: latency of get / list (~50 ConfigMaps) / patch (strategic merge) with the `kubernetes`
   Python client against a twin started with `kindlab-twin create cluster` (the background
   process users get).
3. watch: delay from a ConfigMap patch to its MODIFIED event arriving on an open watch.

Everything runs on 127.0.0.1. Twin state goes to a temporary KINDLAB_TWIN_HOME (never
~/.local/state/kindlab-twin), and every cluster and process started here is deleted on exit,
also on errors, Ctrl-C and SIGTERM. Bounded: each step has a time limit and the whole run stops
within TOTAL_BUDGET_S (165 s); it takes about 1 min on an idle 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"
LAB_GOAL_S = 30.0
LAB_NAME = "bench-lab"
API_NAME = "bench-api"
NAMESPACE = "bench"
LIST_SIZE = 50
WARMUP = 20
# Time limits (s). Every step is also cut to what is left of TOTAL_BUDGET_S, keeping LAB_RESERVE_S
# for the steps after it and CLEANUP_S for the final cleanup: the whole run stays under 3 min
# even when a step hangs (a cut step prints fewer samples or rc -9).
TOTAL_BUDGET_S, CLEANUP_S = 165.0, 10.0
TIMEOUT_LAB_UP, TIMEOUT_LAB_AGAIN, TIMEOUT_TEARDOWN = 75.0, 50.0, 25.0
LAB_RESERVE_S = 30.0   # left for the API and watch steps after the lab
TIMEOUT_CREATE = 30.0
API_BUDGET_S = 20.0    # per operation kind; stops sampling early if the twin is very slow
WATCH_EVENT_TIMEOUT = 5.0
REQ_TIMEOUT = 10.0     # any single API request
WATCH_BUDGET_S = 15.0
_DEADLINE = [time.monotonic() + TOTAL_BUDGET_S]  # reset by main()


def left(reserve: float = 0.0) -> float:
    """Seconds left before the overall deadline, minus cleanup and `reserve` (at least 1)."""
    return max(1.0, _DEADLINE[0] - time.monotonic() - CLEANUP_S - reserve)


# --- helpers -------------------------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    """Percentile with linear interpolation between closest ranks (numpy's default)."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def ms(v: float) -> str:
    return f"{v * 1000:8.2f}"


def bench_env(twin_home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["ANSIBLE_COLLECTIONS_PATH"] = str(REPO / ".collections")
    env["KINDLAB_TWIN_HOME"] = str(twin_home)   # isolate from the user's twin clusters
    env.pop("KUBECONFIG", None)                 # never touch the user's kubeconfig
    # Loopback only: no proxy for the twin's 127.0.0.1 API.
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def run_timed(argv: list[str], env: dict[str, str], timeout: float, log: Path) -> tuple[float, int]:
    """Run argv from the repo root in its own process group; (seconds, exit code). On timeout
    the whole group is killed and the code is -9."""
    start = time.perf_counter()
    with open(log, "ab") as out:
        out.write(f"\n$ {' '.join(argv)}\n".encode())
        out.flush()
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            rc = -9
        except BaseException:
            _kill_group(proc)
            raise
    return time.perf_counter() - start, rc


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def cleanup_twins(env: dict[str, str]) -> list[str]:
    """Delete every twin cluster under our private KINDLAB_TWIN_HOME (stops their processes).
    Returns the names of the clusters that were still there."""
    home = Path(env["KINDLAB_TWIN_HOME"])
    if not home.is_dir():
        return []
    left = sorted(d.name for d in home.iterdir() if d.is_dir() and not d.name.startswith("."))
    if left:
        subprocess.run([str(VENV_BIN / "kindlab-twin"), "delete", "clusters", *left], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False)
    return left


# --- 1. lab up / idempotent / teardown ------------------------------------------------------

def bench_lab(env: dict[str, str], tmp: Path) -> list[tuple[str, float, int]]:
    state_dir = tmp / "lab-state"
    log = tmp / "ansible.log"
    # lab_cluster is a mapping: key=value extra vars would pass it as a string, so JSON it is.
    cluster = json.dumps({"lab_cluster": {"name": LAB_NAME, "workers": 0, "kind_config": {}}})
    extra = ["-e", "lab_backend=twin", "-e", cluster, "-e", f"lab_state_dir={state_dir}",
             "-e", "lab_time_scale=60"]
    playbook = str(VENV_BIN / "ansible-playbook")
    results: list[tuple[str, float, int]] = []
    # lab.yml ends with the full verification; the goal is about lab up + its basic check.
    build = [playbook, "playbooks/lab.yml", "-e", "lab_verify=false", *extra]
    try:
        results.append(("lab up (first run)", *run_timed(build, env, min(TIMEOUT_LAB_UP, left(LAB_RESERVE_S + 10)), log)))
        if results[-1][2] == 0:
            results.append(("lab up (idempotent rerun)", *run_timed(build, env, min(TIMEOUT_LAB_AGAIN, left(LAB_RESERVE_S + 10)),
                                                                    log)))
        if results[-1][2] == 0:
            results.append(("verify (all checks)", *run_timed([playbook, "playbooks/verify.yml", *extra], env,
                                                              min(TIMEOUT_LAB_AGAIN, left(LAB_RESERVE_S + 10)), log)))
    finally:
        results.append(("teardown", *run_timed([playbook, "playbooks/teardown.yml", *extra], env,
                                               min(TIMEOUT_TEARDOWN, left()), log)))
    if any(r[2] != 0 for r in results):
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        print(f"  (a playbook failed or timed out; last lines of {log.name}:)\n{tail}", file=sys.stderr)
    return results


# --- 2./3. API latency and watch delay ----------------------------------------------------

def start_api_cluster(env: dict[str, str], tmp: Path) -> Path:
    kubeconfig = tmp / "api-kubeconfig"
    res = subprocess.run([str(VENV_BIN / "kindlab-twin"), "create", "cluster", "--name", API_NAME,
                          "--kubeconfig", str(kubeconfig)], env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=min(TIMEOUT_CREATE, left()), check=False)
    if res.returncode != 0:
        raise RuntimeError(f"kindlab-twin create cluster failed ({res.returncode}): {res.stderr.strip()}")
    return kubeconfig


def sample(fn: Callable[[], Any], n: int, budget: float) -> list[float]:
    for _warm in range(WARMUP):
        fn()
    out: list[float] = []
    deadline = time.perf_counter() + budget
    for _sample in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
        if t0 > deadline:
            break
    return out


def bench_api(core: Any, n: int) -> dict[str, list[float]]:
    from kubernetes import client

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NAMESPACE)))
    for i in range(LIST_SIZE):
        core.create_namespaced_config_map(NAMESPACE, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=f"cm-{i:03d}", labels={"bench": "yes"}),
            data={"index": str(i), "payload": "x" * 256}))
    counter = iter(range(10**9))
    # The generated client picks application/json-patch+json for a dict body unless told.
    smp = "application/strategic-merge-patch+json"
    ops: dict[str, Callable[[], Any]] = {
        "get": lambda: core.read_namespaced_config_map("cm-000", NAMESPACE, _request_timeout=REQ_TIMEOUT),
        f"list ({LIST_SIZE} CMs)": lambda: core.list_namespaced_config_map(NAMESPACE, _request_timeout=REQ_TIMEOUT),
        "patch (strategic)": lambda: core.patch_namespaced_config_map(
            "cm-001", NAMESPACE, {"data": {"n": str(next(counter))}}, _content_type=smp,
            _request_timeout=REQ_TIMEOUT),
    }
    listed = core.list_namespaced_config_map(NAMESPACE)
    if len(listed.items) != LIST_SIZE:  # sanity
        print(f"  warning: list returned {len(listed.items)} ConfigMaps, expected {LIST_SIZE}", file=sys.stderr)
    res = {}
    for i, (name, fn) in enumerate(ops.items()):
        # share what is left fairly with the operations after this one and the watch step
        res[name] = sample(fn, n, min(API_BUDGET_S, left(5) / (len(ops) - i + 1)))
    # Sanity: the patches merged (kept the other keys) and the last one is what the server has.
    data = core.read_namespaced_config_map("cm-001", NAMESPACE).data or {}
    if data.get("index") != "1" or data.get("n") != str(next(counter) - 1):
        print(f"  warning: cm-001 after the patches is unexpected: {sorted(data)} n={data.get('n')}",
              file=sys.stderr)
    return res


def bench_watch(core: Any, n: int) -> dict[str, list[float]]:
    """Sequential patches of one ConfigMap, each awaited on a watch opened beforehand."""
    from kubernetes import client, watch

    name = "watched"
    created = core.create_namespaced_config_map(NAMESPACE, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name), data={"k": "v"}))
    rv = created.metadata.resource_version
    arrivals: dict[int, float] = {}
    cond = threading.Condition()
    w = watch.Watch()
    errors: list[BaseException] = []
    ready = threading.Event()
    stopping = threading.Event()

    def consume() -> None:
        try:
            ready.set()
            for ev in w.stream(core.list_namespaced_config_map, NAMESPACE, resource_version=rv,
                               field_selector=f"metadata.name={name}", timeout_seconds=int(budget) + 10,
                               _request_timeout=budget + 15):
                t = time.perf_counter()
                ann = (ev["raw_object"].get("metadata") or {}).get("annotations") or {}
                if ev["type"] == "MODIFIED" and "bench/seq" in ann:
                    with cond:
                        arrivals[int(ann["bench/seq"])] = t
                        cond.notify_all()
        except BaseException as e:  # reported by the main thread
            if not stopping.is_set():  # Watch.stop() shuts the socket down: an error then is expected
                errors.append(e)
        finally:
            with cond:
                cond.notify_all()

    budget = min(WATCH_BUDGET_S, left())
    th = threading.Thread(target=consume, name="watch", daemon=True)
    th.start()
    ready.wait(5)
    mp = "application/merge-patch+json"

    def patch(seq: int) -> None:
        core.patch_namespaced_config_map(name, NAMESPACE, {"metadata": {"annotations": {
            "bench/seq": str(seq), "bench/ts": f"{time.time():.6f}"}}}, _content_type=mp,
            _request_timeout=REQ_TIMEOUT)

    # Unmeasured: wait until a first patch shows up, so the watch is surely established.
    patch(-1)
    with cond:
        cond.wait_for(lambda: -1 in arrivals or bool(errors) or not th.is_alive(), timeout=WATCH_EVENT_TIMEOUT)
    after_return: list[float] = []
    from_start: list[float] = []
    lost = 0
    deadline = time.perf_counter() + budget
    try:
        for i in range(n):
            t0 = time.perf_counter()
            patch(i)
            t1 = time.perf_counter()
            with cond:
                if not cond.wait_for(lambda: i in arrivals or bool(errors) or not th.is_alive(),
                                     timeout=WATCH_EVENT_TIMEOUT) or i not in arrivals:
                    lost += 1
                    if errors or not th.is_alive():
                        break
                    continue
                ta = arrivals[i]
            after_return.append(ta - t1)
            from_start.append(ta - t0)
            if time.perf_counter() > deadline:
                break
    finally:
        stopping.set()
        w.stop()
        th.join(5)
    if errors:
        print(f"  watch ended with {type(errors[0]).__name__}: {errors[0]}", file=sys.stderr)
    if lost:
        print(f"  warning: {lost} patch event(s) not seen on the watch within {WATCH_EVENT_TIMEOUT}s",
              file=sys.stderr)
    return {"event after patch returned": after_return, "event after patch sent": from_start}


# --- main -----------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--skip-lab", action="store_true", help="skip the ansible-playbook lab timings")
    ap.add_argument("--samples", type=int, default=300, help="samples per API operation (default 300)")
    ap.add_argument("--watch-samples", type=int, default=100, help="patches awaited on the watch (default 100)")
    args = ap.parse_args()
    if args.samples < 1 or args.watch_samples < 1:
        ap.error("--samples and --watch-samples must be >= 1")
    if not (VENV_BIN / "kindlab-twin").exists():
        print(f"{VENV_BIN / 'kindlab-twin'} not found: run `make setup` first", file=sys.stderr)
        return 2
    if not args.skip_lab and not (REPO / ".collections" / "ansible_collections" / "kindlab" / "ingress").exists():
        print(".collections/ansible_collections/kindlab/ingress missing: run `make setup` first", file=sys.stderr)
        return 2

    # Ctrl-C and SIGTERM unwind through the finally blocks below.
    def on_term(*_: Any) -> None:
        raise KeyboardInterrupt

    def on_alarm(*_: Any) -> None:
        raise TimeoutError(f"overall time limit ({TOTAL_BUDGET_S - CLEANUP_S:.0f}s) reached")

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGALRM, on_alarm)  # the hard stop, should a step ignore its own limit
    signal.alarm(int(TOTAL_BUDGET_S - CLEANUP_S) + 1)
    tmp = Path(tempfile.mkdtemp(prefix="kindlab-bench-"))
    env = bench_env(tmp / "twin-home")
    started = time.perf_counter()
    _DEADLINE[0] = time.monotonic() + TOTAL_BUDGET_S
    load_before = os.getloadavg()[0]
    lab: list[tuple[str, float, int]] = []
    api: dict[str, list[float]] = {}
    watch_res: dict[str, list[float]] = {}
    failed = False
    try:
        if not args.skip_lab:
            print("[1/3] lab up x2, verify, teardown with ansible-playbook (twin, time scale 60) ...", flush=True)
            lab = bench_lab(env, tmp)
        print(f"[2/3] API latency, {args.samples} samples per operation ...", flush=True)
        kubeconfig = start_api_cluster(env, tmp)
        from kubernetes import client, config

        api_client = config.new_client_from_config(config_file=str(kubeconfig))
        try:
            core = client.CoreV1Api(api_client)
            api = bench_api(core, args.samples)
            print(f"[3/3] watch delivery delay, {args.watch_samples} sequential patches ...", flush=True)
            watch_res = bench_watch(core, args.watch_samples)
        finally:
            api_client.close()
    except KeyboardInterrupt:
        print("interrupted: cleaning up", file=sys.stderr)
        failed = True
    except Exception as e:  # noqa: BLE001 - report, clean up, print what we have
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        failed = True
    finally:
        signal.alarm(0)
        leftover = cleanup_twins(env)
        stray = [n for n in leftover if n != API_NAME]  # the API cluster is deleted here on purpose
        if stray:
            print(f"note: deleted twin cluster(s) left behind: {stray}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - started

    print()
    # Other work on the machine skews every number here: the load average says how much there was.
    print(f"kindlab-twin benchmark  ({os.cpu_count()} CPUs, Python {sys.version.split()[0]}, total {total:.1f}s, "
          f"1-min load avg {load_before:.2f} before / {os.getloadavg()[0]:.2f} after)")
    if lab:
        print()
        print(f"{'lab (ansible-playbook, twin)':34} {'wall s':>8}  {'rc':>3}  goal")
        for name, secs, rc in lab:
            goal = ""
            if name.startswith("lab up"):
                verdict = "met" if secs < LAB_GOAL_S else "NOT met"
                if rc:
                    verdict = "cut at its time limit" if rc == -9 else "playbook FAILED"
                goal = f"< {LAB_GOAL_S:.0f} s  {verdict}"
            print(f"  {name:32} {secs:8.1f}  {rc:>3}  {goal}")
    for title, res in (("API latency (kubernetes client, ms)", api),
                       ("watch delivery delay (ms)", watch_res)):
        if not res:
            continue
        print()
        print(f"{title:34} {'n':>4} {'p50':>8} {'p99':>8} {'max':>8}")
        for name, v in res.items():
            if v:
                print(f"  {name:32} {len(v):4d} {ms(pct(v, 50))} {ms(pct(v, 99))} {ms(max(v))}")
            else:
                print(f"  {name:32}    0  (no samples)")
        if res is watch_res:
            print("  (negative: the watch thread had decoded the event before the patch call had decoded its reply)")
    return 1 if failed or any(r[2] != 0 for r in lab) else 0


if __name__ == "__main__":
    sys.exit(main())
