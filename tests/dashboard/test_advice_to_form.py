"""A Diagnosis's advice that names a field the change form sets points to the form, for a
person who may use it: the advice says what to lower, the form above is where."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string

from opsboard.dashboard.forms import form_field_named
from opsboard.dashboard.kinds import kind_get
from opsboard.diagnosis.gather import Diagnosis
from opsboard.diagnosis.observed import Finding, LogOf
from tests.dashboard.mirror_factory import mirror_object

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "advice", "named"),
    [
        ("ptemplate", "Lower spec.deviceCount (what each pod requests), or add", "spec.deviceCount"),
        ("memcached", "Lower spec.resources.requests (what each pod requests)",
         "spec.resources.requests"),
        ("memcached", "Raise spec.resources.limits.memory: it was OOMKilled.",
         "spec.resources.limits.memory"),
        ("memcached", "Lower what each pod requests (or the CR's spec.size)", "spec.size"),
        ("bookstore", "lower the CR's spec.bookDB.dbSize (no lower than the claims)",
         "spec.bookDB.dbSize"),
        ("bookstore", "Raise spec.bookDB.resources.limits.memory.",
         "spec.bookDB.resources.limits.memory"),
        ("bookstore", "or lower the CR's spec.bookDB.replicas; the pods already there",
         "spec.bookDB.replicas"),
        ("bookstore", "Set spec.bookDB.image to an image that exists", "spec.bookDB.image"),
        ("bookstore", "Set spec.bookApp.image to an image that exists", "spec.bookApp.image"),
        ("webserver", "Set another spec.nodePort, or remove it to let the cluster choose one.",
         "spec.nodePort"),
        ("ptemplate", "Label a node to match (hw=x) or change the CR's node selector, "
         "spec.nodeSelector.", "spec.nodeSelector"),
        # What the form does not set, or only the start of a longer field's name.
        ("memcached", "Fix spec.sizeLimit, or spec.size.extra", ""),
        ("bookstore", "Set spec.bookDB.port", ""),
        ("ptemplate", "Check spec.deviceResource", ""),
    ],
)  # fmt: skip
def test_the_field_an_advice_names_is_found_only_where_the_form_sets_it(
    kind: str, advice: str, named: str
) -> None:
    assert form_field_named(kind_get(kind), advice) == named


def _page_diagnosis(user: User) -> str:
    cr = mirror_object("Ptemplate", "accel", api_version="hwe.example.com/v1alpha1",
                       spec={"image": "acme/consumer:1", "deviceCount": 3})  # fmt: skip
    finding = Finding(1, "Unschedulable", "1 pod unschedulable, not enough example.com/accel",
                      "Lower spec.deviceCount (what each pod requests).")  # fmt: skip
    diagnosis = Diagnosis(findings=[finding], summary="", healthy=False)
    context = {"diagnosis": diagnosis, "cr": cr, "info": kind_get("ptemplate"), "user": user}
    return render_to_string("dashboard/_diagnosis.html", context)


def test_the_advice_points_an_operator_to_the_change_form(operator: User) -> None:
    html = _page_diagnosis(operator)
    assert 'Lower spec.deviceCount (what each pod requests). The <a href="#cr-patch-' in html
    assert "</a> above sets spec.deviceCount." in html


def test_a_viewer_gets_the_advice_alone(viewer: User) -> None:
    html = _page_diagnosis(viewer)
    assert "Lower spec.deviceCount (what each pod requests)." in html
    assert "change form" not in html


def test_the_log_an_advice_says_to_read_is_linked_for_anyone_who_sees_the_page(
    viewer: User,
) -> None:
    cr = mirror_object("Memcached", "cache", api_version="cache.example.com/v1alpha1")
    crash = Finding(1, "CrashLoopBackOff", "container memcached keeps crashing",
                    "Read its logs: kubectl logs -n default cache-1 -c memcached --previous",
                    log=LogOf("cache-1", "memcached", previous=True))  # fmt: skip
    context = {"diagnosis": Diagnosis(findings=[crash], summary="", healthy=False), "cr": cr,
               "info": kind_get("memcached"), "user": viewer}  # fmt: skip
    html = render_to_string("dashboard/_diagnosis.html", context)
    assert (
        '--previous <a href="/k/memcached/default/cache/pods/cache-1/log/?container=memcached&amp;'
        'previous=1">That log, here</a>.'
    ) in html
