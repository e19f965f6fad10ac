"""With impersonation, what the cluster lets a person change on a CR's page, asked before
the form is shown. Each field is asked for what its change needs: a size alone goes through
`/scale` when the kind has one (patching.py), an image is a patch of the resource; so only
the field the cluster refuses is held, with the refusal naming the verb and resource."""

from __future__ import annotations

from opsboard.accounts.kube_identity import KubeIdentity
from opsboard.dashboard import crclient
from opsboard.dashboard.forms import form_paths
from opsboard.dashboard.kinds import KindInfo
from opsboard.dashboard.patching import via_scale


def field_needs(info: KindInfo) -> dict[str, str]:
    """Form field → the subresource its change patches ("": the resource itself)."""
    return {
        name: "scale" if name == "size" and via_scale(info, {path: None}) else ""
        for name, path in form_paths(info).items()
    }


def field_refusals(*, info: KindInfo, namespace: str, as_user: KubeIdentity) -> dict[str, str]:
    """Form field → the cluster's refusal, for the fields it would refuse to change (one
    access review per subresource asked)."""
    needs = field_needs(info)
    answers = {
        sub: crclient.access_refusal(
            info.kind, namespace, "patch", as_user=as_user, subresource=sub
        )
        for sub in set(needs.values())
    }
    return {name: answers[sub] for name, sub in needs.items() if answers[sub]}
