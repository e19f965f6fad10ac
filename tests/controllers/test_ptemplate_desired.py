from __future__ import annotations

from controllers.base import DAEMONSET
from controllers.drift import owned_diff
from controllers.ptemplate.desired import (
    DAEMONSET_EXACT,
    MODULE,
    MODULE_EXACT,
    desired_daemonset,
    desired_module,
    labels_for,
    module_image_ok,
    resource_problem,
    selector_problem,
)
from controllers.ptemplate.reconcile import spec_problem
from tests.controllers.ptemplate_helpers import ptemplate


def test_module_loads_the_module_on_the_selected_nodes_with_the_pull_secret() -> None:
    module = desired_module(ptemplate("pt", devicePluginImage="quay.io/acme/accel-dp:1"))
    assert (module["apiVersion"], module["kind"]) == (MODULE.api_version, "Module")
    assert module["metadata"]["name"] == "pt"
    assert module["metadata"]["ownerReferences"][0]["uid"] == "uid-pt"
    spec = module["spec"]
    assert spec["selector"] == {"node-role.kubernetes.io/worker": ""}
    assert spec["imageRepoSecret"] == {"name": "pull"}
    container = spec["moduleLoader"]["container"]
    assert container["modprobe"] == {"moduleName": "accel_drv"}
    assert container["kernelMappings"] == [
        {"regexp": "^.+$", "containerImage": "quay.io/acme/accel-kmod:${KERNEL_FULL_VERSION}"}
    ]
    assert spec["devicePlugin"] == {"container": {"image": "quay.io/acme/accel-dp:1"}}


def test_module_has_no_device_plugin_unless_asked() -> None:
    assert "devicePlugin" not in desired_module(ptemplate())["spec"]


def test_daemonset_runs_consumers_on_the_selected_nodes_asking_for_the_devices() -> None:
    cr = ptemplate("pt")
    ds = desired_daemonset(cr)
    assert (ds["kind"], ds["metadata"]["name"]) == (DAEMONSET.kind, "pt-consumer")
    assert ds["spec"]["selector"]["matchLabels"] == labels_for(cr)
    pod = ds["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/worker": ""}
    assert pod["imagePullSecrets"] == [{"name": "pull"}]
    [container] = pod["containers"]
    assert container["image"] == "quay.io/acme/accel-consumer:1.0"
    assert container["resources"] == {
        "limits": {"acme.com/accel": "2"},
        "requests": {"acme.com/accel": "2"},
    }


def test_zero_devices_means_no_request() -> None:
    [container] = desired_daemonset(ptemplate(deviceCount=0))["spec"]["template"]["spec"][
        "containers"
    ]
    assert container["resources"] == {}


def test_the_crs_cpu_and_memory_sit_beside_the_device() -> None:
    cr = ptemplate(resources={"limits": {"memory": "0.5Gi"}, "requests": {"cpu": "0.1"}})
    [container] = desired_daemonset(cr)["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == {
        "limits": {"memory": "512Mi", "acme.com/accel": "2"},
        "requests": {"cpu": "100m", "acme.com/accel": "2"},
    }
    assert (
        "spec.resources.requests.cpu"
        in spec_problem(ptemplate(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}))[1]
    )


def test_a_removed_selector_key_is_removed_from_the_children() -> None:
    old = ptemplate(nodeSelector={"a": "1", "b": "2"})
    new = ptemplate(nodeSelector={"a": "1"})
    ds_patch = owned_diff(desired_daemonset(new), desired_daemonset(old), exact=DAEMONSET_EXACT)
    assert ds_patch == {"spec": {"template": {"spec": {"nodeSelector": {"b": None}}}}}
    module_patch = owned_diff(desired_module(new), desired_module(old), exact=MODULE_EXACT)
    assert module_patch == {"spec": {"selector": {"b": None}}}


def test_a_removed_device_plugin_is_removed_from_the_module() -> None:
    old = desired_module(ptemplate(devicePluginImage="quay.io/acme/dp:1"))
    patch = owned_diff(desired_module(ptemplate()), old, exact=MODULE_EXACT)
    assert patch == {"spec": {"devicePlugin": None}}


def test_a_changed_device_and_secret_replace_the_old_ones_whole() -> None:
    have = desired_daemonset(ptemplate())
    want = desired_daemonset(ptemplate(deviceResource="acme.com/gpu", imagePullSecret="new"))
    patch = owned_diff(want, have, exact=DAEMONSET_EXACT)
    assert patch is not None
    pod = patch["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "new"}]
    assert pod["containers"][0]["resources"] == {
        "limits": {"acme.com/gpu": "2"},
        "requests": {"acme.com/gpu": "2"},
    }


def test_dropping_the_devices_clears_the_request_and_then_writes_nothing() -> None:
    have = desired_daemonset(ptemplate())
    patch = owned_diff(desired_daemonset(ptemplate(deviceCount=0)), have, exact=DAEMONSET_EXACT)
    assert patch["spec"]["template"]["spec"]["containers"][0]["resources"] == {}
    cleared = desired_daemonset(ptemplate(deviceCount=0))
    cleared["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    want = desired_daemonset(ptemplate(deviceCount=0))
    assert owned_diff(want, cleared, exact=DAEMONSET_EXACT) is None


def test_an_unchanged_daemonset_needs_no_patch() -> None:
    have = desired_daemonset(ptemplate())
    assert owned_diff(desired_daemonset(ptemplate()), have, exact=DAEMONSET_EXACT) is None


def test_spec_problems_name_the_field() -> None:
    assert spec_problem(ptemplate()) is None
    assert "spec.deviceCount" in spec_problem(ptemplate(deviceCount=-1))[1]
    assert "spec.image" in spec_problem(ptemplate(image="UPPER CASE:bad"))[1]
    assert "spec.nodeSelector" in spec_problem(ptemplate(nodeSelector={"bad key": "x"}))[1]
    assert "spec.deviceResource" in spec_problem(ptemplate(deviceResource="kubernetes.io/x"))[1]


def test_selector_resource_and_module_image_rules() -> None:
    assert selector_problem({"feature.node.kubernetes.io/pci-10de.present": "true"}) is None
    assert selector_problem({"a": "has space"}) is not None
    assert resource_problem("acme.com/accel") is None
    assert resource_problem("accel") is not None
    assert module_image_ok("quay.io/acme/kmod:${KERNEL_FULL_VERSION}")
    assert not module_image_ok("quay.io/acme/kmod:$(rm -rf)")
