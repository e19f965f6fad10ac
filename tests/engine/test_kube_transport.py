"""Where ApiKube's requests go: a host with a path prefix (a cluster behind Rancher's or
a gateway's path), and an HTTP proxy. A real HTTP server on 127.0.0.1 records each
request line and answers `{}`. A kubeconfig that skips TLS verification, against
kubesim's (or the real cluster's) TLS. And how the wire speaks HTTP/1.1 on its
connections, to a server on 127.0.0.1 that answers in each of the ways HTTP allows."""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client

from controllers import kube
from controllers.base import PermanentError, TemporaryError
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


# -- the wire: HTTP/1.1 spoken on the client's own connections --------------------------

_EVENTS = [
    b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MOD',
    b'IFIED","object":{"metadata":{"name":"b"}}}\n',
    b"\n",
    b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n',
]


class _ApiServer(QuietHandler):
    """Answers by the last part of the path; `seen` gets (method, name, client port)."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str, int]]
    groups: list[list[str]]

    def _json(self, status: int, body: bytes, *extra: tuple[str, str]) -> None:
        self.send_response(status)
        for name, value in [("Content-Type", "application/json"), *extra]:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        name = self.path.partition("?")[0].rsplit("/", 1)[-1]
        self.seen.append(("GET", name, self.client_address[1]))
        self.groups.append(self.headers.get_all("Impersonate-Group") or [])
        if name == "configmaps":  # a watch, its events in chunks that split lines
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in [*_EVENTS, b""]:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        elif name == "chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in [b'{"data":', b'{"a":"chunked"}}', b""]:
                self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(chunk), chunk))
        elif name == "to-the-end":  # HTTP/1.0: the body ends with the connection
            self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n")
            self.wfile.write(b'{"data":{"a":"to the end"}}')
            self.close_connection = True
        elif name == "busy":
            self._json(429, b'{"message":"slow down"}', ("Retry-After", "3"))
        else:
            self._json(200, b'{"data":{"a":"%s"}}' % name.encode())
            if name == "closes-soon":  # closed as the next request comes, unread
                self.wfile.flush()
                time.sleep(0.3)
                self.close_connection = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append(("POST", "", self.client_address[1]))
        time.sleep(1.0)  # longer than the client waits
        self._json(201, b"{}")


@pytest.fixture
def api_server() -> Iterator[tuple[ApiKube, list[tuple[str, str, int]], list[list[str]]]]:
    seen: list[tuple[str, str, int]] = []
    groups: list[list[str]] = []
    with serving(type("ApiServer", (_ApiServer,), {"seen": seen, "groups": groups})) as url:
        configuration = client.Configuration()
        configuration.host = url
        yield ApiKube(client.ApiClient(configuration), timeout=0.5), seen, groups


def _value(body: dict[str, Any] | None) -> str:
    return str((body or {})["data"]["a"])


def test_one_connection_serves_request_after_request(api_server: Any) -> None:
    api, seen, _ = api_server
    assert [_value(api.get(CONFIGMAP, "ns", name)) for name in "abc"] == ["a", "b", "c"]
    assert len({port for _, _, port in seen}) == 1


def test_a_request_begun_holds_its_connection_until_its_answer_is_read(
    api_server: Any,
) -> None:
    """A run tells its status while its child's patch is answered (begin_request): a request
    made meanwhile goes on another connection, and each answer is its own request's."""
    api, seen, _ = api_server
    api.get(CONFIGMAP, "ns", "warm")  # an idle connection, which the begun request takes
    first = api.begin_request("GET", ApiKube.path(CONFIGMAP, "ns", "first"))
    assert _value(api.get(CONFIGMAP, "ns", "meanwhile")) == "meanwhile"
    assert _value(first()) == "first"
    assert _value(api.get(CONFIGMAP, "ns", "after")) == "after"
    ports = {name: port for _, name, port in seen}
    assert ports["warm"] == ports["first"] != ports["meanwhile"]
    assert ports["after"] in (ports["first"], ports["meanwhile"])  # both kept for reuse


def test_chunked_and_connection_long_answers_are_read_whole(api_server: Any) -> None:
    api, seen, _ = api_server
    assert _value(api.get(CONFIGMAP, "ns", "chunked")) == "chunked"
    assert _value(api.get(CONFIGMAP, "ns", "to-the-end")) == "to the end"
    assert _value(api.get(CONFIGMAP, "ns", "after")) == "after"
    # the chunked answer left its connection open; the HTTP/1.0 one ended it
    ports = [port for _, _, port in seen]
    assert ports[0] == ports[1] != ports[2]


def test_a_connection_closed_as_a_request_comes_is_replaced_and_the_request_answered(
    api_server: Any,
) -> None:
    api, seen, _ = api_server
    assert _value(api.get(CONFIGMAP, "ns", "closes-soon")) == "closes-soon"
    assert _value(api.get(CONFIGMAP, "ns", "next")) == "next"
    assert [name for _, name, _ in seen] == ["closes-soon", "next"]
    assert seen[0][2] != seen[1][2]


def test_a_write_that_times_out_is_not_sent_again(api_server: Any) -> None:
    api, seen, _ = api_server
    api.get(CONFIGMAP, "ns", "a")  # the POST goes on a reused connection
    with pytest.raises(TemporaryError, match=r"POST .*timed out"):
        api.create(CONFIGMAP, {"metadata": {"name": "slow", "namespace": "ns"}})
    time.sleep(1.2)  # the server answers; nothing else comes
    assert [method for method, _, _ in seen] == ["GET", "POST"]


def test_an_error_answer_keeps_its_retry_after(api_server: Any) -> None:
    api, _, _ = api_server
    with pytest.raises(TemporaryError, match="429 slow down") as raised:
        api.get(CONFIGMAP, "ns", "busy")
    assert raised.value.delay == 3.0


def test_a_watch_yields_its_lines_across_chunks_and_keeps_the_connection(
    api_server: Any,
) -> None:
    api, seen, _ = api_server
    events = list(api.watch(CONFIGMAP, "ns", resource_version="1"))
    assert [(kind, body["metadata"]) for kind, body in events] == [
        ("ADDED", {"name": "a"}),
        ("MODIFIED", {"name": "b"}),
        ("BOOKMARK", {"resourceVersion": "9"}),
    ]
    api.get(CONFIGMAP, "ns", "after")
    assert seen[0][2] == seen[1][2]  # the stream ended cleanly: its connection was kept


def test_repeated_headers_go_as_they_are_and_a_line_break_goes_nowhere(
    api_server: Any,
) -> None:
    api, seen, groups = api_server
    path = ApiKube.path(CONFIGMAP, "ns", "a")
    headers = [
        ("Impersonate-User", "ann"),
        ("Impersonate-Group", "g1"),
        ("Impersonate-Group", "g2"),
    ]
    api.request("GET", path, extra_headers=headers)
    assert groups == [["g1", "g2"]]
    with pytest.raises(PermanentError, match="line break"):
        api.request("GET", path, extra_headers=[("Impersonate-User", "ann\r\nX-Evil: 1")])
    assert len(seen) == 1


def test_a_forked_child_opens_its_own_connection(api_server: Any) -> None:
    api, seen, _ = api_server
    api.get(CONFIGMAP, "ns", "parent")  # an idle connection, inherited by the child
    pid = os.fork()
    if pid == 0:  # the child: its answer is its exit status
        try:
            os._exit(0 if _value(api.get(CONFIGMAP, "ns", "child")) == "child" else 1)
        except BaseException:
            os._exit(2)
    assert os.waitpid(pid, 0)[1] == 0
    api.get(CONFIGMAP, "ns", "parent-again")
    ports = {name: port for _, name, port in seen}
    assert ports["child"] != ports["parent"] == ports["parent-again"]


def _two_contexts(real: Path, path: Path) -> Path:
    """`real` with a second context, made current, for a server that is not there."""
    kubeconfig: dict[str, Any] = yaml.safe_load(real.read_text())
    kubeconfig["clusters"].append({"name": "gone", "cluster": {"server": "https://127.0.0.1:9"}})
    here = next(c for c in kubeconfig["contexts"] if c["name"] == kubeconfig["current-context"])
    kubeconfig["contexts"] = [
        {"name": "here", "context": here["context"]},
        {"name": "elsewhere", "context": {**here["context"], "cluster": "gone"}},
    ]
    kubeconfig["current-context"] = "elsewhere"
    path.write_text(yaml.safe_dump(kubeconfig))
    return path


def test_a_named_context_is_used_instead_of_the_current_one(
    kubesim_server: Any, tmp_path: Path
) -> None:
    kubeconfig = str(_two_contexts(kubesim_server.kubeconfig_path, tmp_path / "kubeconfig"))
    current = load_api_client(kubeconfig=kubeconfig)
    assert current.configuration.host == "https://127.0.0.1:9"
    current.close()
    named = load_api_client(kubeconfig=kubeconfig, context="here")
    try:
        assert named.configuration.host == kubesim_server.url.rstrip("/")
        assert client.VersionApi(named).get_code().major == "1"
    finally:
        named.close()


def test_a_context_the_kubeconfig_lacks_is_refused_naming_those_it_has(
    kubesim_server: Any, tmp_path: Path
) -> None:
    kubeconfig = str(_two_contexts(kubesim_server.kubeconfig_path, tmp_path / "kubeconfig"))
    with pytest.raises(kube.KubeconfigError) as refused:
        load_api_client(kubeconfig=kubeconfig, context="staging")
    assert str(refused.value) == (
        f"{kubeconfig} has no context 'staging' (it has: here, elsewhere): name one of those "
        "in OPSBOARD_KUBE_CONTEXT, or leave it empty for the kubeconfig's current-context"
    )
