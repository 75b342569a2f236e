"""Does http_probe's continuous mode hold its rate? (issue 24: within 5 % at 20 requests/s for a
60 s window.)

    .venv/bin/python benchmarks/probe_rate_bench.py [--rate 20] [--duration 60] [--latency 0] [--timeout 5]
                                                   [--transport host|loop] [--tolerance 5]

Starts an HTTP server on 127.0.0.1 (port 0), in a process of its own so it does not share the
probe's interpreter, that answers like the lab's test app (`pod: NAME`, two names in turn,
after --latency seconds; with --latency above --timeout every request times out, as to a
stale endpoint's dead address, and the rate must hold all the same), then runs the continuous probe
against it through the module's own code path (probe_from_module), with the host transport
(open_url from a thread pool) or, with --transport loop, the bash loop the module runs inside a
kind node, here without `docker exec` (it needs bash 5 and curl). Prints the requested and the
achieved rate (the intervals between the first and the last request's start), the deviation in
%, requests sent against the ticks scheduled, failures, and PASS or FAIL against the tolerance.
Exit status 0 on PASS, 1 on FAIL.
"""
from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / ".collections"))

from ansible.module_utils.six.moves.urllib.error import HTTPError  # noqa: E402
from ansible.module_utils.urls import open_url  # noqa: E402

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import probe_from_module  # noqa: E402

PODS = ("test-6d4cf56db6-abcde", "test-6d4cf56db6-fghij")


def serve(latency: float, ports: Any) -> None:
    """The test app (in its own process): `pod: NAME` and its namespace, the two pods in turn.
    Sends its port through `ports`, then serves until terminated."""
    served = [0]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            with lock:
                served[0] += 1
                pod = PODS[served[0] % len(PODS)]
            if latency > 0:
                time.sleep(latency)
            body = ("pod: %s\nnamespace: one\n" % pod).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the probe gave up (its timeout)
                pass

        def log_message(self, *_args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.request_queue_size = 256
    ports.put(httpd.server_address[1])
    httpd.serve_forever(poll_interval=0.1)


def local_exec(argv: list[str]) -> tuple[int, str, str]:
    """`docker exec NODE CMD...` run here as CMD... (the loop needs bash and curl, not a node)."""
    if argv[1:2] == ["exec"]:
        argv = argv[3:]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def never(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("not used by a probe by url")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second (default 20)")
    parser.add_argument("--duration", type=float, default=60.0, help="window in seconds (default 60)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the server takes per answer (default 0)")
    parser.add_argument("--timeout", type=float, default=5.0, help="the probe's timeout per request (default 5)")
    parser.add_argument("--transport", choices=("host", "loop"), default="host",
                        help="host: open_url from a thread pool; loop: the via-node bash loop, run here (default host)")
    parser.add_argument("--tolerance", type=float, default=5.0, help="allowed deviation in %% (default 5)")
    args = parser.parse_args()

    ports: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(args.latency, ports), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    params: dict[str, Any] = {
        "url": "http://app.lab.invalid/", "connect_to": ["app.lab.invalid:80:127.0.0.1:%d" % port],
        "rate": args.rate, "duration": args.duration, "timeout": args.timeout, "max_failures": 0,
        "via": "node" if args.transport == "loop" else "host", "node": "local-bash", "docker_binary": "docker",
    }
    print("probe_rate_bench: %s transport, %g requests/s for %g s against 127.0.0.1:%d (answers after %g s, timeout %g s)"
          % (args.transport, args.rate, args.duration, port, args.latency, args.timeout), flush=True)
    started = time.monotonic()
    try:
        result = probe_from_module(params, make_client=never, open_url=open_url, http_error=HTTPError,
                                   run_command=local_exec, get_bin_path=lambda _name: "docker")
    finally:
        server.terminate()
        server.join(10)
    wall = time.monotonic() - started
    cont = result["continuous"]
    requested, achieved = float(cont["rate_requested"]), float(cont["rate_achieved"])
    deviation = (achieved - requested) / requested * 100 if requested else float("inf")
    sent_dev = (cont["sent"] - cont["scheduled"]) / cont["scheduled"] * 100 if cont["scheduled"] else float("inf")
    ok = abs(deviation) <= args.tolerance and abs(sent_dev) <= args.tolerance
    print("requested rate   %.3f /s" % requested)
    print("achieved rate    %.3f /s" % achieved)
    print("deviation        %+.3f %% (tolerance %g %%)" % (deviation, args.tolerance))
    print("sent / scheduled %d / %d (%+.2f %%), answered %d, failed %d"
          % (cont["sent"], cont["scheduled"], sent_dev, cont["answered"], cont["failed_count"]))
    pool = "thread pool of up to %s" % cont["workers"] if "workers" in cont else "one bash loop, no thread pool"
    print("window           %.3f s measured, %.3f s wall; backends %s; %s" % (cont["elapsed"], wall, cont["backends"], pool))
    if cont["failed_count"]:
        print("first failures   %s" % cont["failures"][:3])
    print("%s: rate within %g %% of %g/s" % ("PASS" if ok else "FAIL", args.tolerance, requested))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
