"""`NodeInfo.add_pods` (the scheduler cache's pods listed before their node, added with it) sums
pods sharing their spec facts once per group: it must leave exactly what `add_pod` of each pod
in turn leaves: the pods in order, the same totals, and the resource names and host ports in
the same order (the cache gives resource columns in that order)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info

JSON = dict[str, Any]


def _container(requests: dict[str, str], port: int | None) -> JSON:
    container: JSON = {"name": "c", "image": "i", "resources": {"requests": requests}}
    if port is not None:
        container["ports"] = [{"containerPort": port, "hostPort": port}]
    return container


#: Specs whose values pods share (one template each), by name.
TEMPLATES: dict[str, JSON] = {
    "cpu": {"containers": [_container({"cpu": "100m"}, None)]},
    "memory-first": {"containers": [_container({"memory": "64Mi", "cpu": "1"}, None)]},
    "gpu": {"containers": [_container({"example.com/gpu": "1"}, 8080)]},
    "empty": {"containers": [_container({}, None)]},
    "ports": {"containers": [_container({"cpu": "0"}, 9090), _container({}, 9090)]},
}


def _pod(name: str, template: str, own: bool) -> PodInfo:
    """A pod of `template`: sharing its values (stamped from it), or with copies of its own."""
    spec = TEMPLATES[template]
    if own:
        spec = {"containers": [dict(c) for c in spec["containers"]]}
    return make_pod_info(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {**spec, "nodeName": "n"},
        }
    )


def _state(ni: NodeInfo) -> Any:
    return (
        list(ni.pods.items()),
        list(ni.requested.items()),
        ni.nonzero_cpu,
        ni.nonzero_memory,
        list(ni.used_ports.items()),
    )


def _compare(pis: list[PodInfo]) -> None:
    node: JSON = {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    bulk, one_by_one = NodeInfo(node, 0), NodeInfo(node, 0)
    bulk.add_pods(pis)
    for pi in pis:
        one_by_one.add_pod(pi)
    assert _state(bulk) == _state(one_by_one)


TABLE = [
    pytest.param([], id="no pods"),
    pytest.param([("a", "cpu", False), ("b", "cpu", False), ("c", "cpu", False)], id="one template's pods"),
    pytest.param(
        [("a", "cpu", False), ("b", "memory-first", False), ("c", "cpu", False), ("d", "gpu", False)],
        id="templates interleaved: names first met in pod order",
    ),
    pytest.param(
        [("a", "ports", False), ("b", "gpu", False), ("c", "ports", True)], id="host ports, shared or not"
    ),
    pytest.param([("a", "empty", False), ("b", "memory-first", True)], id="a pod without requests first"),
]


@pytest.mark.parametrize("pods", TABLE)
def test_add_pods_leaves_what_adding_each_pod_leaves(pods: list[tuple[str, str, bool]]) -> None:
    _compare([_pod(*spec) for spec in pods])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(TEMPLATES)), st.booleans()), max_size=12))
def test_any_pods_add_up_as_added_one_by_one(specs: list[tuple[str, bool]]) -> None:
    _compare([_pod(f"p{i}", template, own) for i, (template, own) in enumerate(specs)])
