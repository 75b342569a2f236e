# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sphinx configuration of the collection's static docs site (hack/collection-check.sh builds it
from the reStructuredText that antsibull-docs renders from the modules' and roles' docs).

Built offline and not published: no intersphinx (it would fetch inventories). The few labels
the rendered pages take from Ansible's own documentation become plain links to it; any other
unresolved reference is an error (nitpicky, and sphinx-build runs with -W).
"""
from __future__ import annotations

from typing import Any

from docutils import nodes

project = "kindlab.ingress"
copyright = "kindlab.ingress contributors"  # noqa: A001  (Sphinx's name for it)
extensions = ["sphinx_antsibull_ext"]
pygments_style = "ansible"
highlight_language = "YAML+Jinja"
html_theme = "alabaster"
html_title = "kindlab.ingress"
html_show_sphinx = False
html_use_index = False
html_copy_source = False
default_role = "any"
nitpicky = True

ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/latest/"
EXTERNAL_LABELS = {
    "common_return_values": "reference_appendices/common_return_values.html",
    "ansible_configuration_settings": "reference_appendices/config.html",
    "callback_plugins": "plugins/callback.html",  # the lab_stages callback's page
}


def _external_label(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    target = str(node.get("reftarget", ""))
    if node.get("reftype") != "ref" or target not in EXTERNAL_LABELS:
        return None
    reference = nodes.reference("", "", internal=False, refuri=ANSIBLE_DOCS + EXTERNAL_LABELS[target])
    reference += contnode
    return reference


def setup(app: Any) -> dict[str, Any]:
    app.connect("missing-reference", _external_label)
    return {"parallel_read_safe": True}
