"""Who a request comes from: bearer tokens, as kube-apiserver authenticates them.

Two kinds of token: the admin's (a random secret kept in the data dir, in `system:masters`,
written into the kubeconfig) and ServiceAccount tokens issued by the TokenRequest API
(`kubectl create token`): RS256 JWTs signed with a key kept in the data dir, valid while
they have not expired and their ServiceAccount still exists with the same uid. A request
without a token is `system:anonymous`, as with kube-apiserver's default --anonymous-auth.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from kubesim.errors import ApiError

if TYPE_CHECKING:
    from kubesim.store import Store

ADMIN_USER = "kubernetes-admin"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
SA_PREFIX = "system:serviceaccount:"
ISSUER = "https://kubernetes.default.svc"
AUDIENCES = (ISSUER,)
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, (UNAUTHENTICATED,))


def certificate_user(peer: dict[str, Any] | None) -> UserInfo | None:
    """The user a verified client certificate names, as kube-apiserver's x509
    authenticator reads it: the common name, and each organization a group. None for a
    connection without one (Python gives an empty dict then)."""
    if not peer:
        return None
    attributes = [pair for rdn in peer.get("subject", ()) for pair in rdn]
    name = next((value for key, value in attributes if key == "commonName"), "")
    if not name:
        return None
    groups = tuple(value for key, value in attributes if key == "organizationName")
    return UserInfo(name, (*groups, AUTHENTICATED))


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    return UserInfo(
        f"{SA_PREFIX}{namespace}:{name}",
        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED),
        uid,
    )


def split_service_account(username: str) -> tuple[str, str] | None:
    """("ns", "name") for "system:serviceaccount:ns:name", else None."""
    if not username.startswith(SA_PREFIX):
        return None
    namespace, sep, name = username[len(SA_PREFIX) :].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class _Claims:
    namespace: str
    name: str
    uid: str
    expires: float


class Authenticator:
    """Maps bearer tokens to users; issues ServiceAccount tokens."""

    def __init__(self, store: Store, auth_dir: Path | None) -> None:
        self.store = store
        self.admin_token = self._admin_token(auth_dir)
        self._key = self._signing_key(auth_dir)
        pub = self._key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self._kid = _b64(_sha256(pub))
        self._verified: dict[str, _Claims] = {}
        self._lock = threading.Lock()
        self.admin = UserInfo(ADMIN_USER, (MASTERS, AUTHENTICATED))

    @staticmethod
    def _admin_token(auth_dir: Path | None) -> str:
        if auth_dir is None:
            return secrets.token_hex(24)
        path = auth_dir / "admin.token"
        if path.exists():
            return path.read_text().strip()
        auth_dir.mkdir(parents=True, exist_ok=True)
        token = secrets.token_hex(24)
        path.write_text(token + "\n")
        path.chmod(0o600)
        return token

    @staticmethod
    def _signing_key(auth_dir: Path | None) -> rsa.RSAPrivateKey:
        path = auth_dir / "sa.key" if auth_dir is not None else None
        if path is not None and path.exists():
            key = serialization.load_pem_private_key(path.read_bytes(), None)
            if not isinstance(key, rsa.RSAPrivateKey):
                raise ValueError(f"{path}: expected an RSA private key")
            return key
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
            path.chmod(0o600)
        return key

    # --- authentication -----------------------------------------------------------------------

    def authenticate(self, authorization: str | None) -> UserInfo:
        """The user behind an Authorization header; 401 for a token that proves nothing."""
        if not authorization:
            return ANONYMOUS_USER
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise unauthorized()
        if secrets.compare_digest(token, self.admin_token):
            return self.admin
        user = self.service_account(token)
        if user is None:
            raise unauthorized()
        return user

    def service_account(self, token: str) -> UserInfo | None:
        claims = self._verified.get(token)
        if claims is None:
            claims = self._verify(token)
            if claims is None:
                return None
            with self._lock:
                if len(self._verified) > 10_000:
                    self._verified.clear()
                self._verified[token] = claims
        if claims.expires <= time.time():
            return None
        # The token lives only as long as its ServiceAccount (same uid) does.
        try:
            sa, _ = self.store.get_entry("serviceaccounts", claims.namespace, claims.name)
        except ApiError:
            return None
        if sa["metadata"].get("uid") != claims.uid:
            return None
        return service_account_user(claims.namespace, claims.name, claims.uid)

    def _verify(self, token: str) -> _Claims | None:
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = json.loads(_unb64(parts[0]))
            if header.get("alg") != "RS256":
                return None
            self._key.public_key().verify(
                _unb64(parts[2]),
                f"{parts[0]}.{parts[1]}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
            payload = json.loads(_unb64(parts[1]))
            if payload.get("iss") != ISSUER:
                return None
            if not set(payload.get("aud") or ()) & set(AUDIENCES):
                return None
            sa = payload["kubernetes.io"]["serviceaccount"]
            return _Claims(
                payload["kubernetes.io"]["namespace"], sa["name"], sa["uid"], payload["exp"]
            )
        except (InvalidSignature, ValueError, KeyError, TypeError):
            return None

    # --- TokenRequest -------------------------------------------------------------------------

    def issue(
        self,
        service_account: dict[str, Any],
        *,
        audiences: list[str],
        expiration_seconds: int,
        bound: dict[str, Any] | None = None,
    ) -> tuple[str, float]:
        meta = service_account["metadata"]
        now = int(time.time())
        exp = now + expiration_seconds
        claims: dict[str, Any] = {
            "aud": audiences,
            "exp": exp,
            "iat": now,
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": {
                "namespace": meta["namespace"],
                "serviceaccount": {"name": meta["name"], "uid": meta["uid"]},
            },
            "nbf": now,
            "sub": f"{SA_PREFIX}{meta['namespace']}:{meta['name']}",
        }
        if bound:
            claims["kubernetes.io"][bound["kind"].lower()] = {
                "name": bound.get("name", ""),
                "uid": bound.get("uid", ""),
            }
        head = _b64(json.dumps({"alg": "RS256", "kid": self._kid}, separators=(",", ":")).encode())
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        sig = self._key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{head}.{body}.{_b64(sig)}", float(exp)


def _sha256(data: bytes) -> bytes:
    digest = hashes.Hash(hashes.SHA256())
    digest.update(data)
    return digest.finalize()
