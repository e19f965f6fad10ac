"""A kubeconfig's certificate data, as kind and kubeadm write it (the cluster's CA, the
user's client certificate and key inline), used from memory: the official loader's files
would outlive every process that ends without a clean exit, a private key among them.

kubesim only: the client certificate is signed with kubesim's CA key, which a real
cluster does not hand to its tests."""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client

from controllers.kube import ApiKube, load_api_client
from kubesim.tls import Authority
from tests.fixtures.kubesim import KubesimHandle

pytestmark = pytest.mark.kubesim_only


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _certified_kubeconfig(
    kubesim_server: KubesimHandle, path: Path, *, user: str, ca: bytes | None = None
) -> Path:
    """kubesim's kubeconfig with its token swapped for a client certificate naming `user`
    in group system:masters, as kind's admin; `ca`: another CA instead of kubesim's."""
    authority: Authority = kubesim_server.sim.authority  # type: ignore[union-attr]
    certificate, key = authority.client_pair(user, ("system:masters",))
    kubeconfig: dict[str, Any] = yaml.safe_load(kubesim_server.kubeconfig_path.read_text())
    if ca is not None:
        kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"] = _b64(ca)
    kubeconfig["users"][0]["user"] = {
        "client-certificate-data": _b64(certificate),
        "client-key-data": _b64(key),
    }
    path.write_text(yaml.safe_dump(kubeconfig))
    return path


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The process's temporary directory, for this test: what is left in it is seen."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def test_a_kubeconfigs_certificates_and_key_serve_from_memory_leaving_no_file(
    kubesim_server: KubesimHandle, tmp_path: Path, private_tmp: Path
) -> None:
    kubeconfig = _certified_kubeconfig(
        kubesim_server, tmp_path / "kubeconfig", user="kubernetes-admin"
    )
    api = load_api_client(kubeconfig=str(kubeconfig))
    try:
        assert list(private_tmp.iterdir()) == []  # before any connection: nothing to read
        review = client.AuthenticationV1Api(api).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
        assert review.status.user_info.username == "kubernetes-admin"
        assert review.status.user_info.groups == ["system:masters", "system:authenticated"]
        # The engine's own requests, on connections of the same pools.
        namespaces = ApiKube(api).request("GET", "/api/v1/namespaces")
        assert any(n["metadata"]["name"] == "default" for n in namespaces["items"])
        assert list(private_tmp.iterdir()) == []
    finally:
        api.close()

    # A second client in the same process reads the kubeconfig afresh (the loader
    # remembers what it wrote by content: it must not hand back a file already gone).
    again = load_api_client(kubeconfig=str(kubeconfig))
    try:
        assert client.VersionApi(again).get_code().major == "1"
    finally:
        again.close()


def test_the_server_is_still_verified_against_the_kubeconfigs_ca(
    kubesim_server: KubesimHandle, tmp_path: Path, private_tmp: Path
) -> None:
    stranger_ca = Authority(None).cert_pem
    kubeconfig = _certified_kubeconfig(
        kubesim_server, tmp_path / "kubeconfig", user="kubernetes-admin", ca=stranger_ca
    )
    api = load_api_client(kubeconfig=str(kubeconfig))
    try:
        with pytest.raises(urllib3.exceptions.MaxRetryError, match="CERTIFICATE_VERIFY_FAILED"):
            client.VersionApi(api).get_code()
    finally:
        api.close()
    assert list(private_tmp.iterdir()) == []
