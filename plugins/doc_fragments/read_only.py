# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations


class ModuleDocFragment:
    # The attributes of a module that only reads (the verification modules and lab_definition):
    # check mode runs it as is, and there is no state to diff. Use after
    # ansible.builtin.action_common_attributes, which describes these attributes.
    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""
