from __future__ import annotations

from controllers.bookstore.desired import (
    db_statefulset_mutable,
    desired_app_deployment,
    desired_app_service,
    desired_db_service,
    desired_db_statefulset,
)
from controllers.bookstore.quantity import parse_quantity
from controllers.bookstore.reconcile import expected_children
from controllers.drift import owned_diff
from tests.controllers.builders import bookstore

SPEC = {
    "bookApp": {"image": "shop/app:1.2", "replicas": 3, "port": 8080, "targetPort": 3000},
    "bookDB": {"image": "mongo:6.0", "replicas": 2, "port": 27018, "dbSize": "2Gi"},
}


def test_app_deployment_takes_replicas_image_and_port_from_book_app() -> None:
    deployment = desired_app_deployment(bookstore("shop", **SPEC))
    assert deployment["metadata"]["name"] == "shop-app"
    assert deployment["spec"]["replicas"] == 3
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "shop/app:1.2"
    assert container["ports"][0]["containerPort"] == 3000


def test_app_is_pointed_at_the_db_service_by_env() -> None:
    deployment = desired_app_deployment(bookstore("shop", **SPEC))
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == {"MONGODB_HOST": "shop-db", "MONGODB_PORT": "27018"}
    assert desired_db_service(bookstore("shop", **SPEC))["metadata"]["name"] == "shop-db"


def test_children_are_controlled_by_the_cr_and_select_only_their_own_component() -> None:
    cr = bookstore("shop", **SPEC)
    app, app_svc = desired_app_deployment(cr), desired_app_service(cr)
    db, db_svc = desired_db_statefulset(cr), desired_db_service(cr)
    for child in (app, app_svc, db, db_svc):
        [ref] = child["metadata"]["ownerReferences"]
        assert (ref["uid"], ref["controller"]) == ("uid-shop", True)
    assert app_svc["spec"]["selector"] == app["spec"]["selector"]["matchLabels"]
    assert db_svc["spec"]["selector"] == db["spec"]["selector"]["matchLabels"]
    assert app_svc["spec"]["selector"] != db_svc["spec"]["selector"]


def test_db_service_is_headless_and_app_service_has_the_asked_type() -> None:
    cr = bookstore("shop", bookApp={"serviceType": "ClusterIP", "port": 80})
    assert desired_db_service(cr)["spec"]["clusterIP"] == "None"
    service = desired_app_service(cr)
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["ports"][0] == {
        "name": "http",
        "port": 80,
        "targetPort": 3000,
        "protocol": "TCP",
    }


def test_statefulset_claims_db_size_per_replica_and_mounts_it() -> None:
    sts = desired_db_statefulset(bookstore("shop", **SPEC))
    assert sts["metadata"]["name"] == "shop-db"
    assert sts["spec"]["serviceName"] == "shop-db"
    assert sts["spec"]["replicas"] == 2
    [claim] = sts["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data"
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
    [container] = sts["spec"]["template"]["spec"]["containers"]
    assert container["volumeMounts"] == [{"name": "data", "mountPath": "/data/db"}]


def test_only_mutable_statefulset_fields_are_compared_after_creation() -> None:
    """A bigger dbSize must not patch volumeClaimTemplates: a cluster answers 422."""
    small, big = bookstore("shop", **SPEC), bookstore("shop", **SPEC)
    big["spec"]["bookDB"] = {**SPEC["bookDB"], "dbSize": "5Gi"}
    existing = desired_db_statefulset(small)
    assert owned_diff(db_statefulset_mutable(big), existing) is None
    assert set(db_statefulset_mutable(big)["spec"]) == {"replicas", "template"}


def test_defaults_fill_an_empty_spec() -> None:
    cr = bookstore("shop")
    assert desired_app_deployment(cr)["spec"]["replicas"] == 1
    sts = desired_db_statefulset(cr)
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "mongo:7.0"
    assert sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"] == {
        "storage": "1Gi"
    }


def test_expected_children_name_the_four_objects() -> None:
    names = {(c.kind.kind, c.name) for c in expected_children(bookstore("shop"))}
    assert names == {
        ("Deployment", "shop-app"),
        ("Service", "shop-app"),
        ("StatefulSet", "shop-db"),
        ("Service", "shop-db"),
    }


def test_quantities_compare_across_units() -> None:
    assert parse_quantity("2Gi") == parse_quantity("2048Mi")
    assert parse_quantity("1G") == 10**9
    assert parse_quantity("1.5Gi") == 3 * 2**29
    assert parse_quantity("2 Gi") is None
    assert parse_quantity("-1Gi") is None
    assert parse_quantity(None) is None
    # As the API server may print a capacity: an exponent, millis.
    assert parse_quantity("1e9") == 10**9
    assert parse_quantity("1500m") == parse_quantity("1.5")
