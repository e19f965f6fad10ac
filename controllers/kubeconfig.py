"""A kubeconfig's certificates and key, held in memory instead of in files left in /tmp.

The official loader writes a kubeconfig's certificate-authority-data, client-certificate-data
and client-key-data to temporary files for urllib3 to read at each new connection, and
removes them at a clean interpreter exit only. Every process killed, and every Celery pool
process (which ends in os._exit), left them behind: `make run` two per start, a kind-style
kubeconfig's private key among them. Here the loader writes them into a directory of our
own; they are read once into the TLS context urllib3 connects with, and the directory goes
as soon as the client is made.
"""

from __future__ import annotations

import contextlib
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kubernetes import client
from kubernetes.config import kube_config
from urllib3.util.ssl_ import create_urllib3_context


@contextlib.contextmanager
def loader_files() -> Iterator[str]:
    """A private directory for the loader's `temp_file_path`, removed on leaving: make the
    client (and `hold_in_memory`) inside. The loader's own cache of what it wrote, keyed by
    content alone, is told of the removal: a later load in this process writes afresh."""
    with tempfile.TemporaryDirectory(prefix="opsboard-kubeconfig-") as directory:
        try:
            yield directory
        finally:
            written = kube_config._temp_files  # the loader's record; no public way to clear it
            for content, path in list(written.items()):
                if Path(path).parent == Path(directory):
                    del written[content]


def hold_in_memory(api_client: client.ApiClient, directory: str) -> None:
    """Points `api_client`'s connections at a TLS context made from the files the loader
    wrote into `directory` (before it goes): the CA it trusts, the client's certificate and
    key. Nothing to do when the kubeconfig named files of its own, or none."""
    configuration = api_client.configuration
    files = (configuration.ssl_ca_cert, configuration.cert_file, configuration.key_file)
    if not any(f and Path(f).parent == Path(directory) for f in files):
        return
    required = ssl.CERT_REQUIRED if configuration.verify_ssl else ssl.CERT_NONE
    context = create_urllib3_context(cert_reqs=required)
    if configuration.ssl_ca_cert:
        context.load_verify_locations(cafile=configuration.ssl_ca_cert)
    elif configuration.verify_ssl:
        context.load_default_certs()
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    # Every pool the manager makes from now on connects with this context (none exists yet).
    api_client.rest_client.pool_manager.connection_pool_kw.update(
        ssl_context=context, ca_certs=None, cert_file=None, key_file=None
    )
