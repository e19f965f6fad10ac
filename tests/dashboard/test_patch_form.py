"""Who may change a CR, and bad input refused inline with nothing sent to the cluster.

No cluster is configured here (KUBECONFIG points nowhere), so a request that got past
validation would answer "No cluster" — these tests prove it never gets that far."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from opsboard.audit.models import AuditEntry
from opsboard.mirror.models import KubeObject
from tests.dashboard.mirror_factory import memcached_with_pods, mirror_object

pytestmark = pytest.mark.django_db
PATCH = "/k/memcached/default/cache-a/patch/"
APPLY = "/k/memcached/default/cache-a/patch/apply/"
RECONCILE = "/k/memcached/default/cache-a/reconcile/"


@pytest.fixture(autouse=True)
def no_cluster(settings, tmp_path) -> None:
    settings.KUBECONFIG = str(tmp_path / "missing-kubeconfig")
    memcached_with_pods("cache-a", size=3)


def test_viewer_sees_no_patch_form_and_the_actions_disabled_with_the_reason(
    viewer_client: Client, admin_user: User
) -> None:
    html = viewer_client.get("/k/memcached/default/cache-a/").content.decode()
    assert 'name="size"' not in html
    assert re.search(r'<button type="button" disabled[^>]*>Reconcile now</button>', html)
    assert "needs operator in default; you are viewer" in html
    assert f"Ask an admin ({admin_user.username}) to grant it." in html  # as the 403 says


def test_the_disabled_reconcile_button_says_why_beside_it_too(
    viewer_client: Client, admin_user: User
) -> None:
    html = viewer_client.get("/k/memcached/default/cache-a/").content.decode()
    section = html[html.index('aria-labelledby="reconcile-h"') :]
    section = section[: section.index("</section>")]
    button = re.search(r'<button type="button" disabled aria-describedby="([^"]+)"', section)
    assert button, section
    why = re.search(rf'<p class="muted why" id="{button.group(1)}">([^<]+)</p>', section)
    assert why, section
    assert why.group(1) == (
        "Not allowed: this needs operator in default; you are viewer. "
        f"Ask an admin ({admin_user.username}) to grant it."
    )


def test_viewer_gets_403_on_forged_posts(viewer_client: Client) -> None:
    for url in (PATCH, APPLY, RECONCILE):
        response = viewer_client.post(url, {"size": 5, "image": "memcached:1.6"})
        assert response.status_code == 403, url
    # Audited as refused (test_refusals_audited), never as applied.
    assert set(AuditEntry.objects.values_list("result", flat=True)) == {"rejected"}


def test_anonymous_post_is_sent_to_login(client: Client) -> None:
    response = client.post(PATCH, {"size": 5})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_patch_rejects_get(operator_client: Client) -> None:
    assert operator_client.get(PATCH).status_code == 405


def test_operator_sees_the_form_filled_from_the_mirror(operator_client: Client) -> None:
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    assert 'name="size"' in html and 'value="3"' in html
    assert 'value="memcached:1.4.36-alpine"' in html
    assert "Reconcile now" in html


def test_forms_carry_the_csrf_token_for_htmx(operator_client: Client) -> None:
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert "csrfmiddlewaretoken" in html


def test_post_without_csrf_token_is_refused(operator) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    assert client.post(PATCH, {"size": 5}).status_code == 403


def _post_bad(client: Client, data: dict[str, str], message: str) -> None:
    response = client.post(PATCH, {"size": "3", "image": "memcached:1.6", **data},
                           HTTP_HX_REQUEST="true")  # fmt: skip
    html = response.content.decode()
    assert response.status_code == 200  # htmx swaps 200s only: errors re-render the form
    assert message in html
    assert 'role="alert"' in html
    assert "No cluster" not in html  # nothing was sent
    assert not AuditEntry.objects.exists()


def test_negative_size_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"size": "-1"}, "greater than or equal to 0")


def test_non_numeric_size_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"size": "three"}, "Enter a whole number")


def test_too_large_size_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"size": "101"}, "less than or equal to 100")  # CRD maximum


def test_malformed_image_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"image": "UPPER CASE:bad"}, "Not a valid image reference")


def test_an_image_name_too_long_for_a_registry_is_refused_saying_what_to_do(
    operator_client: Client,
) -> None:
    image = "registry.example.com/team/" + "a" * 577 + ":v1"  # 606 characters
    _post_bad(
        operator_client,
        {"image": image},
        "This image&#x27;s name (the registry and repository path, before the tag) is 603 "
        "characters long; a registry accepts at most 255. Use an image with a shorter "
        "repository path.",
    )


def test_an_image_reference_longer_than_the_crd_allows_says_the_limit(
    operator_client: Client,
) -> None:
    image = "registry.example.com/team/app@sha256:" + "a" * 500  # a valid name, 537 long
    _post_bad(
        operator_client, {"image": image}, "537 characters long; this kind accepts at most 512"
    )


def test_the_image_field_lets_a_long_paste_through_to_be_explained(
    operator_client: Client,
) -> None:
    """A maxlength attribute would make the browser cut a pasted image short, silently."""
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    field = re.search(r'<input [^>]*name="image"[^>]*>', html)
    assert field and "maxlength" not in field.group(0), field


def test_empty_size_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"size": ""}, "This field is required")


def test_valid_input_with_no_cluster_says_so(operator_client: Client) -> None:
    response = operator_client.post(PATCH, {"size": "5", "image": "memcached:1.6"},
                                    HTTP_HX_REQUEST="true")  # fmt: skip
    assert response.status_code == 200
    assert "No cluster" in response.content.decode()


def test_a_context_the_kubeconfig_lacks_is_said_with_the_ones_it_has(
    operator_client: Client, settings, tmp_path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: here\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: here, context: {cluster: c, user: u}}]\n"
    )
    settings.KUBECONFIG, settings.KUBE_CONTEXT = str(kubeconfig), "staging"
    response = operator_client.post(PATCH, {"size": "5", "image": "memcached:1.6"},
                                    HTTP_HX_REQUEST="true")  # fmt: skip
    assert response.status_code == 200
    assert (
        f"No cluster: {kubeconfig} has no context &#x27;staging&#x27; (it has: here): name one "
        "of those in OPSBOARD_KUBE_CONTEXT"
    ) in response.content.decode()


def test_an_in_cluster_config_outside_a_pod_is_said(
    operator_client: Client, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    settings.KUBECONFIG = ""  # in-cluster configuration, as in a pod
    response = operator_client.post(PATCH, {"size": "5", "image": "memcached:1.6"},
                                    HTTP_HX_REQUEST="true")  # fmt: skip
    assert (
        "No cluster: the in-cluster service account cannot be used: Service host/port is not set."
        in response.content.decode()
    )


def test_apply_with_no_cluster_is_audited_as_failed(operator_client: Client) -> None:
    data = {"size": "5", "image": "memcached:1.6", "resource_version": "7"}
    html = operator_client.post(APPLY, data, HTTP_HX_REQUEST="true").content.decode()
    assert "No cluster" in html
    entry = AuditEntry.objects.get()
    assert (entry.username, entry.result) == ("otto", "failed")
    assert entry.after == {"spec.size": 5, "spec.image": "memcached:1.6"}


def test_without_javascript_the_form_answers_with_a_full_page(operator_client: Client) -> None:
    html = operator_client.post(PATCH, {"size": "-1", "image": "x"}).content.decode()
    assert "<html" in html and "greater than or equal to 0" in html


def test_unchanged_values_are_refused_inline(operator_client: Client) -> None:
    response = operator_client.post(PATCH, {"size": "3", "image": "memcached:1.4.36-alpine"},
                                    HTTP_HX_REQUEST="true")  # fmt: skip
    assert "Nothing to change" in response.content.decode()
    assert not AuditEntry.objects.exists()


def test_a_403_names_the_role_it_needs(viewer_client: Client) -> None:
    response = viewer_client.post(RECONCILE)
    assert response.status_code == 403
    text = response.content.decode()
    assert "this needs operator in default; you are viewer" in text
    assert "Ask an opsboard admin to grant it." in text  # no admin exists yet


def test_a_memory_limit_that_is_no_quantity_is_refused_inline(operator_client: Client) -> None:
    _post_bad(operator_client, {"memory": "128 MB"}, "Not a quantity: write a number of bytes")


def test_a_memory_limit_below_the_request_is_refused_inline(operator_client: Client) -> None:
    cr = KubeObject.objects.get(kind="Memcached", name="cache-a")
    cr.spec = {**cr.spec, "resources": {"requests": {"memory": "256Mi"}}}
    cr.save()
    _post_bad(
        operator_client,
        {"memory": "0.125Gi", "memory_request": "256Mi"},  # the request as the form shows it
        "Below the memory request 256Mi (spec.resources.requests.memory): a limit must be at "
        "least the request.",
    )


def test_a_request_above_its_limit_is_refused_on_the_request_asked(
    operator_client: Client,
) -> None:
    """The requests the Diagnosis names for pods that fit on no node or that a quota refuses
    are in the form; one above its limit (the API server would refuse the pods) is said on
    the field that was changed, against the form's own new limit where it has one."""
    cr = KubeObject.objects.get(kind="Memcached", name="cache-a")
    cr.spec = {**cr.spec, "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}}}
    cr.save()
    _post_bad(
        operator_client,
        {"cpu_request": "1", "cpu_limit": "500m", "memory": "256Mi"},
        "Above the cpu limit 500m (spec.resources.limits.cpu): a request must be at most the "
        "limit.",
    )
    _post_bad(
        operator_client,
        {"memory_request": "512Mi", "memory": "256Mi"},
        "Above the memory limit 256Mi (spec.resources.limits.memory): a request must be at "
        "most the limit.",
    )
    _post_bad(
        operator_client,
        {"cpu_request": "1 core", "memory": "256Mi"},
        "Not a quantity: write a number of cores, with m for thousandths, like 250m or 1.",
    )
    # Raised together, the request and the limit pass: the next step is the cluster's.
    response = operator_client.post(
        PATCH,
        {
            "size": "3",
            "image": "memcached:1.6",
            "memory_request": "512Mi",
            "memory": "1Gi",
            "cpu_limit": "500m",
        },
        HTTP_HX_REQUEST="true",
    )
    assert "No cluster" in response.content.decode()


def test_a_cpu_limit_lowered_below_the_request_is_refused_on_the_limit(
    operator_client: Client,
) -> None:
    cr = KubeObject.objects.get(kind="Memcached", name="cache-a")
    cr.spec = {**cr.spec, "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}
    cr.save()
    _post_bad(
        operator_client,
        {"cpu_request": "1", "cpu_limit": "500m"},
        "Below the cpu request 1 (spec.resources.requests.cpu): a limit must be at least the "
        "request. Give a larger limit, or a smaller request.",
    )


def test_the_requests_are_labelled_and_offered_as_the_cr_has_them(
    operator_client: Client,
) -> None:
    cr = KubeObject.objects.get(kind="Memcached", name="cache-a")
    cr.spec = {**cr.spec, "resources": {"requests": {"cpu": "250m"}}}
    cr.save()
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    assert ">Change size, image or resources</h2>" in html
    labels = re.findall(r'<label for="[^"]+">([^<]+)</label>', html)
    assert labels == ["Size (replicas)", "Image", "CPU request", "Memory request", "CPU limit",
                      "Memory limit"]  # fmt: skip
    cpu = re.search(r'<input type="text" name="cpu_request"[^>]*>', html)
    assert cpu and 'value="250m"' in cpu.group(0)
    assert re.search(r'<fieldset class="resources"[^>]*>\s*<legend>Resources</legend>', html)
    assert "(a node must have them free, and a quota counts them)" in html
    assert "Empty removes one. A change rolls the pods out. Sets spec.resources only." in html


def test_the_memory_limit_is_offered_empty_when_the_cr_sets_none(operator_client: Client) -> None:
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    field = re.search(r'<input type="text" name="memory"[^>]*>', html)
    assert field and "value=" not in field.group(0)
    assert "Bytes, like 128Mi or 1Gi." in html


def test_each_container_of_a_bookstore_has_its_memory_limit_checked_inline(
    operator_client: Client,
) -> None:
    """The app's limit and the database's, each on its own field, each against its own
    request: an OOMKilled MongoDB's fix is in the form, not only in kubectl."""
    spec = {"bookApp": {"replicas": 1, "image": "bookstore:1"},
            "bookDB": {"replicas": 1, "image": "mongo:7.0",
                       "resources": {"requests": {"memory": "256Mi"}}}}  # fmt: skip
    mirror_object("BookStore", "shop", api_version="blog.velotio.com/v1alpha1", spec=spec)
    html = operator_client.get("/k/bookstore/default/shop/").content.decode()
    # Each container's three fields under a legend of its own, said once for the three.
    legends = re.findall(r"<legend>([^<]+)</legend>", html)
    assert legends == ["App resources", "Resources of mongodb"]
    labels = re.findall(r'<label for="[^"]+">([^<]+)</label>', html)
    assert labels[2:10] == ["CPU request", "Memory request", "CPU limit", "Memory limit"] * 2
    assert html.count("Sets spec.bookDB.resources only.") == 1
    assert html.count("Sets spec.bookApp.resources only.") == 1
    response = operator_client.post(
        "/k/bookstore/default/shop/patch/",
        {
            "size": "1",
            "image": "bookstore:1",
            "memory": "64Mi",
            "memory_mongodb": "128Mi",
            "memory_request_mongodb": "256Mi",
            "size_mongodb": "1",
            "image_mongodb": "mongo:7.0",
        },
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert (
        "Below the memory request 256Mi (spec.bookDB.resources.requests.memory): a limit "
        "must be at least the request." in html
    )
    assert html.count("Below the memory request") == 1  # the app's 64Mi asks for no more
    assert "No cluster" not in html and not AuditEntry.objects.exists()


def _shop_with_a_2gi_claim() -> None:
    spec = {"bookApp": {"replicas": 1, "image": "bookstore:1"},
            "bookDB": {"replicas": 1, "image": "mongo:7.0", "dbSize": "2Gi"}}  # fmt: skip
    claims = [{"name": "data-shop-db-0", "requested": "2Gi", "state": "Bound", "capacity": "2Gi"}]
    mirror_object("BookStore", "shop", api_version="blog.velotio.com/v1alpha1", spec=spec,
                  status={"claims": claims})  # fmt: skip


def _post_shop(client: Client, storage: str) -> str:
    form = {"size": "1", "image": "bookstore:1", "memory": "", "memory_mongodb": "",
            "size_mongodb": "1", "image_mongodb": "mongo:7.0", "storage": storage}  # fmt: skip
    return client.post(
        "/k/bookstore/default/shop/patch/", form, HTTP_HX_REQUEST="true"
    ).content.decode()


def test_a_bookstores_volume_size_is_in_the_form_and_may_not_go_below_its_claims(
    operator_client: Client,
) -> None:
    """The fix a full or refused claim's diagnosis names is in the form; a size below what
    the claims already hold (which Kubernetes cannot shrink) is refused inline, unsent."""
    _shop_with_a_2gi_claim()
    html = operator_client.get("/k/bookstore/default/shop/").content.decode()
    assert ">Change size, image, resources or storage</h2>" in html
    field = re.search(r'<input type="text" name="storage"[^>]*>', html)
    assert field and 'value="2Gi"' in field.group(0)
    assert re.search(r'<label for="[^"]+">Volume size \(each claim\)</label>', html)
    assert "Sets spec.bookDB.dbSize only." in html

    html = _post_shop(operator_client, "1536Mi")
    assert (
        "spec.bookDB.dbSize 1536Mi is smaller than the claims data-shop-db-0 (2Gi): Kubernetes "
        "cannot shrink a PersistentVolumeClaim. Give 2Gi or more." in html
    )
    html = _post_shop(operator_client, "2 Gi")
    assert "Not a storage size: write a number of bytes with a unit, like 2Gi or 500Mi." in html
    assert "A volume needs a size above zero, like 1Gi." in _post_shop(operator_client, "0")
    html = _post_shop(operator_client, "")
    assert "Give a size, like 2Gi: a claim&#x27;s size cannot be removed." in html
    assert "No cluster" not in html and not AuditEntry.objects.exists()

    # A bigger size passes the form: the next step is the cluster's dry run.
    assert "No cluster" in _post_shop(operator_client, "4Gi")


def test_a_kind_without_claims_has_no_volume_size_nor_says_it(operator_client: Client) -> None:
    html = operator_client.get("/k/memcached/default/cache-a/").content.decode()
    assert ">Change size, image or resources</h2>" in html
    assert 'name="storage"' not in html


def test_a_ptemplates_devices_per_pod_are_in_the_form_within_the_schemas_bounds(
    operator_client: Client,
) -> None:
    """The field the Diagnosis names for consumer pods no node has the devices for."""
    spec = {"image": "acme/consumer:1", "deviceResource": "example.com/accel", "deviceCount": 2,
            "nodeSelector": {"hw": "accel"}}  # fmt: skip
    mirror_object("Ptemplate", "accel", api_version="hwe.example.com/v1alpha1", spec=spec)
    html = operator_client.get("/k/ptemplate/default/accel/").content.decode()
    assert ">Change image, resources, node selector or devices</h2>" in html
    field = re.search(r'<input type="text" name="devices"[^>]*>', html)
    assert field and 'value="2"' in field.group(0)
    assert re.search(r'<label for="[^"]+">Devices per pod</label>', html)
    assert "A whole number from 0 to 64" in html and "Sets spec.deviceCount only." in html
    for devices, error in (
        ("65", "Ensure this value is less than or equal to 64."),
        ("-1", "Ensure this value is greater than or equal to 0."),
        ("two", "Enter a whole number, like 1."),
    ):
        html = operator_client.post(
            "/k/ptemplate/default/accel/patch/",
            {"image": "acme/consumer:1", "memory": "", "devices": devices,
             "node_selector": "hw=accel"},
            HTTP_HX_REQUEST="true",
        ).content.decode()  # fmt: skip
        assert error in html, devices
    assert "No cluster" not in html and not AuditEntry.objects.exists()


def test_a_ptemplates_node_selector_is_in_the_form_as_labels_checked_before_sending(
    operator_client: Client, settings: Any
) -> None:
    """The field the Diagnosis names for pods no node matches: key=value pairs, each checked
    as Kubernetes checks a label, within the schema's one to twenty."""
    settings.KUBECONFIG = "/nonexistent/kubeconfig"  # what reaches the cluster says so
    spec = {"image": "acme/consumer:1", "deviceCount": 1,
            "nodeSelector": {"kubernetes.io/os": "linux", "hw": ""}}  # fmt: skip
    mirror_object("Ptemplate", "accel", api_version="hwe.example.com/v1alpha1", spec=spec)
    html = operator_client.get("/k/ptemplate/default/accel/").content.decode()
    field = re.search(r'<input type="text" name="node_selector"[^>]*>', html)
    assert field and 'value="hw=, kubernetes.io/os=linux"' in field.group(0)  # by key
    assert re.search(r'<label for="[^"]+">Node selector</label>', html)
    assert "a label left out is removed. Sets spec.nodeSelector only." in html
    too_many = ", ".join(f"k{i}=v" for i in range(21))
    for selector, said in (
        ("", "Give at least one label, like hardware=fpga: the pods run only on nodes that"),
        (" , ", "Give at least one label, like hardware=fpga"),
        ("hw", "“hw” is not key=value: write each label as key=value, like hardware=fpga"),
        ("-hw=x", "“-hw” is not a valid label key: a key is a name of up to 63 letters"),
        ("Example.com/hw=x", "“Example.com/hw” is not a valid label key"),
        (f"{'k' * 64}=x", "is not a valid label key"),
        ("hw=a b", "“a b” (for hw) is not a valid label value: a value is up to 63 letters"),
        ("hw=a, hw=b", "hw is given twice; give it once."),
        (too_many, "This kind takes at most 20 labels; these are 21."),
        ("hw=, kubernetes.io/os=linux", "Nothing to change: these are the current values."),
        # Valid, on to the cluster's dry run: another order, spaces, an empty value, a prefix.
        ("example.com/fpga=yes,zone = a", "No cluster"),
        ("hw=, hw=", "No cluster"),  # the same twice is one label
    ):
        html = operator_client.post(
            "/k/ptemplate/default/accel/patch/",
            {"image": "acme/consumer:1", "memory": "", "devices": "1", "node_selector": selector},
            HTTP_HX_REQUEST="true",
        ).content.decode()
        assert escape(said) in html, selector
    assert not AuditEntry.objects.exists()


def test_a_webservers_nodeport_is_in_the_form_within_the_schemas_bounds_or_empty(
    operator_client: Client, settings: Any
) -> None:
    """The field the Diagnosis names for a NodePort another Service holds; empty is allowed
    (the cluster chooses one), so the form can remove it."""
    settings.KUBECONFIG = "/nonexistent/kubeconfig"  # what reaches the cluster says so
    spec = {"replicas": 1, "image": "nginx:1.25.3", "nodePort": 30080}
    mirror_object("WebServer", "web", api_version="my.domain/v1", spec=spec)
    html = operator_client.get("/k/webserver/default/web/").content.decode()
    assert ">Change size, image, resources or NodePort</h2>" in html
    field = re.search(r'<input type="text" name="node_port"[^>]*>', html)
    assert field and 'value="30080"' in field.group(0)
    assert (
        "The port every node opens for the Service, from 30000 to 32767; another Service may "
        "not hold it. Empty lets the cluster choose one. Sets spec.nodePort only." in html
    )
    posted = {"size": "1", "image": "nginx:1.25.3"}
    for port, said in (
        ("32768", "Ensure this value is less than or equal to 32767."),
        ("80", "Ensure this value is greater than or equal to 30000."),
        ("http", "Enter a whole number, like 30080."),
        ("", "No cluster"),  # valid: removed, and on to the review
        ("30081", "No cluster"),
    ):
        html = operator_client.post(
            "/k/webserver/default/web/patch/", {**posted, "node_port": port},
            HTTP_HX_REQUEST="true",
        ).content.decode()  # fmt: skip
        assert said in html, port
