"""Scheduler.pods_changed (the pod informer's handler) of a batch of updates, and of one update at
a time, must leave the scheduler exactly as update_pod of each pair in turn does: the same cache (pods, order, totals, generation) and the
same queue, for any mix of owner, label and status changes of bound pods (the fast lane), specs
replaced (a binding), unbound pods and pods of nodes the cache does not know."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.scheduler import Scheduler

from .builders import cache_state, node, pod, scheduler

JSON = dict[str, Any]
Change = Callable[[JSON], JSON]


def _owner(p: JSON) -> JSON:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
    return {**p, "metadata": {**p["metadata"], "ownerReferences": [ref]}}


def _labels(p: JSON) -> JSON:
    return {**p, "metadata": {**p["metadata"], "labels": {"tier": "web"}}}


def _status(p: JSON) -> JSON:
    return {**p, "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z"}}


def _new_spec(p: JSON) -> JSON:
    return {**p, "spec": dict(p["spec"])}  # equal, but another object: the generic path


def _bind_n2(p: JSON) -> JSON:
    return {**p, "spec": {**p["spec"], "nodeName": "n2"}}


def _requests_more(p: JSON) -> JSON:
    containers = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]
    return {**p, "spec": {**p["spec"], "containers": containers}}


CHANGES: dict[str, Change] = {
    "owner": _owner,
    "labels": _labels,
    "status": _status,
    "new spec": _new_spec,
    "bind to n2": _bind_n2,
    "more requests": _requests_more,
}


def _pods() -> list[JSON]:
    return [
        pod("a", cpu="500m", node_name="n1"),
        pod("b", cpu="1", node_name="n1", start="2024-01-01T00:00:00Z"),
        pod("c", memory="1Gi", node_name="n2"),
        pod("gone", cpu="100m", node_name="missing-node"),
        pod("p1", cpu="200m"),
        pod("p2", cpu="300m", priority=10),
    ]


def _scheduler(pods: list[JSON]) -> Scheduler:
    return scheduler([node("n1", cpu="8"), node("n2", cpu="8")], pods)


def _state(s: Scheduler) -> Any:
    queue = s.queue
    return cache_state(s.cache), sorted(queue.pods), sorted(queue.where.items())


def _pairs(steps: list[tuple[str, str]], current: dict[str, JSON]) -> list[tuple[JSON, JSON]]:
    """(old, new) of each step in turn, each step changing the latest version of its pod."""
    pairs = []
    for name, change in steps:
        old = current[name]
        new = CHANGES[change](old)
        current[name] = new
        pairs.append((old, new))
    return pairs


def _updates(pairs: list[tuple[JSON, JSON]]) -> list[tuple[str, Any, JSON | None, JSON]]:
    """A pod informer's batch of these updates: (kind, key, old, new) each."""
    return [
        ("MODIFIED", (new["metadata"].get("namespace"), new["metadata"]["name"]), old, new)
        for old, new in pairs
    ]


def _compare(steps: list[tuple[str, str]], bound_only: bool = False) -> None:
    pods = _pods()  # both schedulers hold the very same objects, as informer handlers would
    if bound_only:  # nothing queued: the queue stays idle unless a pending pod comes
        pods = [p for p in pods if p["spec"].get("nodeName")]
    grouped, one_by_one = _scheduler(pods), _scheduler(pods)
    pairs = _pairs(steps, {p["metadata"]["name"]: p for p in _pods()})
    handled = _scheduler(pods)  # told by the informer handler one pair at a time
    grouped.pods_changed(_updates(pairs))
    for old, new in pairs:
        one_by_one.update_pod(new, old)
        handled.pods_changed(_updates([(old, new)]))
    assert _state(grouped) == _state(one_by_one)
    assert _state(handled) == _state(one_by_one)
    for name, ni in grouped.cache.nodes.items():  # the same objects, not just equal ones
        assert [pi.pod for pi in ni.pods.values()] == [
            pi.pod for pi in one_by_one.cache.nodes[name].pods.values()
        ]
        assert all(
            a.pod is b.pod
            for a, b in zip(ni.pods.values(), one_by_one.cache.nodes[name].pods.values(), strict=True)
        )


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([("a", "owner"), ("b", "owner"), ("c", "owner")], id="an adoption of bound pods"),
        pytest.param([("a", "owner"), ("p1", "owner"), ("gone", "owner")], id="bound, pending and lost pods"),
        pytest.param([("b", "status"), ("a", "labels"), ("b", "owner")], id="status then owner changes"),
        pytest.param([("p1", "bind to n2"), ("p1", "owner"), ("a", "owner")], id="a binding then adoption"),
        pytest.param([("a", "more requests"), ("a", "owner"), ("c", "new spec")], id="spec replacements"),
        pytest.param([], id="an empty group"),
    ],
)
def test_a_group_matches_update_pod_of_each_pair(steps: list[tuple[str, str]]) -> None:
    _compare(steps)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "gone", "p1", "p2"]), st.sampled_from(sorted(CHANGES))),
        max_size=12,
    )
)
def test_any_group_matches_update_pod_of_each_pair(steps: list[tuple[str, str]]) -> None:
    _compare(steps)


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param("cached", id="the pod cached on its node"),
        pytest.param("assumed here", id="the pod assumed on its node"),
        pytest.param("assumed elsewhere", id="the pod assumed on another node"),
        pytest.param("unknown node", id="the pod bound to a node the cache does not know"),
        pytest.param("not cached", id="the pod not cached at all"),
        pytest.param("same object", id="the very object cached again"),
    ],
)
def test_refresh_kept_spec_matches_add_pod(setup: str) -> None:
    from kubetaint.scheduler.cache import Cache
    from kubetaint.scheduler.podinfo import make_pod_info, pod_key

    def build() -> tuple[Cache, JSON]:
        cache = Cache()
        cache.add_node(node("n1", cpu="8"))
        cache.add_node(node("n2", cpu="8"))
        cache.add_pod(pod("other", cpu="1", node_name="n1"))
        bound = pod("p", cpu="500m", node_name="missing" if setup == "unknown node" else "n1")
        if setup in ("cached", "unknown node", "same object"):
            cache.add_pod(bound)
        elif setup.startswith("assumed"):
            cache.assume_pod(make_pod_info(bound), "n2" if setup == "assumed elsewhere" else "n1")
        cache.add_pod(pod("later", cpu="1", node_name="n1"))
        return cache, bound

    fast, bound = build()
    generic, _ = build()
    new = bound if setup == "same object" else _owner(bound)
    node_name = new["spec"]["nodeName"]
    # both caches hold `bound` itself where they hold it: the very spec object is kept
    generic_bound = generic.pod_info(pod_key(bound))
    if generic_bound is not None:
        generic_bound.pod = fast.pod_info(pod_key(bound)).pod  # type: ignore[union-attr]
    fast.refresh_kept_spec(new, pod_key(new), node_name)
    generic.add_pod(new, pod_key(new))
    assert cache_state(fast) == cache_state(generic)
    assert fast.assumed == generic.assumed


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "gone", "p1", "p2"]), st.sampled_from(sorted(CHANGES))),
        max_size=12,
    )
)
def test_any_group_over_an_idle_queue_matches_update_pod_of_each_pair(steps: list[tuple[str, str]]) -> None:
    """No pod queued at first (p1 and p2 come as updates of pods never added: then queued)."""
    _compare(steps, bound_only=True)
