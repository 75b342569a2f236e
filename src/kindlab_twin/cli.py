"""Placeholder entry point; replaced by the twin implementation."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    sys.stderr.write("kindlab-twin: not implemented yet\n")
    return 2
