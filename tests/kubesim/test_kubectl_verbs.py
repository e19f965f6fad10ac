"""The kubectl commands a person types first, against the session's server: each generator
(`kubectl create deployment|job|...`, `run`) sends protobuf; the rollout verbs patch and
watch. The same test passes against a real control plane."""

from __future__ import annotations

import subprocess
import time

from tests.kubesim.conftest import KUBECTL, Kubectl


def test_kubectl_create_makes_each_kind(kubectl: Kubectl, namespace: str) -> None:
    commands = {
        ("deployment", "web", "--image=nginx:1.23.1"): "deployment.apps/web created",
        ("job", "once", "--image=busybox:1.36"): "job.batch/once created",
        ("cronjob", "often", "--image=busybox:1.36", "--schedule=*/5 * * * *"): (
            "cronjob.batch/often created"
        ),
        ("service", "clusterip", "front", "--tcp=80:8080"): "service/front created",
        ("configmap", "settings", "--from-literal=a=b"): "configmap/settings created",
        ("secret", "generic", "creds", "--from-literal=p=q"): "secret/creds created",
        ("serviceaccount", "robot"): "serviceaccount/robot created",
        ("role", "reader", "--verb=get,list", "--resource=pods"): (
            "role.rbac.authorization.k8s.io/reader created"
        ),
        ("rolebinding", "reader", "--role=reader", f"--serviceaccount={namespace}:robot"): (
            "rolebinding.rbac.authorization.k8s.io/reader created"
        ),
        ("quota", "small", "--hard=pods=10"): "resourcequota/small created",
        ("poddisruptionbudget", "web", "--selector=app=web", "--min-available=1"): (
            "poddisruptionbudget.policy/web created"
        ),
    }
    for args, said in commands.items():
        assert kubectl("create", *args, namespace=namespace).stdout.strip() == said
    kinds = "deploy,job,cronjob,svc,role,rolebinding,quota,pdb"
    names = kubectl("get", kinds, "-o", "name", namespace=namespace).stdout.split()
    named = ("cm/settings", "secret/creds", "sa/robot")
    names += kubectl("get", *named, "-o", "name", namespace=namespace).stdout.split()
    assert names == [
        "deployment.apps/web",
        "job.batch/once",
        "cronjob.batch/often",
        "service/front",
        "role.rbac.authorization.k8s.io/reader",
        "rolebinding.rbac.authorization.k8s.io/reader",
        "resourcequota/small",
        "poddisruptionbudget.policy/web",
        "configmap/settings",
        "secret/creds",
        "serviceaccount/robot",
    ]
    role = kubectl("get", "role", "reader", "-o", "jsonpath={.rules}", namespace=namespace)
    assert role.stdout == '[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]'
    headers = {
        kind: kubectl("get", kind, namespace=namespace).stdout.splitlines()[0].split()
        for kind in ("job", "cronjob", "quota")
    }
    assert headers == {
        "job": ["NAME", "COMPLETIONS", "DURATION", "AGE"],
        "cronjob": ["NAME", "SCHEDULE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"],
        "quota": ["NAME", "AGE", "REQUEST", "LIMIT"],
    }


def test_kubectl_rolls_a_deployment_out_and_back(kubectl: Kubectl, namespace: str) -> None:
    def run(*args: str) -> str:
        return kubectl(*args, namespace=namespace).stdout.strip()

    assert run("create", "deployment", "web", "--image=nginx:1.23.1") == (
        "deployment.apps/web created"
    )
    assert run("rollout", "status", "deploy/web", "--timeout=55s").endswith(
        'deployment "web" successfully rolled out'
    )
    assert run("expose", "deploy/web", "--port=80") == "service/web exposed"
    assert run("scale", "deploy/web", "--replicas=2") == "deployment.apps/web scaled"
    assert run("set", "image", "deploy/web", "nginx=nginx:1.25.3") == (
        "deployment.apps/web image updated"
    )
    run("rollout", "status", "deploy/web", "--timeout=55s")
    assert run("rollout", "restart", "deploy/web") == "deployment.apps/web restarted"
    run("rollout", "status", "deploy/web", "--timeout=55s")
    assert run("rollout", "undo", "deploy/web") == "deployment.apps/web rolled back"
    run("rollout", "status", "deploy/web", "--timeout=55s")
    image = run("get", "deploy/web", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image == "nginx:1.25.3"  # undo returns to the revision before the restart
    assert run("label", "deploy/web", "tier=front") == "deployment.apps/web labeled"
    assert run("annotate", "deploy/web", "note=hi") == "deployment.apps/web annotated"
    assert run("wait", "--for=condition=Available", "deploy/web", "--timeout=55s") == (
        "deployment.apps/web condition met"
    )
    assert run("run", "single", "--image=nginx:1.23.1") == "pod/single created"
    assert run("delete", "pod", "single", "--wait", "--timeout=55s") == 'pod "single" deleted'
    assert run("delete", "deploy/web", "--wait") == 'deployment.apps "web" deleted'


def test_kubectl_get_watch_streams_changes(
    kubectl: Kubectl, kubesim_server: object, namespace: str
) -> None:
    kubectl("create", "configmap", "watched", namespace=namespace)
    assert KUBECTL is not None
    kubeconfig = kubesim_server.kubeconfig_path
    watch = subprocess.Popen(
        [KUBECTL, f"--kubeconfig={kubeconfig}", f"--namespace={namespace}", "get", "cm",
         "watched", "-w", "-o", "name"],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert watch.stdout is not None
        assert watch.stdout.readline().strip() == "configmap/watched"
        time.sleep(0.5)  # the watch is open once the first line is out; let it settle
        kubectl("label", "cm", "watched", "seen=yes", namespace=namespace)
        assert watch.stdout.readline().strip() == "configmap/watched"
    finally:
        watch.kill()
        watch.wait()
