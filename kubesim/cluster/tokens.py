"""The ServiceAccount admission plugin's token volume, which every pod of a real cluster has.

A new pod gets a projected `kube-api-access-xxxxx` volume (its token, the cluster CA, its
namespace), mounted read-only in each container at the path client libraries read, unless
the pod or its ServiceAccount sets automountServiceAccountToken false or a container
already mounts that path. `kubectl describe pod` and `-o yaml` show it, and pod specs that
an operator compares carry it.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from kubesim.errors import ApiError

Obj = dict[str, Any]

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand's, as kube-apiserver draws the suffix
_SOURCES = [
    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {
        "downwardAPI": {
            "items": [
                {
                    "path": "namespace",
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                }
            ]
        }
    },
]


class TokenVolumeAdmission:
    def __init__(self, store: Any, rng: random.Random) -> None:
        self.store = store
        self.rng = rng

    def install(self) -> None:
        self.store.register_admission("pods", self.admit)

    def admit(self, op: str, new: Obj | None, old: Obj | None) -> None:
        if op != "CREATE" or new is None or not isinstance(new.get("spec"), dict):
            return
        spec = new["spec"]
        containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
        if not self._automounts(new) or any(
            m.get("mountPath") == MOUNT_PATH
            for c in containers
            for m in c.get("volumeMounts") or []
        ):
            return
        name = "kube-api-access-" + "".join(self.rng.choice(_ALPHABET) for _ in range(5))
        volume = {
            "name": name,
            "projected": {"defaultMode": 420, "sources": copy.deepcopy(_SOURCES)},
        }
        spec["volumes"] = [*(spec.get("volumes") or []), volume]
        mount = {"name": name, "readOnly": True, "mountPath": MOUNT_PATH}
        for c in containers:
            c["volumeMounts"] = [*(c.get("volumeMounts") or []), dict(mount)]

    def _automounts(self, pod: Obj) -> bool:
        """The pod's own setting wins; else its ServiceAccount's; else true."""
        own = pod["spec"].get("automountServiceAccountToken")
        if own is not None:
            return bool(own)
        namespace = pod["metadata"].get("namespace")
        account = pod["spec"].get("serviceAccountName") or "default"
        try:
            sa = self.store.get("serviceaccounts", namespace, account)
        except ApiError:
            return True
        return sa.get("automountServiceAccountToken") is not False
