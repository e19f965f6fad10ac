from __future__ import annotations

from controllers.ownership import controller_ref, owned_labels, selector_string
from tests.controllers.builders import memcached


def test_controller_ref_names_the_owner_as_its_controller() -> None:
    ref = controller_ref(memcached("a"))
    assert ref == {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "name": "a",
        "uid": "uid-a",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_owned_labels_differ_between_two_instances_of_one_app() -> None:
    assert owned_labels("memcached", "a") != owned_labels("memcached", "b")
    assert owned_labels("memcached", "a")["app.kubernetes.io/managed-by"] == "opsboard"


def test_selector_string_is_sorted_and_comma_separated() -> None:
    assert selector_string({"b": "2", "a": "1"}) == "a=1,b=2"
