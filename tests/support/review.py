"""The reviewed patch as a person goes through it: the form's Review (a dry run), then
Apply, which posts back the hidden fields the review rendered."""

from __future__ import annotations

import re
from typing import Any

from django.test import Client

_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def hidden_fields(html: str) -> dict[str, str | list[str]]:
    """The hidden inputs as a browser posts them: a name given more than once (the review's
    `reviewed` paths) with each of its values."""
    fields: dict[str, list[str]] = {}
    for name, value in _HIDDEN.findall(html):
        fields.setdefault(name, []).append(value)
    return {name: values[0] if len(values) == 1 else values for name, values in fields.items()}


def review(
    client: Client, url: str, form: dict[str, Any], **headers: Any
) -> tuple[str, dict[str, str | list[str]]]:
    """Posts the patch form of the CR page at `url`; returns the review and its hidden fields."""
    html = client.post(url + "patch/", form, **headers).content.decode()
    return html, hidden_fields(html)


def review_and_apply(client: Client, url: str, form: dict[str, Any], **headers: Any) -> str:
    """Reviews, then applies what the review showed; returns Apply's answer."""
    _, hidden = review(client, url, form, **headers)
    return client.post(url + "patch/apply/", hidden, **headers).content.decode()
