"""`Cache.update_pod(pod, key)` with the pod's key handed in (the scheduler has it already) leaves
the cache exactly as `update_pod(pod)` working the key out does: the same pods in the same order,
totals, columns, assumed pods and returned PodInfo, for owner, status and node changes, assumed
pods, bindings, and pods whose node is gone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.registry.binding import bound_pod
from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.podinfo import make_pod_info, pod_key

from .builders import cache_state, cache_with_pods, node, pod

JSON = dict[str, Any]


def _owner(p: JSON) -> JSON:
    return {**p, "metadata": {**p["metadata"], "ownerReferences": [{"uid": "rs", "controller": True}]}}


def _status(p: JSON) -> JSON:
    return {**p, "status": {"phase": "Running"}}


def _new_spec(p: JSON) -> JSON:
    return {**p, "spec": {**p["spec"], "nodeName": "n2"}}


def _same_object(p: JSON) -> JSON:
    return p


Setup = Callable[[Cache, list[JSON]], JSON]


def _plain(index: int, change: Callable[[JSON], JSON]) -> Setup:
    return lambda _cache, pods: change(pods[index])


def _assumed_then_bound(cache: Cache, _pods: list[JSON]) -> JSON:
    unbound = pod("e", cpu="300m")
    cache.assume_pod(make_pod_info(unbound), "n1")
    return bound_pod(unbound, "n1")


def _assumed_elsewhere(cache: Cache, _pods: list[JSON]) -> JSON:
    unbound = pod("e", cpu="300m")
    cache.assume_pod(make_pod_info(unbound), "n2")
    return bound_pod(unbound, "n1")


def _node_gone(cache: Cache, pods: list[JSON]) -> JSON:
    cache.remove_node(node("n2", cpu="8"))
    return _owner(pods[2])


def _new_pod(_cache: Cache, _pods: list[JSON]) -> JSON:
    return pod("z", cpu="100m", node_name="n2")


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(_plain(0, _owner), id="an adoption keeps the node and spec"),
        pytest.param(_plain(1, _status), id="a status change keeps the node and spec"),
        pytest.param(_plain(2, _new_spec), id="a new spec object on another node"),
        pytest.param(_plain(0, _same_object), id="the very object cached again"),
        pytest.param(_assumed_then_bound, id="the binding of a pod assumed on its node"),
        pytest.param(_assumed_elsewhere, id="the binding of a pod assumed on another node"),
        pytest.param(_node_gone, id="an owner change of a pod whose node is gone"),
        pytest.param(_new_pod, id="a pod the cache has not seen"),
    ],
)
def test_an_update_given_the_key_leaves_what_an_update_working_it_out_leaves(setup: Setup) -> None:
    given, given_pods = cache_with_pods()
    worked_out, worked_pods = cache_with_pods()
    pod_given = setup(given, given_pods)
    pod_worked = setup(worked_out, worked_pods)
    result_given = given.update_pod(pod_given, pod_key(pod_given))
    result_worked = worked_out.update_pod(pod_worked)
    assert cache_state(given) == cache_state(worked_out)
    assert (result_given is None) == (result_worked is None)
    if result_given is not None and result_worked is not None:
        assert (result_given.key, result_given.pod, result_given.node_name) == (
            result_worked.key,
            result_worked.pod,
            result_worked.node_name,
        )
