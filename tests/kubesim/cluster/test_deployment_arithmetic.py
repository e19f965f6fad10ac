"""The rollout arithmetic of the Deployment controller, on plain dicts."""

from __future__ import annotations

from kubesim.cluster.deployment import max_surge, max_unavailable, new_rs_replicas, same_template


def deployment(
    replicas: int, surge: object = None, unavailable: object = None, strategy: str = "RollingUpdate"
):
    rolling = {
        k: v for k, v in {"maxSurge": surge, "maxUnavailable": unavailable}.items() if v is not None
    }
    return {
        "spec": {"replicas": replicas, "strategy": {"type": strategy, "rollingUpdate": rolling}}
    }


def rs(replicas: int):
    return {"spec": {"replicas": replicas}}


def test_defaults_are_25_percent_surge_rounded_up_and_unavailable_rounded_down():
    assert (max_surge(deployment(10)), max_unavailable(deployment(10))) == (3, 2)
    assert (max_surge(deployment(3)), max_unavailable(deployment(3))) == (1, 0)


def test_zero_surge_and_zero_unavailable_becomes_one_unavailable():
    assert max_unavailable(deployment(4, surge=0, unavailable=0)) == 1


def test_new_replica_set_grows_only_by_the_surge():
    d = deployment(4, surge=1, unavailable=0)
    assert new_rs_replicas(d, [rs(4)], 0) == 1
    assert new_rs_replicas(d, [rs(1), rs(4)], 1) == 1
    assert new_rs_replicas(d, [rs(1), rs(3)], 1) == 2


def test_same_template_ignores_the_hash_label():
    d = {"spec": {"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}}}
    r = {
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "x", "pod-template-hash": "abc"}},
                "spec": {"containers": []},
            }
        }
    }
    assert same_template(r, d)
    d["spec"]["template"]["spec"]["containers"] = [{"name": "c"}]
    assert not same_template(r, d)
