"""Installing the CRDs as a user of a shared cluster, who may not write CRDs: `make run`
goes on with those a cluster admin installed, and says what to ask for when one is
missing. kubesim enforces RBAC as kube-apiserver does; a real cluster runs the same."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.test import override_settings
from kubernetes import client

from controllers.kube import ApiKube
from opsboard.core import manifests
from opsboard.embedded.ports import free_port
from tests.controllers.manifests import CRD_FILES, K8S
from tests.kubesim.identities import (
    client_with_token,
    kubeconfig_with_token,
    service_account_token,
)

OURS = list(manifests.documents(CRD_FILES))
KMM = list(manifests.documents(sorted((K8S / "third_party").glob("*/*.yaml"))))


@pytest.fixture
def nobody_token(kube: ApiKube, kube_api_client: client.ApiClient, namespace: str) -> str:
    """A ServiceAccount's token, bound to no role: it may discover what the cluster serves,
    as every authenticated user may, and write nothing cluster-wide. `kube`: our CRDs are
    installed, as a cluster admin would have."""
    return service_account_token(kube_api_client, namespace, "nobody")


@pytest.fixture
def nobody(kube_api_client: client.ApiClient, nobody_token: str) -> Iterator[client.ApiClient]:
    with client_with_token(kube_api_client, nobody_token) as api:
        yield api


def _crd_of_a_group_nobody_serves() -> dict[str, Any]:
    crd = copy.deepcopy(KMM[0])
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd["metadata"]["name"] = f"{crd['spec']['names']['plural']}.{group}"
    crd["spec"]["group"] = group
    return crd


def test_served_crds_are_kept_when_the_user_may_not_update_them(nobody: client.ApiClient) -> None:
    lines = manifests.install_crds(nobody, OURS)

    kept = "served by the cluster (this kubeconfig's user may not update its CRD)"
    assert f"kept Memcached (cache.example.com): {kept}" in lines
    assert len(lines) == len(OURS)


def test_a_missing_crd_the_user_may_not_create_says_what_to_ask_for(
    nobody: client.ApiClient, kube_api_client: client.ApiClient
) -> None:
    crd = _crd_of_a_group_nobody_serves()

    with pytest.raises(manifests.CrdsForbidden) as raised:
        manifests.install_crds(nobody, [*OURS, crd])

    message = str(raised.value)
    assert f"the cluster does not serve Module ({crd['spec']['group']}) yet" in message
    assert "Memcached" not in message  # served: not asked for
    assert "kubectl apply -f k8s/crd/" in message
    ext = client.ApiextensionsV1Api(kube_api_client)
    with pytest.raises(client.ApiException) as gone:
        ext.read_custom_resource_definition(crd["metadata"]["name"])
    assert gone.value.status == 404


def test_a_third_party_crd_the_user_may_not_create_is_said_and_left(
    nobody: client.ApiClient,
) -> None:
    crd = _crd_of_a_group_nobody_serves()

    lines = manifests.install_missing(nobody, [crd])

    assert lines == [
        f"not installed: Module ({crd['spec']['group']}), which this kubeconfig's user may not "
        "create (403); its controller fails until a cluster admin applies k8s/third_party/"
    ]


def test_bootstrap_as_that_user_goes_on_with_the_served_crds(
    kubesim_server: Any, nobody_token: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = Path(kubesim_server.kubeconfig_path)
    path = kubeconfig_with_token(admin, nobody_token, user="nobody", path=tmp_path / "nobody")

    with override_settings(KUBECONFIG=str(path)):
        call_command("bootstrap", "--no-samples")

    out = capsys.readouterr().out
    assert "kept WebServer (my.domain): served by the cluster" in out
    assert "kept Module (kmm.sigs.x-k8s.io): served by the cluster" in out


def test_bootstrap_against_a_server_that_does_not_answer_says_so(tmp_path: Path) -> None:
    port = free_port()
    path = tmp_path / "down.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "down",
        "clusters": [{"name": "down", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "down", "context": {"cluster": "down", "user": "u"}}],
    }))  # fmt: skip

    with override_settings(KUBECONFIG=str(path)), pytest.raises(CommandError) as raised:
        call_command("bootstrap", "--no-samples")

    assert str(raised.value) == (
        f"could not install CRDs and samples into the cluster at https://127.0.0.1:{port} "
        f"({path}): it did not answer ([Errno 111] Connection refused): is it up, at that address?"
    )


def test_bootstrap_with_a_kubeconfig_that_is_not_one_says_so(tmp_path: Path) -> None:
    path = tmp_path / "broken.kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\n")

    with override_settings(KUBECONFIG=str(path)), pytest.raises(CommandError) as raised:
        call_command("bootstrap", "--no-samples")

    assert str(raised.value).startswith(f"cannot use the kubeconfig {path}: ")
    assert "current-context" in str(raised.value)


def test_bootstrap_with_a_context_the_kubeconfig_lacks_names_those_it_has(
    kubesim_server: Any,
) -> None:
    path = kubesim_server.kubeconfig_path
    settings = override_settings(KUBECONFIG=str(path), KUBE_CONTEXT="staging")
    with settings, pytest.raises(CommandError) as raised:
        call_command("bootstrap", "--no-samples")

    have = yaml.safe_load(Path(path).read_text())["current-context"]
    assert str(raised.value) == (
        f"cannot use the kubeconfig {path}: {path} has no context 'staging' (it has: {have}): "
        "name one of those in OPSBOARD_KUBE_CONTEXT, or leave it empty for the kubeconfig's "
        "current-context"
    )


def test_bootstrap_with_a_token_the_server_refuses_says_so(
    kubesim_server: Any, tmp_path: Path
) -> None:
    admin, stale = Path(kubesim_server.kubeconfig_path), "not-a-token-of-this-cluster"
    path = kubeconfig_with_token(admin, stale, user="someone", path=tmp_path / "stale")

    with override_settings(KUBECONFIG=str(path)), pytest.raises(CommandError) as raised:
        call_command("bootstrap", "--no-samples")

    assert str(raised.value).endswith(
        f"({path}): 401 Unauthorized: the server did not accept the kubeconfig's credentials"
    )
