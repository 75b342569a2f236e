"""The twin's Kubernetes-compatible HTTP API (see server.py)."""
from __future__ import annotations

from .server import ApiError, ApiServer, status_obj

__all__ = ["ApiServer", "ApiError", "status_obj"]
