"""ValidatingAdmissionWebhook: kube-apiserver's plugin that asks the webhooks of the
ValidatingWebhookConfigurations about each write they match, and the defaults and
validation of those configurations.

Every write is judged, a client's or kubesim's own (a ReplicaSet's pods are refused by a
webhook as a client's pod is), after the other admission and before the ResourceQuota's,
as kube-apiserver orders them. A matching webhook is sent an AdmissionReview v1 over HTTPS,
`clientConfig.url?timeout=<n>s`, its certificate checked against `caBundle`; its refusal is
the write's answer in `ToStatusErr`'s words, and a call that fails refuses the write (500
InternalError) under failurePolicy Fail or is passed over under Ignore. The webhooks are
called one after another, in configuration name order (kube-apiserver calls them at once
and answers with the first refusal to come back), under the store lock: the store waits for
each call, at most its timeoutSeconds. `clientConfig.service` is never reached (kubesim has
no cluster network): a call to one fails.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import logging
import socket
import ssl
import uuid
from typing import Any
from urllib.parse import urlsplit

from kubesim import errors, scale
from kubesim.authn import UserInfo, service_account_user
from kubesim.cluster.controller import Obj
from kubesim.errors import ApiError, FieldError
from kubesim.names import dns_subdomain_errors
from kubesim.resources import ResourceType
from kubesim.selectors import match_labels_dict

log = logging.getLogger(__name__)

GROUP = "admissionregistration.k8s.io"
KEY = f"validatingwebhookconfigurations.{GROUP}"
KIND = "ValidatingWebhookConfiguration"
# Never sent to webhooks, so that a broken webhook can always be removed.
EXEMPT = frozenset(
    f"{plural}.{GROUP}"
    for plural in (
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
        "validatingadmissionpolicies",
        "validatingadmissionpolicybindings",
    )
)
OPTIONS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
REVIEW_VERSIONS = ("v1", "v1beta1")
# kube-controller-manager's controllers write as their own service accounts: the pods a
# controller creates are asked about as its writes.
CONTROLLER_ACCOUNTS = {
    "ReplicaSet": "replicaset-controller",
    "StatefulSet": "statefulset-controller",
    "DaemonSet": "daemon-set-controller",
    "Deployment": "deployment-controller",
}
CONTROLLER_MANAGER = UserInfo("system:kube-controller-manager", ("system:authenticated",))


class CallFailed(Exception):
    """A call that got no judgement: what `failed calling webhook "x": ` is followed by."""


def apply_defaults(config: Obj) -> None:
    """SetDefaults_ValidatingWebhook and SetDefaults_Rule (admissionregistration/v1)."""
    for hook in config.get("webhooks") or []:
        if not isinstance(hook, dict):
            continue
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        for rule in hook.get("rules") or []:
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")
        service = (hook.get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def validate(config: Obj) -> list[FieldError]:
    """validateValidatingWebhookConfiguration, in its order, less the rules, selectors and
    URL checks."""
    found: list[FieldError] = []
    names: set[str] = set()
    for i, hook in enumerate(config.get("webhooks") or []):
        path = f"webhooks[{i}]"
        found += _hook_errors(hook, path)
        found += _version_errors(hook.get("admissionReviewVersions") or [], path)
        name = hook.get("name") or ""
        if name and name in names:
            found.append(FieldError("Duplicate", f"{path}.name", name))
        names.add(name)
    return found


def _hook_errors(hook: Obj, path: str) -> list[FieldError]:
    found = _name_errors(hook.get("name") or "", f"{path}.name")
    for field, value, supported in (
        ("failurePolicy", hook.get("failurePolicy"), ("Fail", "Ignore")),
        ("matchPolicy", hook.get("matchPolicy"), ("Equivalent", "Exact")),
    ):
        if value not in supported:
            found.append(errors.unsupported(f"{path}.{field}", value, supported))
    effects = hook.get("sideEffects")
    if effects is None:
        found.append(FieldError("Required", f"{path}.sideEffects", None, "must specify one of "
                                + ", ".join(NO_SIDE_EFFECTS)))  # fmt: skip
    elif effects not in NO_SIDE_EFFECTS:
        found.append(errors.unsupported(f"{path}.sideEffects", effects, NO_SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if not isinstance(timeout, int) or not 1 <= timeout <= 30:
        found.append(FieldError("Invalid", f"{path}.timeoutSeconds", timeout,
                                "the timeout value must be between 1 and 30 seconds"))  # fmt: skip
    client = hook.get("clientConfig") or {}
    if (client.get("url") is None) == (client.get("service") is None):
        found.append(FieldError("Required", f"{path}.clientConfig",
                                detail="exactly one of url or service is required"))  # fmt: skip
    return found


def _name_errors(name: str, path: str) -> list[FieldError]:
    """IsFullyQualifiedName: a DNS subdomain of three segments at least."""
    if not name:
        return [FieldError("Required", path)]
    if why := dns_subdomain_errors(name):
        return [FieldError("Invalid", path, name, ",".join(why))]
    if len(name.split(".")) < 3:
        return [FieldError("Invalid", path, name,
                           "should be a domain with at least three segments separated by dots")]  # fmt: skip
    return []


def _version_errors(versions: list[Any], path: str) -> list[FieldError]:
    path += ".admissionReviewVersions"
    if not versions:
        return [FieldError("Required", path, None, "must specify one of v1, v1beta1")]
    if any(v in REVIEW_VERSIONS for v in versions):
        return []
    return [FieldError("Invalid", path, versions, "must include at least one of v1, v1beta1")]


# --- matching ---------------------------------------------------------------------------------


def rule_matches(rule: Obj, rt: ResourceType, op: str, subresource: str, namespace: str) -> bool:
    """rules.Matcher: scope, operation, group, version and resource[/subresource]."""
    scope = rule.get("scope") or "*"
    if scope == "Namespaced" and (rt.key == "namespaces" or not namespace):
        return False
    if scope == "Cluster" and not (rt.key == "namespaces" or not namespace):
        return False
    return (
        _any_of(rule.get("operations"), op)
        and _any_of(rule.get("apiGroups"), rt.group)
        and _any_of(rule.get("apiVersions"), rt.version)
        and any(_resource_matches(r, rt.plural, subresource) for r in rule.get("resources") or [])
    )


def _any_of(items: list[str] | None, wanted: str) -> bool:
    return any(item in ("*", wanted) for item in items or ())


def _resource_matches(named: str, plural: str, subresource: str) -> bool:
    resource, _, sub = named.partition("/")  # "*" is every resource, none of their subresources
    return resource in ("*", plural) and sub in ("*", subresource)


def _selects(selector: Obj | None, labels: dict[str, Any]) -> bool:
    return match_labels_dict(selector or {}, labels)


def _labels(obj: Obj | None) -> dict[str, Any]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


class WebhookAdmission:
    """Keeps the webhooks of every configuration in memory (read again after their writes:
    a write with none configured costs one counter's read) and asks those that match."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._seen = -1  # the configurations' writes when last read
        self._hooks: list[Obj] = []
        self._contexts: dict[str, ssl.SSLContext] = {}

    def install(self) -> None:
        self.store.register_admission(KEY, self.admit_configuration)
        self.store.register_admission_of_all(self.admit)

    def admit_configuration(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if new is None:
            return
        apply_defaults(new)
        if found := validate(new):
            raise errors.invalid(KIND, GROUP, new["metadata"].get("name", ""), found)

    def admit(self, resource: str, op: str, new: Obj | None, old: Obj | None) -> None:
        if self.store.writes_to((KEY,)) != self._seen:
            self._load()
        if not self._hooks or resource in EXEMPT:
            return
        if op == "UPDATE" and _marks_deletion(new, old):
            return  # a DELETE's, admitted as such already
        subresource, dry_run = self.store.admitting
        rt = self.store.type_of(resource)
        obj = new if new is not None else old
        assert obj is not None
        meta = obj["metadata"]
        namespace = meta.get("name", "") if rt.key == "namespaces" else meta.get("namespace", "")
        for hook in self._hooks:
            if self._matches(hook, rt, op, subresource or "", namespace, new, old):
                request = self._request(rt, op, subresource, namespace, new, old, dry_run)
                self._ask(hook, request)

    def _load(self) -> None:
        self._seen, objects = self.store.snapshot((KEY,))
        configs = sorted(objects[KEY], key=lambda c: str(c["metadata"]["name"]))
        self._hooks = [h for c in configs for h in c.get("webhooks") or []]

    def _matches(
        self, hook: Obj, rt: ResourceType, op: str, subresource: str, namespace: str,
        new: Obj | None, old: Obj | None,
    ) -> bool:  # fmt: skip
        if not any(
            rule_matches(r, rt, op, subresource, namespace) for r in hook.get("rules") or []
        ):
            return False
        selector = hook.get("namespaceSelector")
        # A cluster-scoped object is never exempted by a namespaceSelector.
        if (namespace or rt.key == "namespaces") and not _selects(
            selector, self._namespace_labels(rt, namespace, new, old)
        ):
            return False
        selector = hook.get("objectSelector")
        return _selects(selector, _labels(new)) or (
            old is not None and _selects(selector, _labels(old))
        )

    def _namespace_labels(
        self, rt: ResourceType, namespace: str, new: Obj | None, old: Obj | None
    ) -> dict[str, Any]:
        if rt.key == "namespaces":  # a namespace is judged by its own labels
            return _labels(new if new is not None else old)
        try:
            return _labels(self.store.get_entry("namespaces", None, namespace)[0])
        except ApiError:
            return {}

    # --- the call -----------------------------------------------------------------------------

    def _request(
        self, rt: ResourceType, op: str, subresource: str | None, namespace: str,
        new: Obj | None, old: Obj | None, dry_run: bool,
    ) -> Obj:  # fmt: skip
        """The AdmissionReview's request, with the fields kube-apiserver v1.28 sends."""
        kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        if subresource == "scale":  # the Scale is what was written
            kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
            new, old = (scale.scale_of(rt, o) if o is not None else None for o in (new, old))
        resource = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        meta = (new if new is not None else old or {})["metadata"]
        request: Obj = {"uid": str(uuid.uuid4()), "kind": kind, "resource": resource}
        if subresource:
            request["subResource"] = subresource
        request |= {"requestKind": kind, "requestResource": resource}
        if subresource:
            request["requestSubResource"] = subresource
        if meta.get("name"):
            request["name"] = meta["name"]
        if namespace:
            request["namespace"] = namespace
        return request | {
            "operation": op,
            "userInfo": self._user(rt, op, new).to_dict(),
            "object": new,
            "oldObject": old,
            "dryRun": dry_run,
            "options": {"kind": OPTIONS[op], "apiVersion": "meta.k8s.io/v1"},
        }

    def _user(self, rt: ResourceType, op: str, new: Obj | None) -> UserInfo:
        user = self.store.requester()
        if user is not None:
            return user  # type: ignore[no-any-return]
        owners = ((new or {}).get("metadata") or {}).get("ownerReferences") or []
        kind = next((o.get("kind") for o in owners if o.get("controller")), None)
        if op == "CREATE" and kind in CONTROLLER_ACCOUNTS:
            return service_account_user("kube-system", CONTROLLER_ACCOUNTS[kind])
        return CONTROLLER_MANAGER

    def _ask(self, hook: Obj, request: Obj) -> None:
        """Calls the webhook; raises its refusal, or the failure of a call when it must fail."""
        name = hook.get("name", "")
        if request["dryRun"] and hook.get("sideEffects") not in NO_SIDE_EFFECTS:
            raise errors.bad_request(f'admission webhook "{name}" does not support dry run')
        try:
            response = self._call(hook, request)
        except CallFailed as exc:
            if hook.get("failurePolicy") == "Ignore":
                log.warning('failed calling webhook "%s", failing open: %s', name, exc)
                return
            raise errors.internal(f'failed calling webhook "{name}": {exc}') from None
        for text in response.get("warnings") or []:
            self.store.warn(str(text))
        if not response.get("allowed"):
            raise denied(name, response.get("status"))

    def _call(self, hook: Obj, request: Obj) -> Obj:
        timeout = int(hook.get("timeoutSeconds") or 10)
        client = hook.get("clientConfig") or {}
        target = _target(client, timeout)
        if client.get("url") is None:
            raise CallFailed(f'failed to call webhook: Post "{target}": kubesim has no cluster '
                             "network to reach a service")  # fmt: skip
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": request}).encode()  # fmt: skip
        try:
            status, data = self._post(target, body, client.get("caBundle"), timeout)
        except (OSError, http.client.HTTPException) as exc:
            raise CallFailed(
                f'failed to call webhook: Post "{target}": {_go_error(target, exc)}'
            ) from None
        if not 200 <= status < 300:
            raise CallFailed(f"failed to call webhook: the server responded with the status "
                             f"code {status} but did not return more information")  # fmt: skip
        try:
            review = json.loads(data)
        except ValueError as exc:
            raise CallFailed(f"failed to call webhook: {exc}") from None
        return _verified(review, request["uid"])

    def _post(
        self, target: str, body: bytes, ca_bundle: str | None, timeout: int
    ) -> tuple[int, bytes]:
        url = urlsplit(target)
        conn = http.client.HTTPSConnection(
            url.hostname or "", url.port or 443, timeout=timeout, context=self._context(ca_bundle)
        )
        try:
            conn.request("POST", f"{url.path or '/'}?{url.query}", body,
                         {"Content-Type": "application/json", "Accept": "application/json"})  # fmt: skip
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def _context(self, ca_bundle: str | None) -> ssl.SSLContext:
        """One per CA bundle: loading a CA takes longer than a call."""
        key = ca_bundle or ""
        if key not in self._contexts:
            try:
                pem = base64.b64decode(key).decode() if key else None
                context = ssl.create_default_context(cadata=pem or None)
            except (binascii.Error, UnicodeDecodeError, ssl.SSLError) as exc:
                raise CallFailed(
                    f"failed to call webhook: could not load caBundle: {exc}"
                ) from None
            self._contexts[key] = context
        return self._contexts[key]


def denied(name: str, status: Obj | None) -> ApiError:
    """webhookerrors.ToStatusErr: the webhook's status, at least 400, its message prefixed."""
    status = status if isinstance(status, dict) else {}
    code: int = status["code"] if isinstance(status.get("code"), int) else 0
    said = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{said}: {status['message']}"
    elif status.get("reason"):
        message = f"{said}: {status['reason']}"
    else:
        message = f"{said} without explanation"
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    return ApiError(max(code, 400), str(status.get("reason") or ""), message, details)


def _target(client: Obj, timeout: int) -> str:
    """Where the review is posted, with the timeout client-go adds as a query parameter."""
    url = client.get("url")
    if url is None:
        service = client.get("service") or {}
        url = (f"https://{service.get('name')}.{service.get('namespace')}.svc:"
               f"{service.get('port', 443)}{service.get('path') or ''}")  # fmt: skip
    return f"{url}{'&' if '?' in url else '?'}timeout={timeout}s"


def _go_error(target: str, exc: BaseException) -> str:
    """What Go's net/http says of the failure, as near as Python's errors tell it."""
    url = urlsplit(target)
    address = f"{url.hostname}:{url.port or 443}"
    if isinstance(exc, ConnectionRefusedError):
        return f"dial tcp {address}: connect: connection refused"
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "context deadline exceeded"
    if isinstance(exc, socket.gaierror):
        return f"dial tcp: lookup {url.hostname}: no such host"
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code in (19, 20, 21):  # not signed by the caBundle's CA
            return (
                "tls: failed to verify certificate: x509: certificate signed by unknown authority"
            )
        return f"tls: failed to verify certificate: x509: {exc.verify_message}"
    return str(exc) or type(exc).__name__


def _verified(review: Any, uid: str) -> Obj:
    """VerifyAdmissionResponse: a v1 AdmissionReview whose response answers this request."""
    response = review.get("response") if isinstance(review, dict) else None
    if not isinstance(response, dict):
        raise CallFailed("received invalid webhook response: webhook response was absent")
    if response.get("uid") != uid:
        raise CallFailed(f'received invalid webhook response: expected response.uid="{uid}", '
                         f'got "{response.get("uid", "")}"')  # fmt: skip
    kind = (review.get("apiVersion"), review.get("kind"))
    if kind != ("admission.k8s.io/v1", "AdmissionReview"):
        raise CallFailed("received invalid webhook response: expected webhook response of "
                         "admission.k8s.io/v1, Kind=AdmissionReview, got "
                         f"{kind[0]}, Kind={kind[1]}")  # fmt: skip
    return response


def _marks_deletion(new: Obj | None, old: Obj | None) -> bool:
    """The update a DELETE makes of an object it cannot remove at once (finalizers, grace)."""
    return bool(
        new is not None
        and old is not None
        and new["metadata"].get("deletionTimestamp")
        and not old["metadata"].get("deletionTimestamp")
    )
