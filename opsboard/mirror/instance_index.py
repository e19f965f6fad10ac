"""An index on the `app.kubernetes.io/instance` label of mirrored objects.

Controllers list a CR's pods by its labels, and the instance label tells CRs of one
namespace apart (controllers.ownership.owned_labels). Without an index each such list read
every pod of the namespace and parsed its labels: a reconcile cost grew with the fleet. The
index is on a JSON expression, which each database spells its own way; the query that uses
it must spell it the same way, so both live here.
"""

from __future__ import annotations

from typing import Any

from controllers.ownership import INSTANCE_LABEL

NAME = "mirror_kubeobject_instance"
_EXPRESSION = {
    "sqlite": f"json_extract(labels, '$.\"{INSTANCE_LABEL}\"')",
    "postgresql": f"(labels ->> '{INSTANCE_LABEL}')",
}


def create_sql(vendor: str, table: str) -> str:
    return f"CREATE INDEX {NAME} ON {table} (kind, namespace, {_EXPRESSION[vendor]})"


def select_sql(vendor: str, table: str, columns: str) -> str:
    """The rows of one kind and namespace whose instance label is the parameter's."""
    # Without statistics (no ANALYZE), SQLite may prefer the unique index on the name.
    hint = f" INDEXED BY {NAME}" if vendor == "sqlite" else ""
    return (
        f"SELECT {columns} FROM {table}{hint} WHERE kind = %s AND namespace = %s"
        f" AND {_EXPRESSION[vendor]} = %s AND api_version = %s ORDER BY name"
    )


def supported(vendor: str) -> bool:
    return vendor in _EXPRESSION


def create(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    if supported(vendor):
        table = apps.get_model("mirror", "KubeObject")._meta.db_table
        schema_editor.execute(create_sql(vendor, table))


def drop(apps: Any, schema_editor: Any) -> None:
    if supported(schema_editor.connection.vendor):
        schema_editor.execute(f"DROP INDEX IF EXISTS {NAME}")
