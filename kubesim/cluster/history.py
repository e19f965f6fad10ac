"""ControllerRevisions: the history of a StatefulSet's or DaemonSet's pod template.

`kubectl rollout history|undo` on these kinds reads nothing else: the revisions the set
controls, their `revision` numbers, and the template each holds as a strategic merge patch
(`undo` applies it to the set). As pkg/controller/history and the two controllers keep
them: one per template, named `<set>-<hash>`, labelled with the template's labels and the
hash, carrying the set's annotations; a template that comes back (a rollback) makes its
old revision the newest instead of a new one; past revisionHistoryLimit the oldest revision
no pod uses is deleted.
"""

from __future__ import annotations

from kubesim.cluster.controller import Context, Obj, controller_ref

REVISIONS = "controllerrevisions.apps"


def revision_data(template: Obj) -> Obj:
    return {"spec": {"template": {**template, "$patch": "replace"}}}


def record(ctx: Context, owner: Obj, template_hash: str, hash_label: str, live: set[str]) -> None:
    """Makes the owner's current template its newest revision; `live` names the revisions
    its pods still run, which the history limit never deletes."""
    meta = owner["metadata"]
    name = f"{meta['name']}-{template_hash}"
    owned = ctx.cache.owned(REVISIONS, meta["uid"])
    newest = max((int(r.get("revision") or 0) for r in owned), default=0)
    current = next((r for r in owned if r["metadata"]["name"] == name), None)
    if current is None:
        template = owner["spec"]["template"]
        labels = {**(template.get("metadata") or {}).get("labels", {}), hash_label: template_hash}
        revision = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": labels,
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [controller_ref(owner)],
            },
            "data": revision_data(template),
            "revision": newest + 1,
        }
        ctx.api.create(REVISIONS, revision)
    elif int(current.get("revision") or 0) < newest:
        ctx.api.patch(REVISIONS, meta["namespace"], name, {"revision": newest + 1})
    _truncate(ctx, owner, live | {name})


def _truncate(ctx: Context, owner: Obj, live: set[str]) -> None:
    limit = int(owner["spec"].get("revisionHistoryLimit", 10))
    spent = [
        r
        for r in ctx.cache.owned(REVISIONS, owner["metadata"]["uid"])
        if r["metadata"]["name"] not in live
    ]
    spent.sort(key=lambda r: int(r.get("revision") or 0))
    for r in spent[: max(len(spent) - limit, 0)]:
        ctx.api.delete(REVISIONS, r["metadata"]["namespace"], r["metadata"]["name"])
