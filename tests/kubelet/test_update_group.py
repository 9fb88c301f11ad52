"""HollowNodePool takes an informer's batch of updates in one call (`_on_pods`): each kubelet
must end up exactly as `_on_pod_update` of each pair in turn leaves it (its pod view, its pending
pods, the callbacks it schedules) and write exactly the same afterwards, for groups of owner
changes (a ReplicaSet's adoptions) mixed with status changes, deletions in progress, bindings
and pods of nodes outside the pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubelet.builders import container, make_store, node_config, pod
from kubelet.test_start_replay import NODES, RecordingClock, _dump, _state
from kubetaint.kubelet import HollowNodePool
from kubetaint.store.informer import Changes
from store.commits import update_many

JSON = dict[str, Any]
Change = Callable[[JSON], JSON]


class OneByOnePool(HollowNodePool):
    """The generic path: `_on_pod_update` of each pair of a batch of updates."""

    def _on_pods(self, changes: Changes) -> None:
        if changes.only != "MODIFIED":
            super()._on_pods(changes)
            return
        for _, _, old, new in changes:
            assert old is not None
            self._on_pod_update(old, new)


def _owner(p: JSON) -> JSON:
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
    return {**p, "metadata": {**p["metadata"], "ownerReferences": [ref]}}


def _failed(p: JSON) -> JSON:
    return {**p, "status": {**(p.get("status") or {}), "phase": "Failed"}}


def _deleting(p: JSON) -> JSON:
    return {**p, "metadata": {**p["metadata"], "deletionTimestamp": "2024-01-01T00:00:00Z"}}


def _bind_n2(p: JSON) -> JSON:
    return {**p, "spec": {**p["spec"], "nodeName": "n2"}}


CHANGES: dict[str, Change] = {"owner": _owner, "failed": _failed, "deleting": _deleting, "bind": _bind_n2}
SEED = [("a", "n1"), ("b", "n1"), ("c", "n2"), ("d", "elsewhere"), ("e", ""), ("f", "n3")]


def _run(pool_type: type[HollowNodePool], steps: list[tuple[str, str]]) -> list[Any]:
    clock = RecordingClock()
    store = make_store(clock)
    for name, node in SEED:
        store.create("pods", pod(name, node, containers=[container(cpu="100m")]))
    pool = pool_type(store, clock, [node_config(n) for n in NODES])
    pool.start()
    clock.run_until(clock.now() + 15)
    before = len(clock.scheduled)
    group = []
    latest: dict[str, JSON] = {}
    for name, change in steps:
        current = latest.get(name)
        if current is None:
            current = store.get("pods", "default", name)
        else:  # its second change in the group: no resourceVersion precondition
            current = {
                **current,
                "metadata": {k: v for k, v in current["metadata"].items() if k != "resourceVersion"},
            }
        latest[name] = CHANGES[change](current)
        group.append(latest[name])
    stored, err = update_many(store, "pods", group)  # delivered as one group (a ReplicaSet's adoptions)
    assert err is None and len(stored) == len(group)
    after_group = (clock.scheduled[before:], _state(pool))
    clock.run_until(clock.now() + 30)
    return [after_group, _state(pool), _dump(store)]


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([("a", "owner"), ("b", "owner"), ("c", "owner")], id="an adoption of running pods"),
        pytest.param([("d", "owner"), ("e", "owner"), ("f", "owner")], id="pods outside the pool or unbound"),
        pytest.param([("a", "failed"), ("a", "owner"), ("b", "owner")], id="a pod failing, then adopted"),
        pytest.param([("b", "deleting"), ("c", "owner")], id="a deletion in progress beside an adoption"),
        pytest.param([("e", "bind"), ("e", "owner"), ("a", "owner")], id="a binding, then the pod adopted"),
    ],
)
def test_a_group_matches_on_pod_update_of_each_pair(steps: list[tuple[str, str]]) -> None:
    assert _run(HollowNodePool, steps) == _run(OneByOnePool, steps)


def test_a_group_reaches_the_pool_in_one_call() -> None:
    calls: list[int] = []

    class CountingPool(HollowNodePool):
        def _on_pods(self, changes: Changes) -> None:
            if changes.only == "MODIFIED":
                calls.append(len(changes))
            super()._on_pods(changes)

    _run(CountingPool, [("a", "owner"), ("b", "owner"), ("c", "owner")])
    assert [count for count in calls if count > 1] == [3]  # (the kubelets' own writes: one each)
