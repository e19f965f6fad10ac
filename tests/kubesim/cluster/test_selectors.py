from __future__ import annotations

from kubesim.cluster.selectors import matches_selector, node_affinity_matches, untolerated_taint

NODE = {"metadata": {"name": "n1", "labels": {"disk": "ssd", "zone": "a"}}, "spec": {}}


def test_label_selector_with_expressions():
    selector = {
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}],
    }
    assert matches_selector(selector, {"app": "x", "tier": "web"})
    assert not matches_selector(selector, {"app": "x", "tier": "db"})
    assert not matches_selector(None, {"app": "x"})
    assert matches_selector({}, {"anything": "goes"})


def test_node_affinity_terms_are_ored_and_match_fields():
    pod = {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "disk", "operator": "In", "values": ["hdd"]}
                                ]
                            },
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                                ]
                            },
                        ]
                    }
                }
            }
        }
    }
    assert node_affinity_matches(pod, NODE)
    other = {**NODE, "metadata": {"name": "n2", "labels": NODE["metadata"]["labels"]}}
    assert not node_affinity_matches(pod, other)


def test_taints_need_a_matching_toleration():
    node = {
        **NODE,
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    }
    assert untolerated_taint({"spec": {}}, node) == node["spec"]["taints"][0]
    tolerating = {
        "spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu"}]}
    }
    assert untolerated_taint(tolerating, node) is None
    wildcard = {"spec": {"tolerations": [{"operator": "Exists"}]}}
    assert untolerated_taint(wildcard, node) is None
    wrong_effect = {
        "spec": {"tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]}
    }
    assert untolerated_taint(wrong_effect, node) is not None
