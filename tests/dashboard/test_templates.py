"""The templates as Django reads them."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_no_comment_spans_lines() -> None:
    """Django's `{# #}` ends at its line: one left open is shown on the page as text (the
    list pages once showed theirs). Longer ones take {% comment %}."""
    open_comments = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\{#(?!.*#\})", line)
    ]
    assert list(TEMPLATES.rglob("*.html")), "no templates found"
    assert open_comments == []
