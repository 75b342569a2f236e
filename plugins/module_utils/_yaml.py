# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PyYAML, guarded: it ships with ansible-core, but a module's import must not fail without
it (ansible-test's import check runs without it). Modules check HAS_YAML before use."""
from __future__ import annotations

try:
    import yaml
    from yaml import YAMLError
except ImportError:
    yaml = None
    HAS_YAML = False

    class YAMLError(Exception):  # type: ignore[no-redef]
        """Stand-in so except clauses stay valid without PyYAML."""
else:
    HAS_YAML = True

__all__ = ["HAS_YAML", "YAMLError", "yaml"]
