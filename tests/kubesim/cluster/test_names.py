from __future__ import annotations

import random

from kubesim.cluster import names
from kubesim.quantity import parse_quantity


def test_random_suffix_uses_the_real_alphabet():
    suffix = names.random_suffix(random.Random(1))
    assert len(suffix) == 5
    assert set(suffix) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_random_suffix_is_deterministic_under_a_seed():
    assert names.random_suffix(random.Random(7)) == names.random_suffix(random.Random(7))


def test_template_hash_is_stable_and_changes_with_the_template():
    a = {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "a:1"}]},
    }
    b = {
        "metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "a:2"}]},
    }
    assert names.template_hash(a) == names.template_hash(dict(reversed(list(a.items()))))
    assert names.template_hash(a) != names.template_hash(b)
    assert names.template_hash(a) != names.template_hash(a, collision_count=1)
    assert set(names.template_hash(a)) <= set(names.ALPHANUMS)


def test_quantities_parse_binary_and_decimal_suffixes():
    assert parse_quantity("1Gi") == 2**30
    assert parse_quantity("500Mi") * 2 < parse_quantity("1Gi")
    assert parse_quantity("2G") == 2 * 10**9
    assert parse_quantity("250m") * 4 == 1
    assert parse_quantity(3) == 3
