#!/usr/bin/python
# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r"""
module: ingress_migration
short_description: Rehearse a move off ingress-nginx; the same requests through the baseline and each target, every difference named
description:
  - Generates a request corpus from the selected Ingresses' rules and annotations (per host and path the path,
    a sub-path, the trailing slash toggled, a case variant, a segment-prefix neighbour, dot segments, a double
    slash, a query string, for regex paths a string that matches only as a prefix; for annotations such as
    rewrite-target, app-root, enable-cors, proxy-body-size, canary-by-header, canary-weight, proxy-read-timeout,
    limit-rps and default-backend the requests that show their effect), plus the requests in O(requests).
  - Sends every request, raw (no normalisation of C(..) or C(//), no redirect followed), to the baseline data plane
    O(samples) times and to each target once, and compares per request the status, C(Location), the backend
    (namespace/Service) that answered, the path and query the backend received, the request headers it received
    and the response headers a rule may set. The backends should run the echo app (a workload's C(app=echo)),
    which says what arrived.
  - A field that differs between the baseline's own samples is noise, not a difference. A request no rule serves
    on either side is "served by neither", never "the same"; a baseline that serves none of the corpus fails.
    A received header that differs in every request is reported once (the data plane's own headers).
  - Where the baseline is the offline kind lab's ingress-nginx image (Debian's nginx), requests whose rule uses
    an annotation that image cannot do as upstream's does are marked "baseline not faithful, not compared".
  - Requests to an Ingress rebuilt from a capture (M(kindlab.ingress.lab_capture)) without something it routes by
    (an annotation that stayed in the cluster, an ExternalName Service; the annotation C(kindlab.ingress/not-rebuilt)
    lists them) are marked "not rebuilt from the capture, not compared".
  - Each difference names its cause (the rule or annotation responsible) and a curl line that reproduces it.
  - Read-only. It sends HTTP requests to the data planes' addresses and changes nothing in the cluster. It must run
    where those addresses are reachable (on this project's kind lab, inside the lab engine's network namespace).
version_added: 0.1.0
author: kindlab.ingress developers (@kindlab)
options:
  baseline:
    description:
      - The data plane the Ingresses are written for (ingress-nginx). C(name) names it in the results; C(namespace)
        finds the one LoadBalancer Service in that namespace (C(service) names it when there are several), or
        C(address) gives an IP with an optional C(:port).
    type: dict
    required: true
  targets:
    description:
      - The data planes to compare against the baseline, each as O(baseline) (for example Traefik with its
        ingress-nginx provider, and Traefik with its own Ingress provider reading the same Ingresses).
    type: list
    elements: dict
    required: true
  requests:
    description:
      - Requests to add to the generated corpus. Each names C(ingress) (C(namespace/name) of a selected Ingress)
        and C(path) (the request target, query included); optional C(host) (default the Ingress's first rule's),
        C(method), C(headers), C(body_size) (bytes), C(repeat) and C(name).
    type: list
    elements: dict
    default: []
  expected:
    description:
      - The differences the caller expects; each a mapping of regular expressions over C(target), C(ingress),
        C(kind) (of request), C(request) (its target), C(field) and C(cause); keys left out match anything.
        A difference none matches, or an expectation no difference matches, fails the rehearsal.
    type: list
    elements: dict
    default: []
  allowed:
    description:
      - Differences the caller accepts, in the shape of O(expected); unlike O(expected), one no difference matches is
        fine. A CI gate lists here the behaviours a move may change (C(playbooks/rehearse.yml)'s C(rehearse_allow)).
    type: list
    elements: dict
    default: []
    version_added: 0.1.0
  same:
    description:
      - Answers the caller expects to be the same on both sides; each a mapping of regular expressions over C(target),
        C(ingress), C(kind), C(request) and C(answer) (what both answered, C(<status> <namespace>/<service>), so that
        two 404s cannot pass for it). One that no such request matches fails the rehearsal.
    type: list
    elements: dict
    default: []
  samples:
    description: How many times each request goes through the baseline (2 or more tells noise from differences).
    type: int
    default: 2
  workers:
    description: Requests in flight at once.
    type: int
    default: 16
  fail_on_difference:
    description: Fail the task when the rehearsal does not pass; with C(false) the result is returned for collection.
    type: bool
    default: true
  fix:
    description:
      - Prove a fix for each behaviour that changes on each target, in the cluster the data planes run in (meant for a
        rehearsal cluster, never a team's own). Each target type's table of fixes proposes edits of the target's
        objects (the Ingresses Traefik's ingress-nginx provider reads, a Gateway target's HTTPRoutes and Gateways), or
        says that no setting of that target reproduces the behaviour, and why. Each fix is applied, the corpus is
        replayed through the target, and the fix is kept only when every request of its behaviour then answers as the
        baseline did and no other request changed; otherwise it is undone. The baseline's answers are those of the
        first replay. Skipped in check mode. The result's C(fixes) says, per target, what each attempt did.
    type: bool
    default: false
    version_added: 0.1.0
  migrated_dir:
    description:
      - With O(fix), the directory that receives, per target (C(<migrated_dir>/<target>/)), the target's objects after
        its kept fixes, one file each, each annotated C(kindlab.ingress/keeps) with the behaviours its fixes keep.
        Empty, none are written.
    type: path
    default: ""
    version_added: 0.1.0
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - kindlab.ingress.read_only
  - kindlab.ingress.cluster
  - kindlab.ingress.selection
"""

EXAMPLES = r"""
- name: Which requests change if shop moves from ingress-nginx to Traefik?
  kindlab.ingress.ingress_migration:
    kubeconfig: "{{ lab_kubeconfig }}"
    namespaces: [shop]
    baseline: {name: ingress-nginx, namespace: ingress-nginx}
    targets:
      - {name: traefik-nginx-provider, namespace: traefik}
      - {name: traefik-ingress-provider, namespace: traefik-native}
    expected:
      - {ingress: ^shop/api$, kind: ^case$, field: ^status$}
    fail_on_difference: false
  register: rehearsal
"""

RETURN = r"""
passed:
  description: No unexpected difference, every expected one seen, and the baseline served part of the corpus.
  returned: success
  type: bool
verdict:
  description: C(unexpected) differences, C(unseen) expectations, C(baseline_idle) and the number of C(differences).
  returned: success
  type: dict
comparison:
  description:
    - Per target (C(targets.<name>)) the C(counts) of outcomes (same, differ, neither, noise, not_faithful), the C(rows)
      (one per request, with its outcome, differences and their causes, both answers and curl lines where they differ)
      and the differences seen C(everywhere).
  returned: success
  type: dict
corpus:
  description: The requests sent, each with its kind, rule, Ingress, method, target and headers.
  returned: success
  type: list
  elements: dict
fixes:
  description:
    - With O(fix), per target, the C(attempts) (one per behaviour, most requests first, each with its C(outcome)
      (closed, its cause gone while another remains, closed by an earlier fix, closed by a later fix, its cause gone
      after a later fix, not closed, changed other requests, refused by the API server, no setting of the target
      reproduces it, no fix known), what it
      C(says), the objects it edited, and for a closed one the C(curl) pair to re-check it), how many behaviours are
      C(kept) by a proven fix and how many C(remain), the C(counts) after the last kept fix, and the C(migrated) files.
  returned: success
  type: dict
seconds:
  description: How long generating the corpus, the replay, proving the fixes and the whole rehearsal took.
  returned: success
  type: dict
  sample: {corpus: 0.01, replay: 4.2, total: 4.6}
"""

from ansible_collections.kindlab.ingress.plugins.module_utils._args import CLUSTER_ARGS, SELECTION_ARGS, with_args
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.runner import run_ingress_migration


def main() -> None:
    KindlabModule(
        argument_spec=with_args(
            CLUSTER_ARGS, SELECTION_ARGS,
            baseline={"type": "dict", "required": True},
            targets={"type": "list", "elements": "dict", "required": True},
            requests={"type": "list", "elements": "dict", "default": []},
            expected={"type": "list", "elements": "dict", "default": []},
            same={"type": "list", "elements": "dict", "default": []},
            allowed={"type": "list", "elements": "dict", "default": []},
            samples={"type": "int", "default": 2},
            workers={"type": "int", "default": 16},
            fail_on_difference={"type": "bool", "default": True},
            fix={"type": "bool", "default": False},
            migrated_dir={"type": "path", "default": ""},
        ),
    ).run(run_ingress_migration)


if __name__ == "__main__":
    main()
