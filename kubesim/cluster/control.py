"""The cluster's control endpoints under /_kubesim/cluster/: nodes, pause/resume, pod faults."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesim.cluster.cluster import Cluster


def register(add: Callable[[str, str, Callable[[Any], Any]], None], cluster: Cluster) -> None:
    """Adds the routes through the server's `register_control(method, path, handler)`."""

    def state(req: Any) -> Any:
        return {
            "paused": cluster.paused(),
            "nodes": [
                {
                    "name": n["metadata"]["name"],
                    "ready": n["metadata"]["name"] not in cluster.nodes.down,
                }
                for n in sorted(cluster.cache.list("nodes"), key=lambda n: n["metadata"]["name"])
            ],
            "missingImages": cluster.missing_images,
        }

    def add_node(req: Any) -> Any:
        return 201, {"name": cluster.add_node()["metadata"]["name"]}

    def remove_node(req: Any) -> Any:
        cluster.remove_node(req.params["name"])
        return {"name": req.params["name"], "removed": True}

    def node_ready(ready: bool) -> Any:
        def handler(req: Any) -> Any:
            cluster.set_node_ready(req.params["name"], ready)
            return {"name": req.params["name"], "ready": ready}

        return handler

    def pause(req: Any) -> Any:
        cluster.pause(req.params["group"])
        return {"paused": cluster.paused()}

    def resume(req: Any) -> Any:
        cluster.resume(req.params["group"])
        return {"paused": cluster.paused()}

    def crash(req: Any) -> Any:
        body = req.body or {}
        cluster.crash_pod(
            req.params["namespace"], req.params["name"], reason=str(body.get("reason", "Error")),
            exit_code=int(body.get("exitCode", 1)), loop=bool(body.get("loop", False)),
        )  # fmt: skip
        return {"crashed": f"{req.params['namespace']}/{req.params['name']}"}

    def refuse_start(req: Any) -> Any:
        body = req.body or {}
        reason, message = body.get("reason"), body.get("message", "")
        if not isinstance(reason, str) or not reason or not isinstance(message, str):
            raise ValueError(
                'body must be {"reason": "CreateContainerConfigError", "message": "..."}'
            )
        cluster.refuse_start(req.params["namespace"], req.params["name"], reason, message)
        return {"refused": f"{req.params['namespace']}/{req.params['name']}", "reason": reason}

    def allow_start(req: Any) -> Any:
        cluster.refuse_start(req.params["namespace"], req.params["name"], None)
        return {"refused": None}

    def fail(req: Any) -> Any:
        cluster.fail_pod(req.params["namespace"], req.params["name"])
        return {"failed": f"{req.params['namespace']}/{req.params['name']}"}

    def unready(req: Any) -> Any:
        body = req.body or {}
        message, container = body.get("message"), body.get("container")
        if not all(v is None or isinstance(v, str) for v in (message, container)):
            raise ValueError('body must be {"message": "probe output", "container": "name"}')
        ns, name = req.params["namespace"], req.params["name"]
        names = cluster.fail_readiness(ns, name, message, container)
        return {"unready": f"{ns}/{name}", "containers": names}

    def ready(req: Any) -> Any:
        cluster.pass_readiness(req.params["namespace"], req.params["name"])
        return {"ready": f"{req.params['namespace']}/{req.params['name']}"}

    def delete(req: Any) -> Any:
        grace = (req.body or {}).get("gracePeriodSeconds")
        cluster.delete_pod(req.params["namespace"], req.params["name"], grace)
        return {"deleted": f"{req.params['namespace']}/{req.params['name']}"}

    def get_missing(req: Any) -> Any:
        return {"patterns": cluster.missing_images}

    def set_missing(req: Any) -> Any:
        patterns = (req.body or {}).get("patterns")
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ValueError('body must be {"patterns": ["image:tag or fnmatch pattern", ...]}')
        cluster.missing_images = patterns
        return {"patterns": cluster.missing_images}

    base = "/_kubesim/cluster"
    add("GET", base, state)
    add("POST", f"{base}/nodes", add_node)
    add("DELETE", f"{base}/nodes/{{name}}", remove_node)
    add("POST", f"{base}/nodes/{{name}}/notready", node_ready(False))
    add("POST", f"{base}/nodes/{{name}}/ready", node_ready(True))
    add("POST", f"{base}/pause/{{group}}", pause)
    add("POST", f"{base}/resume/{{group}}", resume)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/crash", crash)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/fail", fail)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/refuse-start", refuse_start)
    add("DELETE", f"{base}/pods/{{namespace}}/{{name}}/refuse-start", allow_start)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/unready", unready)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/ready", ready)
    add("POST", f"{base}/pods/{{namespace}}/{{name}}/delete", delete)
    add("GET", f"{base}/missing-images", get_missing)
    add("PUT", f"{base}/missing-images", set_missing)
