"""A JSONField that decodes with orjson, for the mirror's and the run log's columns: a
detail page's owner tree reads a hundred pod bodies, and the stdlib's decoder was a tenth
of that page's CPU."""

from __future__ import annotations

from typing import Any

import orjson
from django.db import models


class JSONField(models.JSONField):
    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if self.decoder is None and isinstance(value, str):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass  # what orjson refuses (NaN, integers beyond 64 bits): the stdlib's way
        return super().from_db_value(value, expression, connection)

    def deconstruct(self) -> Any:
        # Migrations see Django's field: the column and its type are the same.
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
