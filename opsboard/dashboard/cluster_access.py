"""With impersonation, what the cluster lets a person change on a CR's page, asked before
the form is shown. Each field is asked for what its change needs: a size alone goes through
`/scale` when the kind has one (patching.py), an image is a patch of the resource; so only
the field the cluster refuses is held, with the refusal naming the verb and resource."""

from __future__ import annotations

from opsboard.accounts.kube_identity import KubeIdentity
from opsboard.dashboard import crclient
from opsboard.dashboard.kinds import KindInfo
from opsboard.dashboard.patching import via_scale
from opsboard.dashboard.resource_fields import resource_fields


def field_needs(info: KindInfo) -> dict[str, str]:
    """Form field → the subresource its change patches ("": the resource itself)."""
    controller = info.controller
    needs = {}
    if controller.size_path:
        needs["size"] = "scale" if via_scale(info, {controller.size_path: None}) else ""
    if controller.image_path:
        needs["image"] = ""
    for name in resource_fields(controller):
        needs[name] = ""
    if info.devices_path:
        needs["devices"] = ""
    if controller.storage_path:
        needs["storage"] = ""
    return needs


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
