"""kubesim's certificate authority and serving certificate.

The CA is made once and kept in the data dir (`pki/ca.crt`, `pki/ca.key`), so a restarted
kubesim keeps the kubeconfig every client was given valid; the serving certificate is signed
afresh at each start for 127.0.0.1, ::1, localhost and the host kubesim listens on.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_NAME = "kubesim-ca"


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(partial, path)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


class Authority:
    """The cluster CA: it signs the serving certificate; clients trust its certificate."""

    def __init__(self, pki_dir: Path | None) -> None:
        self.dir = pki_dir
        loaded = self._load()
        if loaded is None:
            loaded = self._make()
        self.key, self.cert = loaded
        self.cert_pem = self.cert.public_bytes(serialization.Encoding.PEM)

    def _load(self) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None:
        if self.dir is None or not (self.dir / "ca.key").exists():
            return None
        key = serialization.load_pem_private_key((self.dir / "ca.key").read_bytes(), None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError(f"{self.dir / 'ca.key'}: expected an EC private key")
        return key, x509.load_pem_x509_certificate((self.dir / "ca.crt").read_bytes())

    def _make(self) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(key, hashes.SHA256())
        )
        if self.dir is not None:
            # The certificate first: a key without it is never read as a half-made CA.
            self.dir.mkdir(parents=True, exist_ok=True)
            (self.dir / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
            _write_private(self.dir / "ca.key", _pem_key(key))
        return key, cert

    def serving_pair(self, host: str, extra: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
        """A serving certificate (PEM, with the CA after it) and its key, naming `host` (the
        machine's name when it is a wildcard address) and each of `extra`."""
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = [
            x509.DNSName("localhost"),
            x509.DNSName("kubernetes"),
            x509.DNSName("kubernetes.default"),
            x509.DNSName("kubernetes.default.svc"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ]
        wildcard = host in ("", "0.0.0.0", "::")
        for h in [socket.gethostname() if wildcard else host, *extra]:
            try:
                entry: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(h))
            except ValueError:
                entry = x509.DNSName(h)
            if entry not in names:
                names.append(entry)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
        usage = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH])
        cert = self._sign(name, key, usage, x509.SubjectAlternativeName(names))
        return cert.public_bytes(serialization.Encoding.PEM) + self.cert_pem, _pem_key(key)

    def client_pair(self, user: str, groups: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
        """A client certificate (PEM) and its key for `user` in `groups`, as kubeadm and kind
        write into their kubeconfigs: the common name is the user, each organization a
        group (the x509 authenticator of kube-apiserver reads them so)."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        subject.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
        usage = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH])
        cert = self._sign(x509.Name(subject), key, usage)
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)

    def _sign(
        self,
        subject: x509.Name,
        key: ec.EllipticCurvePrivateKey,
        *extensions: x509.ExtensionType,
    ) -> x509.Certificate:
        """A leaf certificate for `key`, valid a year, signed by the CA; `extensions` are
        not critical."""
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), False
            )
        )
        for extension in extensions:
            builder = builder.add_extension(extension, critical=False)
        return builder.sign(self.key, hashes.SHA256())

    def server_context(self, host: str, extra: tuple[str, ...] = ()) -> ssl.SSLContext:
        chain, key = self.serving_pair(host, extra)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # Client certificates are asked for, not required (as kube-apiserver with its
        # --client-ca-file): one signed by the CA authenticates its user, and a client with
        # none goes on to its bearer token. One the CA did not sign fails the handshake here,
        # where kube-apiserver would answer 401.
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=self.cert_pem.decode())
        # load_cert_chain reads files only; the key never outlives this call on disk.
        with tempfile.TemporaryDirectory(prefix="kubesim-tls-") as tmp:
            cert_file, key_file = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert_file.write_bytes(chain)
            _write_private(key_file, key)
            ctx.load_cert_chain(cert_file, key_file)
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx
