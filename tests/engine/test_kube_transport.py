"""Where ApiKube's requests go: a host with a path prefix (a cluster behind Rancher's or
a gateway's path), and an HTTP proxy. A real HTTP server on 127.0.0.1 records each
request line and answers `{}`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from controllers.kube import ApiKube
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
