"""An admission webhook on 127.0.0.1 for a test: HTTPS under a CA of its own, answering
each AdmissionReview with the test's judgement, and the ValidatingWebhookConfiguration that
registers it with an API server on this machine (kubesim or a real one)."""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from kubesim.tls import Authority
from tests.support.waiting import wait_for

# What the webhook says of one AdmissionReview's request: None to allow it, else the
# refusal's message and HTTP code (the API server answers the write with that code).
Judge = Callable[[dict[str, Any]], tuple[str, int] | None]


def deny_all(message: str, code: int = 403) -> Judge:
    return lambda request: (message, code)


@dataclass
class Webhook:
    url: str
    ca_bundle: str  # base64 of the CA's PEM, as clientConfig.caBundle takes it
    reviews: list[dict[str, Any]] = field(default_factory=list)  # the requests received

    def configuration(
        self,
        name: str,
        namespace: str,
        *,
        resources: tuple[str, ...] = ("pods",),
        api_groups: tuple[str, ...] = ("",),
        operations: tuple[str, ...] = ("CREATE",),
        failure_policy: str = "Fail",
        url: str | None = None,
    ) -> dict[str, Any]:
        """A ValidatingWebhookConfiguration `name` whose one webhook, `<name>.opsboard.test`,
        judges those writes in `namespace` only (a shared cluster has others' namespaces).
        `url`: another address than this server's (one that does not answer)."""
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": f"{name}.opsboard.test",
                "clientConfig": {"url": url or self.url, "caBundle": self.ca_bundle},
                "rules": [{
                    "apiGroups": list(api_groups), "apiVersions": ["*"],
                    "operations": list(operations), "resources": list(resources),
                    "scope": "Namespaced",
                }],
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": namespace}
                },
                "failurePolicy": failure_policy,
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 5,
            }],
        }  # fmt: skip


def _handler(webhook: Webhook, judge: Judge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            request = review["request"]
            webhook.reviews.append(request)
            refusal = judge(request)
            response: dict[str, Any] = {"uid": request["uid"], "allowed": refusal is None}
            if refusal is not None:  # a code of 0 is left out: the API server says 400
                response["status"] = {
                    "message": refusal[0],
                    **({"code": refusal[1]} if refusal[1] else {}),
                }
            body = json.dumps({
                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": response,
            }).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def admission_webhook(judge: Judge) -> Iterator[Webhook]:
    """Serves a webhook that answers with `judge`, from a thread, until the block ends."""
    authority = Authority(None)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    chain, key = authority.serving_pair("127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="webhook-tls-") as tmp:  # it reads files only
        cert_file, key_file = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert_file.write_bytes(chain)
        key_file.write_bytes(key)
        context.load_cert_chain(cert_file, key_file)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    webhook = Webhook(
        url=f"https://127.0.0.1:{httpd.server_address[1]}/validate",
        ca_bundle=base64.b64encode(authority.cert_pem).decode(),
    )
    httpd.RequestHandlerClass = _handler(webhook, judge)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield webhook
    finally:
        httpd.shutdown()
        httpd.server_close()


def until_in_force(webhook: Webhook, refused: Callable[[], bool]) -> None:
    """Waits until the API server sends writes to `webhook` (a real one takes a new
    configuration from its informer, a moment later), then forgets its reviews. `refused`
    makes a dry-run write the webhook judges and says whether it was refused."""
    wait_for(lambda: refused() or webhook.reviews, what="the webhook in force")
    webhook.reviews.clear()
