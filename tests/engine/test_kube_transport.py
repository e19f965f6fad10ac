"""Where ApiKube's requests go: a host with a path prefix (a cluster behind Rancher's or
a gateway's path), and an HTTP proxy. A real HTTP server on 127.0.0.1 records each
request line and answers `{}`. And a kubeconfig that skips TLS verification, against
kubesim's (or the real cluster's) TLS."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client

from controllers import kube
from controllers.kube import ApiKube, load_api_client
from tests.engine.toy import CONFIGMAP
from tests.support.http import QuietHandler, serving


class _Recorder(QuietHandler):
    protocol_version = "HTTP/1.1"
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    with serving(type("Recorder", (_Recorder,), {"seen": seen})) as url:
        yield url, seen


def _api(host: str, proxy: str = "") -> ApiKube:
    configuration = client.Configuration()
    configuration.host = host
    if proxy:
        configuration.proxy = proxy
    return ApiKube(client.ApiClient(configuration))


def test_a_host_s_path_prefix_is_kept(server: tuple[str, list[str]]) -> None:
    url, seen = server
    api = _api(f"{url}/k8s/clusters/c-1")
    api.get(CONFIGMAP, "ns", "a")
    api.get(CONFIGMAP, "ns", "b")  # the second through the pool the first found
    assert seen == [
        "/k8s/clusters/c-1/api/v1/namespaces/ns/configmaps/a",
        "/k8s/clusters/c-1/api/v1/namespaces/ns/configmaps/b",
    ]


def test_requests_go_through_a_configured_proxy(server: tuple[str, list[str]]) -> None:
    url, seen = server
    api = _api("http://apiserver.invalid:6443", proxy=url)
    api.get(CONFIGMAP, "ns", "a")
    # A proxy gets the absolute URL: the request went to it, not to the host.
    assert seen == ["http://apiserver.invalid:6443/api/v1/namespaces/ns/configmaps/a"]


def test_unverified_tls_is_said_once_not_on_every_request(
    kubesim_server: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kube, "_unverified", set())  # said by no earlier test (the rig's)
    kubeconfig = yaml.safe_load(Path(kubesim_server.kubeconfig_path).read_text())
    for entry in kubeconfig["clusters"]:
        entry["cluster"].pop("certificate-authority-data", None)
        entry["cluster"].pop("certificate-authority", None)
        entry["cluster"]["insecure-skip-tls-verify"] = True
    unverified = tmp_path / "kubeconfig"
    unverified.write_text(yaml.safe_dump(kubeconfig))
    with warnings.catch_warnings(record=True) as issued, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")  # as if every request's warning were new
        for _ in range(2):  # a second client of the same host is not said again
            api = ApiKube(load_api_client(kubeconfig=str(unverified)))
            assert api.get(CONFIGMAP, "default", "no-such-configmap") is None
            assert api.get(CONFIGMAP, "default", "no-such-configmap") is None
    said = [r.getMessage() for r in caplog.records if "TLS verification is off" in r.getMessage()]
    assert len(said) == 1 and "insecure-skip-tls-verify" in said[0]
    insecure = [
        w for w in issued if issubclass(w.category, urllib3.exceptions.InsecureRequestWarning)
    ]
    assert insecure == []
