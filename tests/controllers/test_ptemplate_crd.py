"""The Ptemplate CRD refuses bad input naming the field; KMM's Module CRD is installed only
where the cluster does not serve it."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import ptemplate
from controllers.base import PermanentError
from controllers.images import IMAGE_PATTERN
from controllers.kube import ApiKube, load_api_client
from controllers.ptemplate import desired
from controllers.ptemplate.desired import MODULE, PTEMPLATE
from opsboard.core import manifests
from tests.controllers.manifests import crd
from tests.controllers.ptemplate_helpers import KMM_CRD_FILES, SPEC, install_kmm_crd


def _version() -> dict[str, Any]:
    [version] = crd("ptemplates")["spec"]["versions"]
    return version


def _spec_schema() -> dict[str, Any]:
    return _version()["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def test_crd_serves_the_kind_with_status_printer_columns_and_the_opsboard_category() -> None:
    doc = crd("ptemplates")
    assert doc["metadata"]["name"] == PTEMPLATE.resource
    assert doc["spec"]["names"]["kind"] == PTEMPLATE.kind
    assert "opsboard" in doc["spec"]["names"]["categories"]
    assert _version()["subresources"] == {"status": {}}  # no scale: the nodes decide
    columns = {c["jsonPath"]: c["name"] for c in _version()["additionalPrinterColumns"]}
    assert columns[".status.numberReady"] == "Ready"
    assert columns[".spec.image"] == "Image"
    assert columns[".spec.deviceCount"] == "Devices"


def test_crd_patterns_are_the_ones_the_controller_checks() -> None:
    schema = _spec_schema()
    assert schema["image"]["pattern"] == IMAGE_PATTERN
    assert schema["devicePluginImage"]["pattern"] == IMAGE_PATTERN
    assert schema["moduleLoaderImage"]["pattern"] == desired.MODULE_IMAGE_PATTERN
    assert schema["deviceResource"]["pattern"] == desired.RESOURCE_NAME_PATTERN
    assert schema["deviceCount"]["default"] == desired.DEFAULT_DEVICE_COUNT
    assert schema["kernelVersion"]["default"] == desired.DEFAULT_KERNEL_VERSION
    assert ptemplate.CONTROLLER.fields.image == "spec.image"
    assert ptemplate.CONTROLLER.fields.size is None


def _body(namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PTEMPLATE.api_version,
        "kind": PTEMPLATE.kind,
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": {**SPEC, **spec},
    }


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"deviceCount": -1}, "spec.deviceCount"),
        ({"deviceCount": "two"}, "spec.deviceCount"),
        ({"image": "UPPER CASE:bad"}, "spec.image"),
        ({"moduleLoaderImage": "quay.io/acme/kmod:$(id)"}, "spec.moduleLoaderImage"),
        ({"nodeSelector": "role=accel"}, "spec.nodeSelector"),
        ({"nodeSelector": {"role": "has space"}}, "spec.nodeSelector"),
        ({"nodeSelector": {}}, "spec.nodeSelector"),
        ({"imagePullSecret": "Not_A_Name"}, "spec.imagePullSecret"),
        ({"deviceResource": "accel"}, "spec.deviceResource"),
        ({"moduleName": "bad name"}, "spec.moduleName"),
    ],
    ids=lambda v: str(v),
)
def test_an_invalid_spec_is_rejected_naming_the_field(
    kube: ApiKube, namespace: str, spec: dict[str, Any], field: str
) -> None:
    with pytest.raises(PermanentError, match=field):
        kube.create(PTEMPLATE, _body(namespace, **spec))
    assert kube.get(PTEMPLATE, namespace, "bad") is None


def test_defaults_fill_the_device_count_and_kernel_version(kube: ApiKube, namespace: str) -> None:
    body = _body(namespace)
    del body["spec"]["deviceCount"]
    created = kube.create(PTEMPLATE, body)
    assert created["spec"]["deviceCount"] == 1
    assert created["spec"]["kernelVersion"] == "^.+$"


def test_the_kmm_crd_is_installed_once_and_then_left_alone(
    kube: ApiKube, namespace: str, kubesim_server: Any
) -> None:
    install_kmm_crd(kubesim_server.kubeconfig_path)  # served from now on
    api = load_api_client(kubeconfig=str(kubesim_server.kubeconfig_path))
    try:
        again = manifests.install_missing(api, manifests.documents(KMM_CRD_FILES))
    finally:
        api.close()
    assert again == ["kept Module (kmm.sigs.x-k8s.io): served by the cluster"]
    module = {
        "apiVersion": MODULE.api_version,
        "kind": MODULE.kind,
        "metadata": {"name": "m", "namespace": namespace},
        "spec": {
            "selector": {},
            "moduleLoader": {
                "container": {
                    "modprobe": {"moduleName": "x"},
                    "kernelMappings": [{"regexp": "^.+$", "containerImage": "a/b:c"}],
                    "imagePullPolicy": "Always",  # not in the trimmed schema: kept, not pruned
                }
            },
        },
    }
    created = kube.create(MODULE, module)
    container = created["spec"]["moduleLoader"]["container"]
    assert container["imagePullPolicy"] == "Always"
    assert container["modprobe"]["dirName"] == "/opt"  # KMM's default
    with pytest.raises(PermanentError, match=r"spec\.selector"):
        kube.create(MODULE, {**module, "metadata": {"name": "n", "namespace": namespace},
                             "spec": {"moduleLoader": module["spec"]["moduleLoader"]}})  # fmt: skip
