"""The Memcached operator (cache.example.com/v1alpha1): a Deployment of `spec.size` pods."""

from __future__ import annotations

from controllers.base import DEPLOYMENT, POD, Controller, CrFields
from controllers.memcached.desired import MEMCACHED, RESOURCES_PATH
from controllers.memcached.reconcile import expected_children, reconcile

CONTROLLER = Controller(
    name="memcached",
    primary=MEMCACHED,
    # Pods are watched so the engine's cache can list them for status.nodes.
    owns=(DEPLOYMENT, POD),
    reconcile=reconcile,
    expected_children=expected_children,
    fields=CrFields(
        size="spec.size", image="spec.image", resources=(("memcached", RESOURCES_PATH),)
    ),
    owns_spec_only=(DEPLOYMENT,),  # its pods tell the status
)
