"""The watcher reads only the Events the UI shows: the server filters out the rest."""

from __future__ import annotations

import threading
from typing import Any

from controllers.base import EVENT, POD, Controller
from controllers.kube import ApiKube
from opsboard.engine.watcher import Listed, Streamed, Watcher
from tests.engine.toy import CONFIGMAP, TOY, expected_children, reconcile

TOYS = Controller("toy", TOY, (CONFIGMAP, POD), reconcile, expected_children)


def _event(namespace: str, name: str, kind: str, api_version: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "namespace": namespace,
        },
        "reason": "Testing",
        "message": f"about {kind} {name}",
        "type": "Normal",
    }


def test_the_watcher_streams_only_the_events_about_primary_objects(
    api: ApiKube, namespace: str, toy_crd: None
) -> None:
    watcher = Watcher(kube=api, controllers=[TOYS], enqueue=lambda **_: True)
    stream = threading.Thread(target=watcher._stream, args=(EVENT, namespace, ""), daemon=True)
    stream.start()
    try:
        assert isinstance(watcher.inbox.get(timeout=30), Listed)  # listed, now watching
        api.create(EVENT, _event(namespace, "a-pod", "Pod", "v1"))
        api.create(EVENT, _event(namespace, "a-configmap", "ConfigMap", "v1"))
        api.create(EVENT, _event(namespace, "a-toy", "Toy", TOY.api_version))
        streamed: list[str] = []
        while "a-toy" not in streamed:  # the last one: the others, if sent, came before it
            item = watcher.inbox.get(timeout=30)
            assert isinstance(item, Streamed)
            if item.type != "BOOKMARK":
                streamed.append(item.body["involvedObject"]["name"])
    finally:
        watcher.stop.set()
    assert streamed == ["a-toy"]
