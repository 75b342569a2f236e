# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations


class ModuleDocFragment:
    # Which Ingresses a verification module looks at.
    DOCUMENTATION = r"""
options:
  namespaces:
    description: Namespaces to look in; empty means every namespace.
    type: list
    elements: str
    default: []
  names:
    description: Ingress names, or C(namespace/name); empty means every Ingress in the selected namespaces.
    type: list
    elements: str
    default: []
  label_selector:
    description: A Kubernetes label selector (C(app=web), C(tier in (a,b)), C(!legacy)); checked before any request.
    type: str
"""
