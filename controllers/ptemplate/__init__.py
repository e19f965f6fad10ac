"""The Ptemplate operator (hwe.example.com/v1alpha1): hardware enablement with KMM.

Per CR, a KMM `Module` (kmm.sigs.x-k8s.io/v1beta1) that loads the kernel module on the
selected nodes, and a DaemonSet of consumer pods there that request the device.
"""

from __future__ import annotations

from controllers.base import DAEMONSET, POD, Controller, CrFields
from controllers.ptemplate.desired import (
    CONSUMER,
    MODULE,
    NODE_SELECTOR_PATH,
    PTEMPLATE,
    RESOURCES_PATH,
)
from controllers.ptemplate.reconcile import expected_children, reconcile

CONTROLLER = Controller(
    name="ptemplate",
    primary=PTEMPLATE,
    # Pods are watched so the engine's cache can list them for status.nodes.
    owns=(MODULE, DAEMONSET, POD),
    reconcile=reconcile,
    expected_children=expected_children,
    # No size: the nodes decide how many consumer pods run, and spec.deviceCount is a
    # per-pod request, not a replica count (the form would call it "Size (replicas)").
    fields=CrFields(
        image="spec.image",
        requests="spec.deviceCount",
        resources=((CONSUMER, RESOURCES_PATH),),
        node_selector=NODE_SELECTOR_PATH,
    ),
)
