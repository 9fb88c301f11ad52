"""A DaemonSet's pods by node keep, once asked for a revision, how many of their pods a rolling
update to it would find old (findUpdatedPodsOnNode: not being deleted, IsPodUpdated false); the
count follows every refresh (pods relabeled, deleted, gone, moved) and a change of revision, as
a count over the regrouped pods would; and a rolling update with none of them takes the same
(empty) plan whether the controller looks or not."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.controllers.daemonset.bynode import PodsByNode
from kubetaint.controllers.daemonset.update import find_updated_pods_on_node, rolling_update
from kubetaint.controllers.replicaset.podutil import key_of

JSON = dict[str, Any]
Key = tuple[str, str]


def pod(name: str, node: str | None, revision: str, deleting: bool) -> JSON:
    meta: JSON = {"name": name, "namespace": "d", "labels": {"controller-revision-hash": revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}}


def old_pods(result: dict[str, list[JSON]], hash_: str) -> int:
    """The old pods findUpdatedPodsOnNode sees node by node (one old pod a node at most counts
    here as every old pod: the nodes of these steps hold at most one)."""
    count = 0
    for pods in result.values():
        for one in pods:
            _, old, _ = find_updated_pods_on_node([one], hash_, None)
            count += old is not None
    return count


POD = st.builds(
    pod,
    st.sampled_from(["a", "b", "c", "d"]),
    st.sampled_from([None, "n1", "n2", "n3"]),
    st.sampled_from(["r1", "r2"]),
    st.booleans(),
)
ROUND = st.tuples(
    st.lists(st.one_of(POD, st.sampled_from(["gone-a", "gone-b"])), max_size=4), st.sampled_from(["r1", "r2"])
)


@settings(max_examples=200, deadline=None)
@given(st.lists(POD, max_size=4, unique_by=lambda p: p["metadata"]["name"]), st.lists(ROUND, max_size=6))
def test_the_old_pods_count_follows_refreshes_and_revisions(
    first: list[JSON], rounds: list[tuple[list[JSON | str], str]]
) -> None:
    owned: dict[Key, JSON] = {key_of(p): p for p in first}
    grouped = PodsByNode(0, sorted(owned.values(), key=key_of), key_of)
    for version, (changes, hash_) in enumerate(rounds, start=1):
        for change in changes:
            if isinstance(change, str):
                key = ("d", change.removeprefix("gone-"))
                owned.pop(key, None)
            else:
                key = key_of(change)
                owned[key] = change
            grouped.dirty.add(key)
        grouped.refresh(version, owned.get)
        assert grouped.outdated(hash_, None) == old_pods(grouped.result, hash_)


@pytest.mark.parametrize(
    "rolling",
    [
        pytest.param({"maxUnavailable": 1, "maxSurge": 0}, id="without surge"),
        pytest.param({"maxUnavailable": 0, "maxSurge": 1}, id="with surge"),
    ],
)
def test_a_rolling_update_without_old_pods_plans_nothing(rolling: JSON) -> None:
    ds = {
        "metadata": {"name": "ds"},
        "spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}},
    }
    by_node = {"n1": [pod("a", "n1", "r1", False)], "n2": [pod("b", "n2", "r2", True)]}
    grouped = PodsByNode(0, [p for pods in by_node.values() for p in pods], key_of)
    assert grouped.outdated("r1", None) == 0
    plan = rolling_update(ds, grouped.result, {"n1": True, "n2": True, "n3": True}, "r1", 0.0)
    assert (plan.delete, plan.create) == ([], [])
