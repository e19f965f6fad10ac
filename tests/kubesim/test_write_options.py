"""A write's query options (fieldManager, dryRun, fieldValidation, force) are checked as
kube-apiserver's handlers check them, before the body: every bad option in one 422 naming
the options' kind. Reads ignore them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from kubernetes import client

from tests.kubesim.support import raw

Api = client.ApiClient
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


def _cms(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def _writes(api: Api, namespace: str, query: str) -> dict[str, Any]:
    """The create, update, merge patch and apply of a ConfigMap with these options, by the
    options' kind: each one's status and message."""
    path = _cms(namespace)
    answers = {
        "CreateOptions": raw(api, "POST", f"{path}?{query}", body={"metadata": {"name": "new"}}),
        "UpdateOptions": raw(api, "PUT", f"{path}/cm?{query}", body={"metadata": {"name": "cm"}}),
        "PatchOptions": raw(api, "PATCH", f"{path}/cm?{query}", body={}, content_type=MERGE),
        "apply": raw(
            api,
            "PATCH",
            f"{path}/cm?{query}",
            body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}},
            content_type=APPLY,
        ),
    }
    return {kind: (resp.status, resp.json().get("message")) for kind, resp in answers.items()}


def _refused(kind: str, *causes: str) -> tuple[int, str]:
    shown = causes[0] if len(causes) == 1 else "[" + ", ".join(causes) + "]"
    return 422, f'{kind}.meta.k8s.io "" is invalid: {shown}'


def _each_write_refused(api: Api, namespace: str, query: str, *causes: str) -> None:
    assert _writes(api, namespace, query) == {
        "CreateOptions": _refused("CreateOptions", *causes),
        "UpdateOptions": _refused("UpdateOptions", *causes),
        "PatchOptions": _refused("PatchOptions", *causes),
        "apply": _refused("PatchOptions", *causes),
    }


def _config_map(api: Api, namespace: str) -> None:
    client.CoreV1Api(api).create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}})


def test_a_field_manager_of_more_than_128_bytes_is_refused_by_every_write(
    kube_api_client: Api, namespace: str
) -> None:
    _config_map(kube_api_client, namespace)
    too_long = "fieldManager: Too long: must have at most 128 bytes"
    _each_write_refused(kube_api_client, namespace, f"fieldManager={'m' * 129}", too_long)
    # bytes, not characters: 65 two-byte runes are 130 bytes
    _each_write_refused(kube_api_client, namespace, f"fieldManager={quote('é' * 65)}", too_long)
    answers = _writes(kube_api_client, namespace, f"fieldManager={'m' * 128}&dryRun=All")
    assert [status for status, _ in answers.values()] == [201, 200, 200, 200]


def test_a_field_manager_names_each_unprintable_character_at_its_byte_position(
    kube_api_client: Api, namespace: str
) -> None:
    _config_map(kube_api_client, namespace)
    query = "fieldManager=" + quote("é\t\u200b")
    _each_write_refused(
        kube_api_client,
        namespace,
        query,
        'fieldManager: Invalid value: "é\\t\\u200b": invalid character U+0009 (at position 2)',
        'fieldManager: Invalid value: "é\\t\\u200b": invalid character U+200B (at position 3)',
    )


def test_every_bad_option_is_named_in_one_answer(kube_api_client: Api, namespace: str) -> None:
    _config_map(kube_api_client, namespace)
    _each_write_refused(
        kube_api_client,
        namespace,
        f"fieldManager={'m' * 129}&dryRun=All&dryRun=Bogus&fieldValidation=Bogus",
        "fieldManager: Too long: must have at most 128 bytes",
        'dryRun: Unsupported value: []string{"All", "Bogus"}: supported values: "All"',
        'fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", '
        '"Strict", "Warn"',
    )
    # an empty dryRun is one empty value, not none
    resp = raw(
        kube_api_client, "POST", f"{_cms(namespace)}?dryRun=", body={"metadata": {"name": "e"}}
    )
    assert (resp.status, resp.json()["message"]) == _refused(
        "CreateOptions", 'dryRun: Unsupported value: []string{""}: supported values: "All"'
    )
    resp = raw(
        kube_api_client, "PATCH", f"{_cms(namespace)}/cm?force=true", body={}, content_type=MERGE
    )
    assert (resp.status, resp.json()["message"]) == _refused(
        "PatchOptions", "force: Forbidden: may not be specified for non-apply patch"
    )


def test_a_delete_checks_its_own_options_and_a_read_none(
    kube_api_client: Api, namespace: str
) -> None:
    _config_map(kube_api_client, namespace)
    path = _cms(namespace)
    for target in (f"{path}/cm", path):  # delete and deletecollection
        resp = raw(kube_api_client, "DELETE", f"{target}?propagationPolicy=Bogus&dryRun=Bogus")
        assert (resp.status, resp.json()["message"]) == _refused(
            "DeleteOptions",
            'propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", '
            '"Background", "Orphan", "nil"',
            'dryRun: Unsupported value: []string{"Bogus"}: supported values: "All"',
        )
        body = resp.json()["details"]
        assert "name" not in body and body["group"] == "meta.k8s.io"
        # a write's options mean nothing to a delete
        query = f"fieldManager={'m' * 129}&fieldValidation=Bogus&dryRun=All"
        assert raw(kube_api_client, "DELETE", f"{target}?{query}").status == 200
    for query in ("dryRun=Bogus", f"fieldManager={'m' * 129}", "fieldValidation=Bogus"):
        assert raw(kube_api_client, "GET", f"{path}/cm?{query}").status == 200
        assert raw(kube_api_client, "GET", f"{path}?{query}").status == 200
