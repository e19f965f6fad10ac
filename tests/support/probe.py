"""What a test can only see from a process of its own: a snippet run in a fresh interpreter
(a GC freeze, for one, would otherwise hold the test process's own objects)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def probe(code: str, *args: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Runs `code` with `args` at the repository's root; returns the JSON object it printed
    last (other lines, a server's own, are skipped)."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env={**os.environ, **(env or {})},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    found: dict[str, Any] = json.loads(lines[-1])
    return found
