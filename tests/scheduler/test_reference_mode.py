"""The scheduler in reference mode (`KUBETAINT_REFERENCE=1`: no filter memo, no remembered masks,
scores or verdicts, no vectorised filters or scores) decides exactly as with every shortcut on:
the same node, message and nodes gone through for every pod of a cluster with taints, zones,
spread constraints, pod anti-affinity, host ports and pods of one shape written alike."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kubetaint.scheduler.extension_points import EXTENSION_POINTS, Plugin, declares, implements
from kubetaint.scheduler.registry import new_in_tree_registry
from kubetaint.speed.reference import reference_mode_set
from scheduler.builders import node, scheduler, taint, toleration

JSON = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


@contextmanager
def reference_mode() -> Iterator[None]:
    with reference_mode_set(True):
        yield


def _nodes(count: int) -> list[JSON]:
    return [
        node(
            f"n{i:03d}",
            cpu="2" if i % 7 == 0 else "4",
            taints=[taint("class", f"c{i % 3}")] if i % 2 else None,
            labels={ZONE: f"z{i % 3}", HOSTNAME: f"n{i:03d}"},
        )
        for i in range(count)
    ]


def _pod(i: int, rng: random.Random) -> JSON:
    app = f"app-{i % 4}"
    spec: JSON = {
        "containers": [
            {
                "name": "c",
                "image": "x",
                "resources": {"requests": {"cpu": rng.choice(["100m", "500m", "1", "2"])}},
            }
        ]
    }
    if i % 3:
        spec["tolerations"] = [toleration("class", "Equal", f"c{rng.randrange(3)}", "NoSchedule")]
    if i % 4 == 0:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if i % 5 == 0:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": {"app": app}}}
                ]
            }
        }
    if i % 11 == 0:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"uid-{i}", "labels": {"app": app}},
        "spec": spec,
    }


def _decisions(reference: bool, seed: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    with reference_mode() if reference else _plain():
        s = scheduler(_nodes(40))
        out: list[tuple[Any, ...]] = []
        for i in range(160):
            s.add_pod(_pod(i, rng))
            if i % 8 == 7:
                for r in s.run():
                    evaluation = r.evaluation
                    out.append(
                        (r.pod["metadata"]["name"], r.node, r.message, evaluation and evaluation.processed)
                    )
                    if r.node is not None:
                        s.update_pod({**r.pod, "spec": {**r.pod["spec"], "nodeName": r.node}})
        return out


@contextmanager
def _plain() -> Iterator[None]:
    yield


@pytest.mark.parametrize("seed", [1, 2], ids=["one cluster", "another cluster"])
def test_reference_mode_decides_as_the_shortcuts_do(seed: int) -> None:
    assert _decisions(False, seed) == _decisions(True, seed)


def test_every_in_tree_plugin_declares_the_points_it_is_enabled_at() -> None:
    """The default profile's plugins each declare, by their bases, at least one extension point,
    and `implements` reads nothing but those declarations."""
    registry = new_in_tree_registry(None)
    for name, factory in registry.items():
        plugin = factory({})
        assert isinstance(plugin, Plugin)
        points = [point for point in EXTENSION_POINTS if implements(plugin, point)]
        assert points, name
        assert all(declares(plugin, EXTENSION_POINTS[p]) for p in points)
