"""The Ptemplate operator's desired state, built from the CR alone (pure).

A Ptemplate is the partner template for hardware enablement with Kernel Module Management:
a KMM `Module` that loads a kernel module (and optionally runs its device plugin) on the
selected nodes, and a DaemonSet of consumer pods there that each ask for `deviceCount` of
the extended resource the device plugin advertises.
"""

from __future__ import annotations

import re

from controllers.base import DAEMONSET, Body, Kind, Manifest
from controllers.fields import deep_get
from controllers.images import IMAGE_PATTERN
from controllers.labels import DNS_SUBDOMAIN, QUALIFIED_NAME, key_problem, value_problem
from controllers.ownership import child_metadata, owned_labels
from controllers.resources import container_resources, exact_resources

PTEMPLATE = Kind("hwe.example.com", "v1alpha1", "Ptemplate", "ptemplates")
# KMM's kind (kubernetes-sigs/kernel-module-management, api/v1beta1): installed by KMM on a
# real cluster, by k8s/third_party/kmm/ on kubesim. opsboard never owns its CRD.
MODULE = Kind("kmm.sigs.x-k8s.io", "v1beta1", "Module", "modules")
SECRET = Kind("", "v1", "Secret", "secrets")

DEFAULT_DEVICE_COUNT = 1
DEFAULT_KERNEL_VERSION = "^.+$"  # every kernel: the ModuleLoader image's tag names it
CONSUMER = "consumer"  # the DaemonSet's container

# Fields that are ours whole: a key added there would change what they select.
MODULE_EXACT = frozenset({"spec", "spec.selector"})
RESOURCES_PATH = "spec.resources"
NODE_SELECTOR_PATH = "spec.nodeSelector"
# The consumer's resources and pull secrets are the CR's alone: a device, a limit or a
# secret no longer asked for goes, not kept beside the new one.
DAEMONSET_EXACT = (
    frozenset({"spec.template.spec.nodeSelector", "spec.template.spec.imagePullSecrets"})
    | exact_resources()
)

SECRET_NAME_PATTERN = rf"^{DNS_SUBDOMAIN}$"
# An extended resource: a domain-prefixed name, as a device plugin registers it.
RESOURCE_NAME_PATTERN = rf"^{DNS_SUBDOMAIN}/{QUALIFIED_NAME}$"
# A ModuleLoader image may name KMM's variables in its tag: quay.io/x/kmod:${KERNEL_FULL_VERSION}
MODULE_IMAGE_PATTERN = IMAGE_PATTERN.replace(
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?",
    r"(?::(?:[A-Za-z0-9_.-]|\$\{[A-Z_]+\}){1,128})?",
)
MODULE_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"

_RESOURCE_RE = re.compile(RESOURCE_NAME_PATTERN)
_MODULE_IMAGE_RE = re.compile(MODULE_IMAGE_PATTERN)


def spec_image(cr: Body) -> str:
    return str(deep_get(cr, "spec.image") or "")


def spec_node_selector(cr: Body) -> dict[str, str]:
    return dict(deep_get(cr, NODE_SELECTOR_PATH) or {})


def spec_pull_secret(cr: Body) -> str:
    return str(deep_get(cr, "spec.imagePullSecret") or "")


def spec_device_resource(cr: Body) -> str:
    return str(deep_get(cr, "spec.deviceResource") or "")


def spec_device_count(cr: Body) -> int:
    return int(deep_get(cr, "spec.deviceCount", DEFAULT_DEVICE_COUNT))


def daemonset_name(cr: Body) -> str:
    return f"{cr['metadata']['name']}-consumer"


def module_name(cr: Body) -> str:
    return str(cr["metadata"]["name"])


def labels_for(cr: Body) -> dict[str, str]:
    """Select this CR's consumer pods only: the instance label keeps two CRs apart."""
    return owned_labels("ptemplate", cr["metadata"]["name"])


def selector_problem(selector: dict[str, str]) -> str | None:
    """What is wrong with a node selector's keys or values, for an InvalidSpec message.

    The CRD checks the values; keys need CEL, which not every API server runs.
    """
    for key, value in selector.items():
        if why := key_problem(key):
            return f"{NODE_SELECTOR_PATH}: Invalid value: {key!r}: {why}"
        if why := value_problem(str(value)):
            return f"{NODE_SELECTOR_PATH}[{key}]: Invalid value: {value!r}: {why}"
    return None


def resource_problem(resource: str) -> str | None:
    domain = resource.split("/", 1)[0]
    if not _RESOURCE_RE.match(resource) or len(resource) > 253:
        return f"spec.deviceResource: Invalid value: {resource!r}: not a resource name"
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return (
            f"spec.deviceResource: Invalid value: {resource!r}: an extended resource must be "
            "outside the kubernetes.io domain"
        )
    return None


def module_image_ok(image: str) -> bool:
    return len(image) <= 4096 and _MODULE_IMAGE_RE.match(image) is not None


def consumer_resources(cr: Body) -> Body:
    """The consumer container's resources: the CR's cpu and memory, and `deviceCount` of the
    device (none for 0).

    Extended resources cannot be overcommitted, so the device's requests equal its limits
    (both are set, as the API server would default the requests from the limits).
    """
    resources = container_resources(cr, RESOURCES_PATH)
    count = spec_device_count(cr)
    if count > 0:
        for part in ("limits", "requests"):
            resources[part] = {**resources.get(part, {}), spec_device_resource(cr): str(count)}
    return resources


def desired_daemonset(cr: Body) -> Manifest:
    labels = labels_for(cr)
    pod_spec: Body = {
        "nodeSelector": spec_node_selector(cr),
        "imagePullSecrets": [{"name": spec_pull_secret(cr)}],
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": CONSUMER,
                "image": spec_image(cr),
                "imagePullPolicy": "IfNotPresent",
                "resources": consumer_resources(cr),
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }
    return {
        "apiVersion": DAEMONSET.api_version,
        "kind": DAEMONSET.kind,
        "metadata": child_metadata(cr, daemonset_name(cr), labels),
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def desired_module(cr: Body) -> Manifest:
    """KMM's Module: load `moduleName` from the ModuleLoader image on the selected nodes."""
    spec: Body = {
        "selector": spec_node_selector(cr),
        "imageRepoSecret": {"name": spec_pull_secret(cr)},
        "moduleLoader": {
            "container": {
                "modprobe": {"moduleName": str(deep_get(cr, "spec.moduleName"))},
                "kernelMappings": [
                    {
                        "regexp": str(deep_get(cr, "spec.kernelVersion") or DEFAULT_KERNEL_VERSION),
                        "containerImage": str(deep_get(cr, "spec.moduleLoaderImage")),
                    }
                ],
            }
        },
    }
    plugin = deep_get(cr, "spec.devicePluginImage")
    if plugin:
        spec["devicePlugin"] = {"container": {"image": str(plugin)}}
    return {
        "apiVersion": MODULE.api_version,
        "kind": MODULE.kind,
        "metadata": child_metadata(cr, module_name(cr), labels_for(cr)),
        "spec": spec,
    }
