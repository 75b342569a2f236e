# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Objects as dicts: an object's short name and a LabelSelector as a query string."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import ref_of, selector_string


def test_selector_string_covers_match_expressions() -> None:
    sel = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "t", "operator": "In", "values": ["x", "y"]}, {"key": "u", "operator": "NotIn", "values": ["z"]},
        {"key": "v", "operator": "Exists"}, {"key": "w", "operator": "DoesNotExist"}]}
    assert selector_string(sel) == "a=1,b=2,t in (x,y),u notin (z),v,!w"


def test_ref_of() -> None:
    assert ref_of({"kind": "Ingress", "metadata": {"namespace": "one", "name": "web"}}) == "Ingress one/web"
    assert ref_of({"kind": "IngressClass", "metadata": {"name": "nginx"}}) == "IngressClass nginx"
