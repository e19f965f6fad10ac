"""Every API call the engine makes for Ptemplates is one k8s/rbac/role.yaml grants.

kubesim's request log names each call's verb and resource; the test's own calls carry a
user agent of their own and are left out.
"""

from __future__ import annotations

from typing import Any

import pytest

from controllers.base import DAEMONSET
from controllers.kube import ApiKube
from controllers.ptemplate.desired import MODULE, PTEMPLATE, SECRET
from tests.controllers.manifests import grants_used, operator_grants
from tests.controllers.ptemplate_helpers import SPEC, advertise, install_kmm_crd, make_secret
from tests.controllers.test_rbac_in_use import TEST_AGENT, _condition
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.kubesim_only, pytest.mark.django_db(transaction=True)]


def test_the_ptemplate_operator_uses_only_what_the_rbac_grants(
    kube_api_client: Any, kubesim_server: Any, operator_crds: None, engine: Any,
    kube: ApiKube, namespace: str,
) -> None:  # fmt: skip
    install_kmm_crd(kubesim_server.kubeconfig_path)
    kube_api_client.user_agent = TEST_AGENT
    kubesim_server.clear_request_log()
    engine.controllers = "controllers.ptemplate"
    worker = engine.start_worker(concurrency=2, wait=False)
    engine.start_watcher()
    engine.wait_worker_ready(worker)
    device = "acme.com/rbac-accel"
    advertise(kube, device, 1)
    try:
        body = {"apiVersion": PTEMPLATE.api_version, "kind": PTEMPLATE.kind}
        kube.create(PTEMPLATE, {**body, "metadata": {"name": "nosecret", "namespace": namespace},
                                "spec": {**SPEC, "deviceResource": device, "deviceCount": 1,
                                         "imagePullSecret": "never-created"}})  # fmt: skip
        make_secret(kube, namespace)
        kube.create(PTEMPLATE, {**body, "metadata": {"name": "pt", "namespace": namespace},
                                "spec": {**SPEC, "deviceResource": device, "deviceCount": 1}})  # fmt: skip
        wait_for(lambda: _condition(kube, PTEMPLATE, namespace, "pt", "Available") == "True",
                   what="pt Available")  # fmt: skip
        wait_for(
            lambda: _condition(kube, PTEMPLATE, namespace, "nosecret", "Degraded") == "True",
            what="nosecret Degraded",
        )
        kube.patch(DAEMONSET, namespace, "pt-consumer",
                   {"spec": {"template": {"spec": {"nodeSelector": {"x": "y"}}}}})  # fmt: skip
        kube.patch(MODULE, namespace, "pt", {"spec": {"selector": {"x": "y"}}})
        wait_for(lambda: (kube.get(MODULE, namespace, "pt") or {})["spec"]["selector"]
                   == SPEC["nodeSelector"], what="Module selector restored")  # fmt: skip
    finally:
        advertise(kube, device, None)

    granted = operator_grants()
    used = grants_used(kubesim_server.request_log(), except_agent=TEST_AGENT)
    assert {
        ("kmm.sigs.x-k8s.io", "modules", "create"),
        ("apps", "daemonsets", "create"),
        ("", SECRET.plural, "get"),
        ("hwe.example.com", "ptemplates/status", "patch"),
    } <= used
    assert used - granted == set(), sorted(used)
