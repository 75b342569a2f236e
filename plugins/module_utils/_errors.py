# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one error model.

Every error the collection raises on purpose derives from KindlabError, so a module catches
exactly one type (see _module.KindlabModule). Errors the user caused with an option or a lab
definition derive from OptionError, which is also a ValueError: the message names the option
or field and what was expected. Errors from the cluster or from a tool (kind, docker, helm, the
Kubernetes API) derive from KindlabError directly.
"""
from __future__ import annotations

from typing import Any


class KindlabError(Exception):
    """An error whose message is meant for the user.

    `details` are extra return values a module adds to its failure (for example what a wait
    last saw); they must be JSON-serialisable and must not use the key `msg`."""

    def __init__(self, *args: Any, **details: Any) -> None:
        super().__init__(*args)
        self.details: dict[str, Any] = details


class OptionError(KindlabError, ValueError):
    """An option or a lab definition field is invalid; the message names it and what was expected."""


class CheckFailed(KindlabError):
    """A verification found a violation and the task was asked to fail on it; `details` hold
    the verification's whole result, so the failed task still returns it."""
