"""`python -m kubesim serve ...` and `python -m kubesim fault ... --server URL`."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import signal
import sys
import threading
import urllib.error
import urllib.request
from typing import Any

from kubesim.control import client_context
from kubesim.faults import ERROR_CODES


def _resource_arg(text: str) -> tuple[str, str]:
    name, sep, quantity = text.partition("=")
    if not sep or "/" not in name or not quantity:
        raise argparse.ArgumentTypeError(
            f"expected NAME=QUANTITY, e.g. example.com/accel=2: {text!r}"
        )
    return name, quantity


def _serve(args: argparse.Namespace) -> int:
    from kubesim.server import KubeSim

    sim = KubeSim(
        host=args.host,
        port=args.port,
        data_dir=args.data_dir,
        seed=args.seed,
        nodes=args.nodes,
        pod_start_delay=args.pod_start_delay,
        cluster=not args.no_cluster,
        cluster_options={"node_resources": dict(args.node_resource)},
        tls=not args.plain_http,
        tls_names=tuple(args.tls_san),
    )
    done = threading.Event()  # a stop asked for during start-up is kept for after it
    for sig in (signal.SIGINT, signal.SIGTERM):
        # Set from a thread: the handler runs in the main thread, which may hold the
        # event's lock just then (as opsboard.signal_actions explains).
        signal.signal(sig, lambda *_: threading.Thread(target=done.set, daemon=True).start())
    sim.start()
    _freeze_start_up()
    if args.kubeconfig_out:
        sim.write_kubeconfig(args.kubeconfig_out)
    print(f"kubesim serving {sim.url}", flush=True)
    if args.kubeconfig_out:
        print(f"kubeconfig written to {args.kubeconfig_out}", flush=True)
    done.wait()
    sim.stop()
    return 0


def _freeze_start_up() -> None:
    """What start-up loaded (the modules, the built-in OpenAPI schemas, the RBAC policy, the
    objects read from the data dir) stays for the life of the process. Frozen, a full
    collection no longer walks it: each one had stopped every request for 38-46 ms, the
    slowest patch of the patch benchmark for every operator. Only in the served process:
    a KubeSim started in a test's process leaves that process's collector alone."""
    gc.collect()  # start-up's own cycles, which a freeze would keep for good
    gc.freeze()


def _call(server: str, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        server.rstrip("/") + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10, context=client_context(server)) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        sys.stderr.write(exc.read().decode() + "\n")
        raise SystemExit(1) from None


def _fault(args: argparse.Namespace) -> int:
    s = args.server
    if args.action == "list":
        out = _call(s, "GET", "/_kubesim/faults")
    elif args.action == "clear":
        out = _call(s, "DELETE", "/_kubesim/faults")
    elif args.action == "remove":
        out = _call(s, "DELETE", f"/_kubesim/faults/{args.id}")
    elif args.action == "close-watches":
        out = _call(s, "POST", "/_kubesim/watches/close", {"resource": args.resource})
    elif args.action == "seed":
        out = _call(s, "POST", "/_kubesim/faults/seed", {"seed": args.seed})
    else:
        spec: dict[str, Any] = {"type": args.action}
        for key in ("verb", "resource", "namespace", "count"):
            if getattr(args, key, None) is not None:
                spec[key] = getattr(args, key)
        if args.action == "latency":
            spec |= {"latency_ms": args.ms, "jitter_ms": args.jitter_ms}
        elif args.action == "error":
            spec |= {
                "code": args.code,
                "probability": args.probability,
                "retry_after": args.retry_after,
            }
        out = _call(s, "POST", "/_kubesim/faults", spec)
    print(json.dumps(out, indent=2))
    return 0


def _requests(args: argparse.Namespace) -> int:
    if args.clear:
        out = _call(args.server, "DELETE", "/_kubesim/requests")
    else:
        out = _call(args.server, "GET", "/_kubesim/requests")
    print(json.dumps(out, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kubesim", description="A local Kubernetes API server emulator."
    )
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the Kubernetes API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=6443, help="0 picks a free port")
    serve.add_argument("--data-dir", default=".opsboard/kubesim")
    serve.add_argument("--kubeconfig-out", default=None)
    serve.add_argument("--nodes", type=int, default=3)
    serve.add_argument("--pod-start-delay", type=float, default=0.2)
    serve.add_argument("--seed", type=int, default=None)
    serve.add_argument(
        "--tls-san",
        action="append",
        default=[],
        metavar="NAME",
        help="another DNS name or IP the serving certificate names (repeatable), "
        "e.g. the name other containers reach kubesim by",
    )
    serve.add_argument(
        "--plain-http",
        action="store_true",
        help="serve plain HTTP instead of HTTPS with kubesim's own CA (tokens and RBAC still apply)",
    )
    serve.add_argument(
        "--node-resource",
        action="append",
        default=[],
        type=_resource_arg,
        metavar="NAME=QUANTITY",
        help="an extended resource every node advertises, e.g. example.com/accel=2 (repeatable)",
    )
    serve.add_argument(
        "--no-cluster",
        action="store_true",
        help="serve the API only, without simulated nodes and controllers",
    )
    serve.set_defaults(func=_serve)

    fault = sub.add_parser("fault", help="inject or clear HTTP faults in a running kubesim")
    fault.add_argument("--server", required=True, help="e.g. https://127.0.0.1:6443")
    actions = fault.add_subparsers(dest="action", required=True)
    for name in ("latency", "error", "expire-watch"):
        a = actions.add_parser(name)
        a.add_argument("--verb")
        a.add_argument("--resource", help='e.g. "pods" or "deployments.apps"')
        a.add_argument("--namespace")
        a.add_argument("--count", type=int, help="only the next N matching requests")
        if name == "latency":
            a.add_argument("--ms", type=float, required=True)
            a.add_argument("--jitter-ms", type=float, default=0.0)
        if name == "error":
            a.add_argument("--code", type=int, required=True, choices=ERROR_CODES)
            a.add_argument("--probability", type=float, default=1.0)
            a.add_argument("--retry-after", type=int, default=1)
    actions.add_parser("list")
    actions.add_parser("clear")
    rm = actions.add_parser("remove")
    rm.add_argument("id", type=int)
    cw = actions.add_parser("close-watches")
    cw.add_argument("--resource")
    sd = actions.add_parser("seed")
    sd.add_argument("seed", type=int)
    fault.set_defaults(func=_fault)

    reqs = sub.add_parser("requests", help="print or clear the request log of a running kubesim")
    reqs.add_argument("--server", required=True)
    reqs.add_argument("--clear", action="store_true")
    reqs.set_defaults(func=_requests)

    from kubesim.cluster.cli import add_cluster_parser

    add_cluster_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.func(args))
