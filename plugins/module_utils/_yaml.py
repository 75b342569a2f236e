# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PyYAML, guarded: it ships with ansible-core, but a module's import must not fail without
it (ansible-test's import check runs without it). Modules declare it (KindlabModule(requires=("PyYAML",))) before use."""
from __future__ import annotations

import traceback

YAML_IMPORT_ERROR: str | None
try:
    import yaml
    from yaml import YAMLError
except ImportError:
    yaml = None
    YAML_IMPORT_ERROR = traceback.format_exc()

    class YAMLError(Exception):  # type: ignore[no-redef]
        """Stand-in so except clauses stay valid without PyYAML."""
else:
    YAML_IMPORT_ERROR = None

__all__ = ["YAML_IMPORT_ERROR", "YAMLError", "yaml"]
