#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: http_probe
short_description: Probe an ingress over HTTP, from the host or from inside a kind node
description:
  - Sends HTTP requests with a chosen C(Host) header to a URL, or to the address an Ingress
    currently publishes in its status (looked up again before every attempt, as DNS pointing at
    the status would), until the answer has an expected status (and body), then takes N samples
    and counts which backend answered each.
  - With I(ingress), every answer must come from this cluster - the pod the echo names (the default I(backend_regex))
    in an EndpointSlice of the Ingress's Services before or after the probe, or a Pod of that name in its namespace -
    else the probe fails, in one line, naming the pod and the address (another cluster on the same network holding
    it). With a I(backend_regex) of your own the answers are not checked.
  - I(connect_to) works like curl's C(--connect-to); the request is sent to the mapped peer with
    the original Host header and path. On the twin every LoadBalancer and node address is
    reachable only that way (C(kindlab-twin get connect-to --name CLUSTER), or the
    M(kindlab.ingress.kind_cluster) module's C(connect_to) return).
  - "With I(rate) the probe is continuous instead: it sends I(rate) requests per second for I(duration) seconds on a
    fixed schedule (each request starts on its tick, however long the ones before it take; they may overlap), from the
    first tick on, without waiting for a first good answer. Every failure is returned with its time, its status code
    or error and the backend that answered; the probe passes when at most I(max_failures) requests fail."
  - Proxies are never used. Redirects are not followed (a 308 is reported as 308).
  - Read-only; runs in check mode too, since it changes nothing.
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  url:
    description: The URL to request. Mutually exclusive with I(ingress).
    type: str
  ingress:
    description:
      - The Ingress whose status address to request, as C(namespace/name) or a mapping with
        C(namespace) and C(name); or a list of them. Needs I(kubeconfig)/I(context). Mutually exclusive with I(url).
      - The status is read again before every request. With several addresses (several Ingresses, or
        several entries in one status) they are used in turn, as DNS round-robin over a record built
        from that status (external-dns) would.
    type: raw
  scheme:
    description: Scheme used with I(ingress).
    type: str
    choices: [http, https]
    default: http
  port:
    description: Port used with I(ingress); default 80 for http, 443 for https.
    type: int
  host:
    description:
      - The C(Host) header. Default with I(ingress) its first rule host (if it has one), else the URL's host.
    type: str
  path:
    description: Path (and query) requested with I(ingress).
    type: str
    default: /
  method:
    description: HTTP method.
    type: str
    default: GET
  status:
    description: Status codes that count as success.
    type: list
    elements: int
    default: [200]
  body_regex:
    description: A Python regular expression the body must match (searched, not anchored).
    type: str
  attempts:
    description: Requests until one succeeds. Not used with I(rate) (more than 1 is refused).
    type: int
    default: 1
  interval:
    description: Seconds between attempts.
    type: float
    default: 1
  timeout:
    description: Seconds per request.
    type: float
    default: 10
  samples:
    description:
      - Requests made after the first success; each must succeed too, and each answering backend is counted.
      - Not used with I(rate), where every request of the window is a sample (more than 1 is refused).
    type: int
    default: 1
  rate:
    description:
      - Continuous probing at this many requests per second (above 0, at most 200) for I(duration) seconds.
      - From the host, a pool of up to 1.25 x I(rate) x I(timeout) + 4 threads (at most 256) sends the requests, so the rate
        holds even when every request times out, unless that needs more than 256 (RV(continuous) says so in
        C(rate_achieved)).
      - With I(via=node), one C(docker exec) runs a bash loop in the node container (bash 5, curl and a C(sleep)
        taking fractions, as in kind's node image) that starts each request on its tick in the background; the
        Ingresses' status is read once, at the start of the window.
      - With I(ingress) from the host, the status is read again at most once a second.
    type: float
  duration:
    description: Seconds the continuous window lasts (with I(rate) only; default 60).
    type: float
  max_failures:
    description: Failed requests the continuous window allows (with I(rate) only; default 0).
    type: int
  backend_regex:
    description:
      - Regular expression whose first group names the backend that answered a sample.
      - "The default matches the echo images (C(pod: NAME)); the nginx welcome page counts as C(nginx),
        anything else as C((unmatched))."
    type: str
    default: 'pod: (\S+)'
  connect_to:
    description: curl-style C(HOST:PORT:TARGET_HOST:TARGET_PORT) entries; IPv6 hosts in brackets.
    type: list
    elements: str
    default: []
  connect_to_only:
    description:
      - Dial only through O(connect_to); an address no entry maps counts as refused and is never contacted.
      - Set it for the twin, where only the mapped loopback ports exist (the C(verify) role does).
    type: bool
    default: false
  via:
    description:
      - C(host) sends from the machine running the module; C(node) runs curl inside a kind node
        container with C(docker exec), as a client on the kind network would.
      - The twin has no node containers; there use C(host) with I(connect_to).
    type: str
    choices: [host, node]
    default: host
  node:
    description: Node container for I(via=node); default C(NAME-control-plane) from a C(kind-NAME) I(context).
    type: str
  docker_binary:
    description: The docker CLI used with I(via=node).
    type: str
    default: docker
  validate_certs:
    description: Check TLS certificates (with I(connect_to) the certificate names the original host, not the peer).
    type: bool
    default: true
  fail_on_violation:
    description: Fail the task when the probe does not pass; with C(false) the result is returned for collection.
    type: bool
    default: true
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
"""

EXAMPLES = r"""
- name: The published address of one/test answers 200 within a minute (twin, via connect_to)
  kindlab.ingress.http_probe:
    kubeconfig: "{{ lab_kubeconfig }}"
    ingress: one/test
    attempts: 30
    interval: 2
    # kind_cluster (check_mode: true, registered as `cluster`) read after the lab is up: the twin
    # maps addresses as MetalLB hands them out, so read the mapping when you need it.
    connect_to: "{{ cluster.connect_to }}"

- name: Ten samples through a MetalLB address, with the backend distribution
  kindlab.ingress.http_probe:
    url: http://100.64.0.0/
    host: test.one.example
    samples: 10
    connect_to: [100.64.0.0:80:127.0.0.1:40123]
    fail_on_violation: false
  register: probe

- name: 20 requests a second for a minute while a rollout runs; at most 5 may fail
  kindlab.ingress.http_probe:
    kubeconfig: "{{ lab_kubeconfig }}"
    ingress: one/test
    rate: 20
    duration: 60
    max_failures: 5
    connect_to: "{{ cluster.connect_to }}"
    fail_on_violation: false
  register: window

- name: From inside the kind node (kind only)
  kindlab.ingress.http_probe:
    url: http://100.64.0.1/
    via: node
    node: ingress-lab-control-plane
"""

RETURN = r"""
passed:
  description: Whether an attempt succeeded and every sample after it did too; with O(rate), whether at most O(max_failures) requests failed.
  returned: always
  type: bool
reason:
  description: Why it passed or failed.
  returned: always
  type: str
  sample: got 503 from 100.64.0.0 (expected 200) after 3 attempts
url:
  description: The URL requested last (before connect_to).
  returned: always
  type: str
address:
  description: The address in that URL (the Ingress's status address with I(ingress)).
  returned: always
  type: str
addresses:
  description: Every address requested by the passing attempt and the samples, in first-use order.
  returned: when an attempt passed
  type: list
  elements: str
host:
  description: The Host header sent.
  returned: always
  type: str
attempts:
  description: One entry per attempt with C(time), C(address), C(status), C(elapsed) seconds and C(error).
  returned: always
  type: list
  elements: dict
samples:
  description: One entry per sample with C(time), C(address), C(status), C(elapsed), C(backend) and C(error).
  returned: always
  type: list
  elements: dict
distribution:
  description: Answering backend to number of samples.
  returned: always
  type: dict
  sample: {"test-6d4cf56db6-abcde": 5, "test-6d4cf56db6-fghij": 5}
continuous:
  description:
    - The continuous window (with O(rate)). C(rate_requested) and C(rate_achieved) (requests per second as sent,
      from the intervals between the first and the last request's start), C(duration), C(started) (ISO-8601 UTC),
      C(elapsed), C(scheduled) (ticks in the window), C(sent), C(answered) (requests that got an HTTP answer,
      whatever its status), C(failed_count), C(max_failures), C(backends) (answering backend to count) and
      C(workers) (threads, from the host).
    - C(failures) lists every failed request, in order, with C(seq) (its tick), C(time) (ISO-8601 UTC), C(offset)
      (seconds since the window began), C(address), C(status) (when there was an answer), C(error) (when there was
      none) or C(problem) (why the answer is not the expected one), and C(backend) (who answered, null without an answer).
    - C(per_second) counts the outcomes of the requests that started in each second of the window (C(second) from 0,
      C(outcomes) outcome to count) - C(answered) (as expected), the status code that came instead, C(wrong body),
      C(timed out), C(refused), C(reset) or C(error). report.html draws them.
  returned: when rate is set
  type: dict
  sample: {"rate_requested": 20.0, "rate_achieved": 19.99, "sent": 1200, "answered": 1200, "failed_count": 1,
           "failures": [{"seq": 241, "time": "2026-11-26T10:00:12.050Z", "offset": 12.05, "status": 502,
                         "problem": "got 502 (expected 200)", "backend": "(unmatched)", "address": "100.64.0.0"}],
           "backends": {"test-6d4cf56db6-abcde": 1199, "(unmatched)": 1}}
ingresses:
  description: The Ingresses probed (C(namespace/name)), with O(ingress).
  returned: when ingress is set
  type: list
  elements: str
via:
  description: Where the requests were sent from, C(host) or C(node).
  returned: always
  type: str
  sample: node
node:
  description: The node container curl ran in (with O(via=node)).
  returned: when via is node
  type: str
  sample: ingress-lab-control-plane
"""


from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_http_probe


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS,
            url={"type": "str"},
            ingress={"type": "raw"},
            scheme={"type": "str", "choices": ["http", "https"], "default": "http"},
            port={"type": "int"},
            host={"type": "str"},
            path={"type": "str", "default": "/"},
            method={"type": "str", "default": "GET"},
            status={"type": "list", "elements": "int", "default": [200]},
            body_regex={"type": "str"},
            attempts={"type": "int", "default": 1},
            interval={"type": "float", "default": 1},
            timeout={"type": "float", "default": 10},
            samples={"type": "int", "default": 1},
            backend_regex={"type": "str", "default": r"pod: (\S+)"},
            rate={"type": "float"},
            duration={"type": "float"},
            max_failures={"type": "int"},
            connect_to={"type": "list", "elements": "str", "default": []},
            connect_to_only={"type": "bool", "default": False},
            via={"type": "str", "choices": ["host", "node"], "default": "host"},
            node={"type": "str"},
            docker_binary={"type": "str", "default": "docker"},
            validate_certs={"type": "bool", "default": True},
            fail_on_violation={"type": "bool", "default": True},
        ),
        mutually_exclusive=[("url", "ingress")],
        required_one_of=[("url", "ingress")],
    ).run(run_http_probe)


if __name__ == "__main__":
    main()
