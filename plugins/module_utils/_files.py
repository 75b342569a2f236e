# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file a module writes only when its content changes (a rerun reports no change; check mode writes nothing)."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError


def write_if_changed(dest: str, text: str, check_mode: bool, option: str = "dest") -> tuple[bool, str]:
    """Write TEXT to DEST unless it already holds it: (changed, the content before, "" when none). An
    OptionError names OPTION when DEST cannot be read or written."""
    try:
        with open(dest, encoding="utf-8") as handle:
            before = handle.read()
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise OptionError("%s: cannot read %s (%s)" % (option, dest, exc)) from None
    changed = before != text
    if changed and not check_mode:
        try:
            with open(dest, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise OptionError("%s: cannot write %s (%s)" % (option, dest, exc)) from None
    return changed, before or ""
