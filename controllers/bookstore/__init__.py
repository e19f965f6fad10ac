"""The BookStore operator (blog.velotio.com/v1alpha1): a book web app and its MongoDB.

Per CR: the app's Deployment and Service, the DB's StatefulSet (a claim per replica) and
headless Service; raising spec.bookDB.dbSize grows the existing claims.
"""

from __future__ import annotations

from controllers.base import DEPLOYMENT, POD, PVC, SERVICE, STATEFULSET, Controller, CrFields
from controllers.bookstore.desired import (
    APP_RESOURCES_PATH,
    BOOKSTORE,
    DB_IMAGE_PATH,
    DB_REPLICAS_PATH,
    DB_RESOURCES_PATH,
    DB_SIZE_PATH,
)
from controllers.bookstore.reconcile import expected_children, reconcile

CONTROLLER = Controller(
    name="bookstore",
    primary=BOOKSTORE,
    # Pods are watched so the engine's cache can list them for status.nodes, and claims for
    # their size and capacity (status.claims).
    owns=(DEPLOYMENT, SERVICE, STATEFULSET, POD, PVC),
    reconcile=reconcile,
    expected_children=expected_children,
    fields=CrFields(
        size="spec.bookApp.replicas",
        image="spec.bookApp.image",
        part="App",  # not the DB (spec.bookDB)
        storage=DB_SIZE_PATH,
        resources=(("bookstore", APP_RESOURCES_PATH), ("mongodb", DB_RESOURCES_PATH)),
        replicas=(("mongodb", DB_REPLICAS_PATH),),
        images=(("mongodb", DB_IMAGE_PATH),),
    ),
    # Its pods tell the status; the StatefulSet's updateRevision is read (stuck pods).
    owns_spec_only=(DEPLOYMENT,),
)
