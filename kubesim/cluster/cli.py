"""`python -m kubesim cluster ...`: the cluster faults of a running kubesim, over its control API."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

from kubesim.control import client_context

BASE = "/_kubesim/cluster"


def add_cluster_parser(sub: Any) -> None:
    cluster = sub.add_parser(
        "cluster", help="nodes, pause/resume and pod faults of a running kubesim"
    )
    cluster.add_argument("--server", required=True, help="e.g. https://127.0.0.1:6443")
    actions = cluster.add_subparsers(dest="action", required=True)
    actions.add_parser("status", help="nodes, paused groups and the missing-image list")
    actions.add_parser("add-node", help="register one more node")
    for name, text in (
        ("remove-node", "delete a node (its pods are deleted)"),
        ("node-notready", "the node's kubelet stops reporting"),
        ("node-ready", "the node's kubelet reports again"),
    ):
        actions.add_parser(name, help=text).add_argument("node")
    for name in ("pause", "resume"):
        actions.add_parser(name, help=f"{name} the controllers or the kubelet").add_argument(
            "group", choices=("controllers", "kubelet")
        )
    for name, text in (
        ("crash-pod", "its containers exit and restart"),
        ("fail-pod", "its containers exit and the pod has Failed"),
        ("delete-pod", "delete it"),
        ("unready-pod", "its readiness probe fails: running, not ready"),
        ("ready-pod", "its readiness probe passes again"),
        ("refuse-start", "the runtime refuses to start its containers: they wait"),
        ("allow-start", "the runtime starts its containers again"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("pod", help="namespace/name")
        if name == "unready-pod":
            action.add_argument("--message", help="the probe's output (default: HTTP 503)")
            action.add_argument("--container", help="only this container's probe")
        if name == "refuse-start":
            action.add_argument("--reason", default="CreateContainerConfigError")
            action.add_argument("--message", default="", help="the kubelet's message")
        if name == "crash-pod":
            action.add_argument("--reason", default="Error", help='e.g. "OOMKilled"')
            action.add_argument("--exit-code", type=int, default=1, help="e.g. 137")
            action.add_argument(
                "--loop", action="store_true", help="each time they start (CrashLoopBackOff)"
            )
    images = actions.add_parser(
        "missing-images", help="print, or with patterns set, the images no registry has"
    )
    images.add_argument("patterns", nargs="*", help='fnmatch patterns, e.g. "*:does-not-exist"')
    cluster.set_defaults(func=run)


def request(args: argparse.Namespace) -> tuple[str, str, Any]:
    action = args.action
    if action == "status":
        return "GET", BASE, None
    if action == "add-node":
        return "POST", f"{BASE}/nodes", None
    if action == "remove-node":
        return "DELETE", f"{BASE}/nodes/{args.node}", None
    if action in ("node-notready", "node-ready"):
        return "POST", f"{BASE}/nodes/{args.node}/{action.removeprefix('node-')}", None
    if action in ("pause", "resume"):
        return "POST", f"{BASE}/{action}/{args.group}", None
    if action in ("crash-pod", "fail-pod", "delete-pod", "unready-pod", "ready-pod"):
        namespace, _, name = args.pod.rpartition("/")
        body = None
        if action == "unready-pod":
            given = {"message": args.message, "container": args.container}
            body = {k: v for k, v in given.items() if v is not None}
        if action == "crash-pod":
            body = {"reason": args.reason, "exitCode": args.exit_code, "loop": args.loop}
        return (
            "POST",
            f"{BASE}/pods/{namespace or 'default'}/{name}/{action.removesuffix('-pod')}",
            body,
        )
    if action in ("refuse-start", "allow-start"):
        namespace, _, name = args.pod.rpartition("/")
        path = f"{BASE}/pods/{namespace or 'default'}/{name}/refuse-start"
        if action == "allow-start":
            return "DELETE", path, None
        return "POST", path, {"reason": args.reason, "message": args.message}
    if args.patterns:
        return "PUT", f"{BASE}/missing-images", {"patterns": args.patterns}
    return "GET", f"{BASE}/missing-images", None


def run(args: argparse.Namespace) -> int:
    method, path, body = request(args)
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        args.server.rstrip("/") + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10, context=client_context(args.server)) as resp:
            print(json.dumps(json.loads(resp.read() or b"{}"), indent=2))
    except urllib.error.HTTPError as exc:
        sys.stderr.write(exc.read().decode() + "\n")
        return 1
    return 0
