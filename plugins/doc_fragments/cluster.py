# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations


class ModuleDocFragment:
    # Connection to the cluster, shared by every module that talks to the Kubernetes API.
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to the kubeconfig file of the cluster.
      - When omitted, the kubernetes client's default applies (C(KUBECONFIG), then C(~/.kube/config)).
    type: path
  context:
    description:
      - Name of the kubeconfig context to use. The kind and twin providers name it C(kind-<cluster name>).
      - When omitted, the kubeconfig's current context is used.
    type: str
requirements:
  - kubernetes >= 31 (Python package)
"""

    # Waiting for what the module created, shared by modules that create workloads.
    WAIT = r"""
options:
  wait:
    description:
      - Wait until what the module created is ready before returning.
    type: bool
    default: true
  wait_timeout:
    description:
      - How many seconds to wait before failing with an error that names what was not ready and its last state.
      - A pod that will not start by waiting (a container in C(CrashLoopBackOff), C(ImagePullBackOff), C(ErrImagePull),
        C(InvalidImageName), C(CreateContainerConfigError), C(CreateContainerError) or C(RunContainerError)) fails the
        wait at once, with the pod, the container, the kubelet's reason, the last exit code and the last log lines.
        C(RunContainerError) counts from the second refusal on, since the kubelet starts a container again after a
        runtime's one-off failure.
    type: int
    default: 300
"""
