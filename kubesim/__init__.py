"""kubesim: a local Kubernetes API server emulator serving the real REST API over HTTP."""

from __future__ import annotations

__all__ = ["ApiError", "Store"]

from kubesim.errors import ApiError
from kubesim.store import Store
