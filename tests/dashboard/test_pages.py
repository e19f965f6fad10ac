"""Read-only pages, served from mirror rows created directly: roles, content, query counts."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy

from opsboard.dashboard.templatetags.opsboard import diff_cell, html_row, spec_fields
from opsboard.engine.models import ReconcileRun
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import (
    MEMCACHED_API,
    memcached_with_pods,
    mirror_object,
    running_pod,
)

pytestmark = pytest.mark.django_db
MISSING = "not there: the next reconcile creates it; if it does not, see the Diagnosis"


def test_anonymous_users_are_sent_to_login(client: Client) -> None:
    for url in ("/", "/crs/", "/k/memcached/", "/k/memcached/default/x/", "/audit/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url


def test_login_page_renders_a_labelled_form(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'<label for="id_username">' in response.content
    assert b"csrfmiddlewaretoken" in response.content


def test_login_with_the_right_password_reaches_the_overview(client: Client, viewer) -> None:
    response = client.post(
        "/accounts/login/",
        {"username": "vera", "password": "correct horse battery staple"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == "/"
    assert b"Resources by health" in response.content


def test_overview_counts_crs_by_health_and_staleness(viewer_client: Client) -> None:
    memcached_with_pods("a", size=1)
    mirror_object("Memcached", "b", api_version=MEMCACHED_API, health="Degraded")
    mirror_object(
        "Memcached", "c", api_version=MEMCACHED_API, health="Progressing",
        generation=3, observed_generation=2,
    )  # fmt: skip
    response = viewer_client.get("/")
    counts = {c.info.name: c for c in response.context["counts"]}
    assert counts["memcached"].total == 3
    assert counts["memcached"].by_health["Degraded"] == 1
    assert counts["memcached"].by_health["Available"] == 1
    assert counts["memcached"].stale == 1
    assert counts["webserver"].total == 0


def test_the_overview_reads_the_mirrors_freshness_once(viewer_client: Client) -> None:
    # Its attention list, its engine card and the page's banner all show it: one read.
    mirror_object("Memcached", "b", api_version=MEMCACHED_API, health="Degraded")
    for htmx in ({}, {"HTTP_HX_REQUEST": "true"}):
        with CaptureQueriesContext(connection) as page:
            assert viewer_client.get("/", **htmx).status_code == 200
        assert sum('"mirror_kindwatch"' in q["sql"] for q in page.captured_queries) == 1


def test_the_overviews_run_tables_shorten_each_run_to_one_escaped_row(
    viewer_client: Client,
) -> None:
    started = timezone.now() - timedelta(minutes=3)
    common = {"controller": "memcached", "namespace": "default", "uid": "u", "generation": 1}
    ReconcileRun.objects.create(
        **common, name="a<b", trigger="event", started_at=started, outcome="success",
        duration_ms=12.25, actions=["Created Deployment <a>", "Created Service"], folded_count=2,
    )  # fmt: skip
    ReconcileRun.objects.create(
        **common, name="c", trigger="manual", started_at=started, outcome="error",
        error="boom " * 40, trigger_detail="by vera",
    )  # fmt: skip
    html = viewer_client.get("/", HTTP_HX_REQUEST="true").content.decode()
    at = timezone.localtime(started)
    assert (
        '<tr><td><a href="/k/memcached/default/a%3Cb/">memcached default/a&lt;b</a></td>'
        f'<td><time datetime="{at.isoformat()}" title="{at:%Y-%m-%d %H:%M:%S}">3m ago</time>'
        '</td><td>event</td><td><span class="badge o-success">Success</span> <small>\u00d73'
        "</small></td><td>12.3 ms</td><td>Created Deployment &lt;a&gt; <small>+1 more</small>"
        "</td></tr>"
    ) in html
    error = '<td>manual</td><td><span class="badge o-error">Error</span></td><td>—</td>'
    assert html.count(error) == 2, "in the recent runs and the recent errors"
    assert f'<span class="err">{("boom " * 18).strip()[:89]}…</span>' in html
    assert "by vera" not in html, "compact: no trigger detail"


def test_the_engine_card_counts_the_runs_and_errors_of_the_last_hour(
    viewer_client: Client,
) -> None:
    now = timezone.now()
    for minutes, outcome in ((5, "success"), (10, "error"), (20, "permanent"), (90, "error")):
        ReconcileRun.objects.create(
            controller="memcached", namespace="default", name="a", uid="u", generation=1,
            trigger="event", started_at=now - timedelta(minutes=minutes), outcome=outcome,
        )  # fmt: skip
    engine = viewer_client.get("/", HTTP_HX_REQUEST="true").context["engine"]
    assert (engine.runs_last_hour, engine.errors_last_hour) == (3, 2)
    assert engine.last_run_at == now - timedelta(minutes=5)


def test_a_settled_fleets_overview_diagnoses_nothing(viewer_client: Client) -> None:
    memcached_with_pods("a", size=1)
    with CaptureQueriesContext(connection) as poll:
        context = viewer_client.get("/", HTTP_HX_REQUEST="true").context
    assert (context["attention"], context["attention_total"]) == ([], 0)
    newest_watcher = 'ORDER BY "mirror_watcherheartbeat"."heartbeat_at" DESC'
    assert not [q for q in poll.captured_queries if newest_watcher in q["sql"]]


def test_list_shows_printer_columns_progress_and_image(viewer_client: Client) -> None:
    memcached_with_pods("cache-a", size=3)
    response = viewer_client.get("/k/memcached/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "cache-a" in html
    assert '<a href="?sort=col-0">Size</a>' in html  # a printer column, sortable
    assert 'aria-label="3 of 3 ready"' in html
    assert "memcached:1.4.36-alpine" in html
    headers = re.findall(r'<th scope="col"[^>]*>(?:<a [^>]*>)?([^<]+)', html)
    assert len(headers) == len(set(headers)), headers


def test_a_daemonset_like_kind_counts_ready_of_desired_from_its_printer_columns(
    viewer_client: Client,
) -> None:
    mirror_object("Ptemplate", "dev", api_version="hwe.example.com/v1alpha1",
                  status={"desiredNumberScheduled": 3, "numberReady": 2})  # fmt: skip
    assert 'aria-label="2 of 3 ready"' in viewer_client.get("/k/ptemplate/").content.decode()
    detail = viewer_client.get("/k/ptemplate/default/dev/").content.decode()
    assert re.search(r'<dt>Ready</dt><dd id="cr-ready-[^"]+">2 of 3</dd>', detail)
    assert "<dt>Desired</dt><dd>3</dd>" in detail  # a printer column of the status


def test_detail_status_lists_the_printer_columns_read_from_the_status(
    viewer_client: Client,
) -> None:
    mirror_object("BookStore", "shop", api_version="blog.velotio.com/v1alpha1",
                  status={"nodePort": 30080, "dbReadyReplicas": 1})  # fmt: skip
    html = viewer_client.get("/k/bookstore/default/shop/").content.decode()
    assert "<dt>NodePort</dt><dd>30080</dd>" in html and "<dt>DB Ready</dt><dd>1</dd>" in html


def test_list_filters_by_namespace_health_name_and_label(viewer_client: Client) -> None:
    mirror_object("Memcached", "alpha", api_version=MEMCACHED_API, namespace="prod",
                  health="Available", labels={"team": "red"})  # fmt: skip
    mirror_object("Memcached", "beta", api_version=MEMCACHED_API, namespace="dev",
                  health="Degraded", labels={"team": "blue"})  # fmt: skip

    def names(query: str) -> list[str]:
        page = viewer_client.get(f"/k/memcached/?{query}").context["page"]
        return [row.cr.name for row in page]

    assert names("namespace=prod") == ["alpha"]
    assert names("health=Degraded") == ["beta"]
    assert names("search=alp") == ["alpha"]
    assert names("search=team%3Dblue") == ["beta"]
    assert names("sort=-name") == ["beta", "alpha"]


def test_the_overviews_link_lists_every_resource_that_needs_attention(
    viewer_client: Client,
) -> None:
    mirror_object("Memcached", "fine", api_version=MEMCACHED_API, health="Available")
    for n in range(12):  # more than the overview lists
        mirror_object("Memcached", f"waiting-{n:02}", api_version=MEMCACHED_API,
                      health="Progressing")  # fmt: skip
    mirror_object("Memcached", "stale", api_version=MEMCACHED_API, health="Available",
                  generation=2, observed_generation=1)  # fmt: skip
    overview = viewer_client.get("/").content.decode()
    assert '<a href="/crs/?health=attention">All 13 that need attention</a>' in overview

    page = viewer_client.get("/crs/?health=attention").context["page"]
    names = sorted(row.cr.name for row in page)
    assert names == sorted(["stale", *(f"waiting-{n:02}" for n in range(12))])
    listed = viewer_client.get("/k/memcached/?health=attention").content.decode()
    assert '<option value="attention" selected>Needs attention</option>' in listed


def test_list_sorts_by_a_printer_column(viewer_client: Client) -> None:
    for name, size in (("small", 2), ("large", 9), ("medium", 5)):
        mirror_object("Memcached", name, api_version=MEMCACHED_API, spec={"size": size})

    def names(query: str) -> list[str]:
        return [row.cr.name for row in viewer_client.get(f"/k/memcached/?{query}").context["page"]]

    assert names("sort=col-0") == ["small", "medium", "large"]  # Size, as a number
    assert names("sort=-col-0") == ["large", "medium", "small"]
    html = viewer_client.get("/k/memcached/?sort=col-0").content.decode()
    assert '<a href="?sort=-col-0">Size</a>' in html  # clicking again reverses it
    # A sort this kind does not have falls back to the name and keeps the other filters.
    assert names("sort=col-42&search=m") == ["medium", "small"]


def test_list_paginates_on_the_server(viewer_client: Client) -> None:
    KubeObject.objects.bulk_create(
        [mirror_object("Memcached", f"m-{i:03d}", api_version=MEMCACHED_API, save=False)
         for i in range(120)]
    )  # fmt: skip
    page = viewer_client.get("/k/memcached/?page=3").context["page"]
    assert page.paginator.count == 120
    assert [row.cr.name for row in page][:1] == ["m-100"]


def test_list_polls_rows_and_htmx_gets_the_fragment(
    viewer_client: Client,
) -> None:
    memcached_with_pods("cache-a", size=1)
    full = viewer_client.get("/k/memcached/").content.decode()
    assert 'hx-trigger="every 2s"' in full
    fragment = viewer_client.get("/k/memcached/", HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<div id="cr-table">')
    assert '<tbody id="cr-rows" hx-get="/k/memcached/?shown=' in fragment
    assert "<html" not in fragment


def test_list_query_count_does_not_grow_with_the_page(viewer_client: Client) -> None:
    for i in range(30):
        mirror_object("Memcached", f"m-{i}", api_version=MEMCACHED_API)
    with CaptureQueriesContext(connection) as small:
        viewer_client.get("/k/memcached/", HTTP_HX_REQUEST="true")
    for i in range(30, 80):  # stale ones too: whether a row is stale reads its deletion
        mirror_object("Memcached", f"m-{i}", api_version=MEMCACHED_API, generation=2)
    with CaptureQueriesContext(connection) as large:
        viewer_client.get("/k/memcached/", HTTP_HX_REQUEST="true")
    assert len(large) == len(small)
    assert len(large) <= 9  # the mirror's freshness included, renewed with the rows


def test_list_marks_a_cr_being_deleted_terminating_and_the_poll_sees_it(
    viewer_client: Client,
) -> None:
    cr = mirror_object("Memcached", "going", api_version=MEMCACHED_API, generation=2)
    first = viewer_client.get("/k/memcached/")
    assert "Terminating</span>" not in first.content.decode()
    shown = first.context["shown"]
    cr.deleted_at = timezone.now()
    cr.save()
    polled = viewer_client.get(f"/k/memcached/?shown={shown}", HTTP_HX_REQUEST="true")
    html = polled.content.decode()
    assert polled.status_code == 200 and "Terminating</span>" in html
    assert ">stale</span>" not in html  # its generation moved with the deletion


def test_all_kinds_list_shows_every_registered_kind(viewer_client: Client) -> None:
    mirror_object("Memcached", "m1", api_version=MEMCACHED_API)
    mirror_object("WebServer", "w1", api_version="my.domain/v1")
    mirror_object("Deployment", "not-a-cr", api_version="apps/v1")
    names = [row.cr.name for row in viewer_client.get("/crs/").context["page"]]
    assert sorted(names) == ["m1", "w1"]


def test_detail_shows_nodes_tree_and_marks_missing_children(viewer_client: Client) -> None:
    cr = memcached_with_pods("cache-a", size=3)
    web = mirror_object("WebServer", "web", api_version="my.domain/v1")
    html = viewer_client.get("/k/memcached/default/cache-a/").content.decode()
    for pod in cr.status["nodes"]:
        assert pod in html
    assert "ReplicaSet" in html and "cache-a-7d9f" in html
    assert "kubesim-node-1" in html
    web_html = viewer_client.get(f"/k/webserver/default/{web.name}/").content.decode()
    assert web_html.count("not there: the next reconcile creates it") == 2  # Deployment, Service


def test_the_tree_tells_an_expected_child_that_exists_unowned_from_a_missing_one(
    viewer_client: Client,
) -> None:
    mirror_object("WebServer", "web", api_version="my.domain/v1")
    mirror_object("Deployment", "web", api_version="apps/v1")  # kubectl's: no owner
    rows = viewer_client.get("/k/webserver/default/web/").context["tree"]
    shown = {(n.kind, n.name): (n.health, n.detail) for _, n in rows[1:]}
    assert shown == {
        ("Deployment", "web"): (
            "failed",
            "exists, created outside opsboard (no owner), not adopted yet: see the Diagnosis",
        ),
        ("Service", "web-service"): ("missing", MISSING),
    }


def test_detail_rows_describe_each_pod_in_status_nodes_and_each_tree_node(
    viewer_client: Client,
) -> None:
    cr = memcached_with_pods("cache-b", size=2)
    first, _ = cr.status["nodes"]
    cr.status["nodes"].append("cache-b-<gone>")  # named by the CR, not mirrored
    cr.save()
    html = viewer_client.get("/k/memcached/default/cache-b/").content.decode()
    assert (
        f'<tr><td class="mono"><a href="/k/memcached/default/cache-b/pods/{first}/log/" '
        f'title="Its log">{first}</a></td><td>Running</td>'
        '<td><span class="badge c-true">ready</span></td><td>kubesim-node-1</td><td>0</td>'
    ) in html
    assert (
        '<td class="mono">cache-b-&lt;gone&gt;</td>'
        '<td colspan="5"><small>not in the mirror yet</small>'
    ) in html
    assert (
        '<td style="padding-left: 3.5rem" class="depth-3"><span class="kind">Pod</span> '
        f'<span class="mono"><a href="/k/memcached/default/cache-b/pods/{first}/log/" '
        f'title="Its log">{first}</a></span>'
    ) in html


def test_a_pods_node_says_when_it_is_not_ready_or_cordoned(viewer_client: Client) -> None:
    """From the mirrored Nodes: one ready and schedulable says nothing."""
    memcached_with_pods("cache-n", size=2)
    first, second = KubeObject.objects.filter(kind="Pod", name__startswith="cache-n-").order_by(
        "name"
    )
    second.body["spec"]["nodeName"] = "kubesim-node-2"
    second.spec = second.body["spec"]
    second.save()
    mirror_object("Node", "kubesim-node-1", namespace="", health="Available")
    mirror_object("Node", "kubesim-node-2", namespace="", health="Degraded",
                  spec={"unschedulable": True})  # fmt: skip
    html = viewer_client.get("/k/memcached/default/cache-n/").content.decode()
    assert f'title="Its log">{first.name}</a></td><td>Running</td>' in html
    assert "</span></td><td>kubesim-node-1</td><td>0</td>" in html
    assert '<td>kubesim-node-2 <span class="badge c-false">NotReady, cordoned</span></td>' in html


def test_a_pods_restarts_name_its_last_exit_where_it_says_more_than_error(
    viewer_client: Client,
) -> None:
    memcached_with_pods("cache-c", size=2)
    oom, crashed = KubeObject.objects.filter(kind="Pod", name__startswith="cache-c-")
    for pod, reason in ((oom, "OOMKilled"), (crashed, "Error")):
        pod.status["containerStatuses"] = [{
            "name": "memcached", "restartCount": 4,
            "lastState": {"terminated": {"reason": reason, "exitCode": 1}},
        }]  # fmt: skip
        pod.body["status"] = pod.status  # as the watcher writes both
        pod.save()
    html = viewer_client.get("/k/memcached/default/cache-c/").content.decode()
    assert f'title="Its log">{oom.name}</a></td>' in html and "<td>4 (OOMKilled)</td>" in html
    assert "<td>4</td>" in html and "(Error)" not in html


def test_the_tree_counts_a_daemonsets_ready_pods_and_none_selected_is_not_ok(
    viewer_client: Client,
) -> None:
    cr = mirror_object("Ptemplate", "dev", api_version="hwe.example.com/v1alpha1")
    for name, status in (("none", {"desiredNumberScheduled": 0, "numberReady": 0}),
                         ("half", {"desiredNumberScheduled": 2, "numberReady": 1}),
                         ("all", {"desiredNumberScheduled": 2, "numberReady": 2})):  # fmt: skip
        mirror_object("DaemonSet", name, api_version="apps/v1", owner=cr, status=status)
    rows = viewer_client.get("/k/ptemplate/default/dev/").context["tree"]
    shown = {n.name: (n.health, n.detail) for _, n in rows if n.kind == "DaemonSet"}
    assert shown == {
        "none": ("progressing", "on no node"),
        "half": ("progressing", "1/2 ready"),
        "all": ("ok", "2/2 ready"),
        "dev-consumer": ("missing", MISSING),  # the expected one
    }


def test_the_tree_shows_under_each_pod_the_claims_it_mounts(viewer_client: Client) -> None:
    shop = mirror_object("BookStore", "shop", api_version="blog.velotio.com/v1alpha1")
    db = mirror_object("StatefulSet", "shop-db", api_version="apps/v1", owner=shop,
                       spec={"replicas": 2}, status={"readyReplicas": 2})  # fmt: skip
    labels = {"app": "shop-db"}
    mirror_object("Service", "shop-db", owner=shop, spec={"selector": labels})
    for i, has in enumerate(("2Gi", "1Gi")):
        pod = running_pod(f"shop-db-{i}", owner=db, labels=labels, save=False)
        pod.spec["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-shop-db-{i}"}}
        ]
        pod.body["spec"] = pod.spec
        pod.save()
        mirror_object("PersistentVolumeClaim", f"data-shop-db-{i}",
                      spec={"resources": {"requests": {"storage": "2Gi"}}},
                      status={"phase": "Bound", "capacity": {"storage": has}})  # fmt: skip
    rows = viewer_client.get("/k/bookstore/default/shop/").context["tree"]
    claims = [(depth, n.name, n.health, n.detail) for depth, n in rows
              if n.kind == "PersistentVolumeClaim"]  # fmt: skip
    # Once each, under its pod (CR → StatefulSet → Pod → claim), not again under the Service.
    assert claims == [
        (3, "data-shop-db-0", "ok", "Bound, 2Gi"),
        (3, "data-shop-db-1", "progressing", "Bound, 1Gi growing to 2Gi"),
    ]


def test_rows_built_by_the_hundred_are_escaped_as_format_html_escapes() -> None:
    values = [
        "<a href=\"x\" onclick='y'>",
        "Tom & Jerry",
        mark_safe("<b>already safe</b>"),
        gettext_lazy("Name"),
        3,
        1.5,
        None,
        "—",
    ]
    template = "".join(f'<td class="c{i}">{{}}</td>' for i in range(len(values)))
    made = html_row(template, *values)
    assert made == format_html(template, *values)
    assert "&lt;a href=&quot;x&quot; onclick=&#x27;y&#x27;&gt;" in made and "<b>already" in made
    assert isinstance(made, SafeString)


def test_detail_flags_a_stale_status(viewer_client: Client) -> None:
    mirror_object("Memcached", "old", api_version=MEMCACHED_API, generation=4,
                  observed_generation=3)  # fmt: skip
    html = viewer_client.get("/k/memcached/default/old/").content.decode()
    assert "Status is stale:" in html


def test_detail_events_show_when_last_seen_as_an_age_newest_first(
    viewer_client: Client,
) -> None:
    cr = mirror_object("Memcached", "cache-e", api_version=MEMCACHED_API)
    now = timezone.now()

    def event(name: str, reason: str, **stamps: Any) -> None:
        row = mirror_object("Event", name, owner=cr, save=False)
        row.body |= {"reason": reason, "type": "Normal", "message": reason} | stamps
        row.save()

    stamp = "%Y-%m-%dT%H:%M:%SZ"
    event("a", "Scaled", count=4, lastTimestamp=(now - timedelta(minutes=7)).strftime(stamp))
    # events/v1's series: its lastObservedTime is a MicroTime, newer than the event's eventTime.
    seen = (now - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event("b", "Pulled", eventTime=(now - timedelta(minutes=30)).strftime(stamp),
          series={"count": 2, "lastObservedTime": seen})  # fmt: skip
    html = viewer_client.get("/k/memcached/default/cache-e/").content.decode()
    events = html[html.index('id="events-h"') :]
    assert events.index("Pulled") < events.index("Scaled")
    assert f'<time datetime="{seen}" title="{seen}">2m ago</time>' in events
    assert ">7m ago</time>" in events


def test_detail_shows_a_nested_spec_as_dotted_paths() -> None:
    spec = {"bookApp": {"image": "app:1", "replicas": 2, "ports": [80, 443]},
            "bookDB": {"volumes": [{"size": "2Gi"}], "tls": False, "extra": {}}}  # fmt: skip
    assert spec_fields(spec) == [
        ("bookApp.image", "app:1"), ("bookApp.replicas", "2"), ("bookApp.ports", "80, 443"),
        ("bookDB.volumes", "[{size: 2Gi}]"), ("bookDB.tls", "false"), ("bookDB.extra", "{}"),
    ]  # fmt: skip
    # An empty label value is shown, not a blank; an absent field in a diff is a dash.
    assert spec_fields({"nodeSelector": {"node-role.kubernetes.io/worker": ""}}) == [
        ("nodeSelector.node-role.kubernetes.io/worker", '""')
    ]
    assert [diff_cell(v) for v in (None, "", 3, True, {"a": "b"})] == [
        "—",
        '""',
        "3",
        "true",
        "a=b",
    ]


def test_detail_renders_the_spec_rows(viewer_client: Client) -> None:
    mirror_object("Memcached", "nested", api_version=MEMCACHED_API,
                  spec={"size": 3, "tuning": {"threads": 4}})  # fmt: skip
    html = viewer_client.get("/k/memcached/default/nested/").content.decode()
    assert "<dt>tuning.threads</dt><dd><code>4</code></dd>" in html
    assert "{&#x27;threads&#x27;" not in html


def test_detail_service_lists_the_pods_it_selects(viewer_client: Client) -> None:
    web = mirror_object("WebServer", "web", api_version="my.domain/v1")
    labels = {"app": "web"}
    mirror_object("Service", "web-service", owner=web, spec={"selector": labels})
    dep = mirror_object("Deployment", "web", api_version="apps/v1", owner=web)
    from tests.dashboard.mirror_factory import running_pod

    running_pod("web-1", owner=dep, labels=labels)
    running_pod("other", owner=dep, labels={"app": "other"})
    rows = viewer_client.get("/k/webserver/default/web/").context["tree"]
    at = next(i for i, (_, node) in enumerate(rows) if node.kind == "Service")
    depth, service = rows[at]
    assert [p.name for p in service.children] == ["web-1"]
    assert rows[at + 1][0] == depth + 1 and rows[at + 1][1].name == "web-1"


def test_detail_query_count_does_not_grow_with_pods(viewer_client: Client) -> None:
    memcached_with_pods("small", size=2)
    memcached_with_pods("big", size=100)
    with CaptureQueriesContext(connection) as small:
        viewer_client.get("/k/memcached/default/small/live/")
    with CaptureQueriesContext(connection) as big:
        viewer_client.get("/k/memcached/default/big/live/")
    assert len(big) == len(small)


def test_detail_page_query_count_does_not_grow_with_pods_and_reads_freshness_once(
    viewer_client: Client,
) -> None:
    memcached_with_pods("small", size=10)
    memcached_with_pods("big", size=100)
    with CaptureQueriesContext(connection) as small:
        viewer_client.get("/k/memcached/default/small/")
    with CaptureQueriesContext(connection) as big:
        page = viewer_client.get("/k/memcached/default/big/").content.decode()
    assert "The watcher is down" in page  # the banner, from the freshness the view read
    assert len(big) == len(small)
    # The diagnosis and the page's banner share one read of the mirror's freshness.
    assert sum('"mirror_kindwatch"' in q["sql"] for q in big.captured_queries) == 1


def test_unknown_kind_and_object_are_404(viewer_client: Client) -> None:
    assert viewer_client.get("/k/nope/").status_code == 404
    assert viewer_client.get("/k/memcached/default/ghost/").status_code == 404


def test_a_404_says_what_was_not_found_never_the_exception(
    viewer_client: Client, settings: Any
) -> None:
    settings.DEBUG = False
    response = viewer_client.get("/k/gadgets.example.com/")  # no URL pattern takes a dot
    assert response.status_code == 404
    page = response.content.decode()
    assert "Resolver404" not in page and "Http404" not in page
    assert "There is nothing at /k/gadgets.example.com/." in page
    # A view's own reason is kept: it says more than the address.
    page = viewer_client.get("/k/nope/").content.decode()
    assert "No controller named &#x27;nope&#x27;" in page


def test_pages_warn_when_no_watcher_keeps_the_mirror(viewer_client: Client) -> None:
    html = viewer_client.get("/").content.decode()
    assert "The watcher is down:" in html


def test_pages_say_how_fresh_the_mirror_is_while_the_watcher_runs(viewer_client: Client) -> None:
    from django.utils import timezone

    from opsboard.mirror.models import KindWatch, WatcherHeartbeat

    now = timezone.now()
    WatcherHeartbeat.objects.create(
        identity="w-1", is_leader=True, started_at=now, heartbeat_at=now
    )
    KindWatch.objects.create(api_version="v1", kind="Memcached", last_event_at=now)
    html = viewer_client.get("/k/memcached/").content.decode()
    assert "Mirror live · last change 0s ago" in html
    assert "The watcher is down" not in html


def test_logout_is_a_post_and_leads_to_the_login_page(viewer_client: Client) -> None:
    response = viewer_client.post("/accounts/logout/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert viewer_client.get("/").status_code == 302


def test_a_missing_object_says_what_is_missing(viewer_client: Client) -> None:
    html = viewer_client.get("/k/memcached/default/ghost/").content.decode()
    assert "Memcached default/ghost is not in the mirror" in html


def test_a_search_that_looks_like_a_lookup_is_a_plain_name_search(viewer_client: Client) -> None:
    mirror_object("Memcached", "alpha", api_version=MEMCACHED_API, labels={"team": "red"})
    for query in ("team__in=red", "team__regex=.*", "=red"):
        response = viewer_client.get("/k/memcached/", {"search": query})
        assert response.status_code == 200, query
        assert list(response.context["page"]) == [], query
