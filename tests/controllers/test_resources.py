from __future__ import annotations

import pytest

from controllers.resources import (
    canonical_quantity,
    container_resources,
    parse_quantity,
    resources_problem,
)
from tests.controllers.builders import memcached


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("1000", "1k"),
        ("500M", "500M"),
        ("1e3", "1e3"),
        ("100m", "100m"),
        (2, "2"),
        ("0", "0"),
    ],
)
def test_quantities_are_written_as_the_api_server_prints_them(written: str, printed: str) -> None:
    assert canonical_quantity(written) == printed


@pytest.mark.parametrize("bad", ["-1", "1.5 Gi", "64MB", "lots", "", "1e", "Mi"])
def test_what_is_not_a_quantity_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a quantity"):
        parse_quantity(bad)


def test_the_crs_cpu_and_memory_become_the_containers_resources() -> None:
    cr = memcached(
        resources={"limits": {"memory": "128Mi", "cpu": 1}, "requests": {"memory": "0.0625Gi"}}
    )
    assert container_resources(cr, "spec.resources") == {
        "requests": {"memory": "64Mi"},
        "limits": {"cpu": "1", "memory": "128Mi"},
    }
    assert container_resources(memcached(), "spec.resources") == {}


def test_a_request_above_its_limit_is_said_in_the_api_servers_words() -> None:
    cr = memcached(resources={"limits": {"memory": "64Mi"}, "requests": {"memory": "0.1Gi"}})
    assert resources_problem(cr, "spec.resources") == (
        "spec.resources.requests.memory: Invalid value: '0.1Gi': must be less than or equal "
        "to memory limit of 64Mi"
    )
    equal = memcached(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "1000m"}})
    assert resources_problem(equal, "spec.resources") is None


def test_a_quantity_the_crd_would_refuse_is_named_with_its_field() -> None:
    cr = memcached(resources={"limits": {"memory": "lots"}})
    why = resources_problem(cr, "spec.resources")
    assert why is not None and why.startswith("spec.resources.limits.memory: Invalid value: 'lots'")
    assert resources_problem(memcached(resources={"requests": {"cpu": True}}), "spec.resources")


def test_a_part_that_is_no_map_is_named_and_builds_nothing() -> None:
    cr = memcached(resources={"limits": ["memory"]})
    assert resources_problem(cr, "spec.resources") == (
        "spec.resources.limits: Invalid value: ['memory']: must be a map of cpu and memory"
    )
    assert container_resources(cr, "spec.resources") == {}
