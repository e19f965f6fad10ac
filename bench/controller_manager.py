"""`python -m bench.controller_manager --kubeconfig FILE [--url URL] [--every S] OUT`:
sample kube-controller-manager's own metrics into OUT (JSON lines) while a run goes on,
until stopped; `--table` prints OUT's samples instead, one row every ten seconds.

What bench/control_plane.py infers from the API server's count, the manager says of
itself: how deep the deployment and ReplicaSet controllers' work queues are, and how
long its requests wait on their clients' rate limiters — seconds of waiting per second,
that is how many requests wait at once. The rig serves these metrics on its default
address (below), to the kubeconfig's credentials; a managed control plane may not serve
them at all.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kubernetes
import urllib3

from bench.kube import metric_samples

URL = "https://127.0.0.1:10257/metrics"
QUEUES = ("deployment", "replicaset")
_WANTED = ("workqueue_depth", "rest_client_rate_limiter_duration_seconds_sum",
           "rest_client_requests_total")  # fmt: skip


def sample(metrics: str) -> dict[str, float]:
    """One sample: the queues' depths, the rate limiters' total wait, the requests made."""
    out = {"waited": 0.0, "requests": 0.0}
    for s in metric_samples(metrics, *_WANTED):
        if s.name == "workqueue_depth" and s.labels.get("name") in QUEUES:
            out[s.labels["name"]] = s.value
        elif s.name == "rest_client_rate_limiter_duration_seconds_sum":
            out["waited"] += s.value
        elif s.name == "rest_client_requests_total":
            out["requests"] += s.value
    return out


def rows(samples: list[dict[str, float]], every: float = 10.0) -> Iterable[str]:
    """A row per `every` seconds: queue depths at its end, requests waiting on the rate
    limiters at once (on average), requests per second."""
    yield f"{'t (s)':>6} {'deployment queue':>17} {'ReplicaSet queue':>17} {'waiting':>8} {'req/s':>6}"
    if not samples:
        return
    start = last = samples[0]
    for s in samples[1:]:
        if (span := s["t"] - last["t"]) < every:
            continue
        waiting = (s["waited"] - last["waited"]) / span
        rate = (s["requests"] - last["requests"]) / span
        yield (f"{s['t'] - start['t']:6.0f} {s.get('deployment', 0):17.0f} "
               f"{s.get('replicaset', 0):17.0f} {waiting:8.1f} {rate:6.1f}")  # fmt: skip
        last = s


def _pool(kubeconfig: Path) -> tuple[urllib3.PoolManager, dict[str, str]]:
    """The kubeconfig's credentials; the manager's serving certificate is its own,
    self-signed by default, so it is not checked (it is only read from)."""
    config = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), client_configuration=config)
    headers = {"Accept": "text/plain"}
    if token := config.get_api_key_with_prefix("BearerToken"):
        headers["Authorization"] = token
    pool = urllib3.PoolManager(cert_reqs="CERT_NONE", cert_file=config.cert_file,
                               key_file=config.key_file)  # fmt: skip
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    return pool, headers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.controller_manager", description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--kubeconfig", type=Path)
    parser.add_argument("--url", default=URL)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--table", action="store_true", help="print OUT's samples")
    args = parser.parse_args(argv)
    if args.table:
        print("\n".join(rows([json.loads(line) for line in args.out.open()])))
        return
    if args.kubeconfig is None:
        parser.error("--kubeconfig is needed to sample")
    pool, headers = _pool(args.kubeconfig)
    with args.out.open("a") as out:
        while True:
            began = time.time()
            response = pool.request("GET", args.url, headers=headers, timeout=10)
            if response.status != 200:
                parser.exit(1, f"{args.url}: HTTP {response.status}: {response.data[:200]!r}\n")
            record: dict[str, Any] = {"t": began, **sample(response.data.decode())}
            out.write(json.dumps(record) + "\n")
            out.flush()
            time.sleep(max(0.0, args.every - (time.time() - began)))


if __name__ == "__main__":
    main()
