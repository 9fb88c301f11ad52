"""The batch handlers the first second's adoptions run through do what one update at a time
does: Pod GC's `_pods_changed` of a batch of updates leaves the indexes `_reindex` of each pair
leaves (and a recount of the pods finds), whatever mix of adoptions, label, phase, node and
deletion changes a batch holds; the disruption controller queues for a batch of updates the
budgets matching its pods, none without budgets; and a ReplicaSet's owned-pod view refreshed from
the keys marked since counts what a view built afresh counts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, pod
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.controllers.disruption import DisruptionController
from kubetaint.controllers.podgc import PodGCController
from kubetaint.controllers.replicaset.view import OwnedPodsView
from kubetaint.store.informer import Changes, EventHandlers

JSON = dict[str, Any]
Key = tuple[str, str]
NAMES = ["a", "b", "c", "d"]
REFS = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": True}]


def _updates(pairs: list[tuple[JSON, JSON]]) -> Changes:
    """An informer's batch of these updates."""
    return Changes([("MODIFIED", ("default", new["metadata"]["name"]), old, new) for old, new in pairs])


def _controller() -> PodGCController:
    clock, store, _ = make_env()
    return PodGCController(store, clock)


def _indexes(controller: PodGCController) -> tuple[Any, ...]:
    return (
        set(controller._terminated),
        set(controller._terminating),
        dict(controller._node_of),
        {node: set(keys) for node, keys in controller._by_node.items()},
    )


def _recount(pods: dict[Key, JSON]) -> tuple[Any, ...]:
    terminated = {k for k, p in pods.items() if p["status"]["phase"] in ("Succeeded", "Failed")}
    terminating = {k for k, p in pods.items() if p["metadata"].get("deletionTimestamp")}
    node_of = {k: p["spec"]["nodeName"] for k, p in pods.items() if p["spec"].get("nodeName")}
    by_node: dict[str, set[Key]] = {}
    for key, node in node_of.items():
        by_node.setdefault(node, set()).add(key)
    return terminated, terminating, node_of, by_node


def _changed(old: JSON, change: str) -> JSON:
    """`old` after one kind of write; every part not written is old's very object."""
    meta = old["metadata"]
    if change == "adopt":  # an owner reference (and a new resourceVersion), all else kept
        return {**old, "metadata": {**meta, "ownerReferences": REFS, "resourceVersion": "9"}}
    if change == "relabel":
        return {**old, "metadata": {**meta, "labels": {"app": "other"}}}
    if change == "delete-mark":
        return {**old, "metadata": {**meta, "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    if change == "equal-copies":  # equal but not the same objects: the generic way
        return {**old, "spec": dict(old["spec"]), "status": dict(old["status"])}
    if change.startswith("phase-"):
        return {**old, "status": {**old["status"], "phase": change.removeprefix("phase-")}}
    if change.startswith("node-"):
        return {**old, "spec": {**old["spec"], "nodeName": change.removeprefix("node-")}}
    raise AssertionError(change)


def _variant(name: str, node: str, phase: str, deleting: bool) -> JSON:
    extra = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleting else {}
    return pod(name, node_name=node, phase=phase, **extra)


CHANGES = [
    "adopt",
    "relabel",
    "delete-mark",
    "equal-copies",
    "phase-Failed",
    "phase-Running",
    "node-n2",
    "node-",
]
_variants = st.builds(
    _variant,
    st.sampled_from(NAMES),
    st.sampled_from(["", "n1", "n2"]),
    st.sampled_from(["Running", "Pending", "Succeeded", "Failed"]),
    st.booleans(),
)
_groups = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(CHANGES)), min_size=1, max_size=8)
_steps = st.lists(st.one_of(st.tuples(st.sampled_from(["add", "delete"]), _variants), _groups), max_size=20)


@settings(max_examples=150, deadline=None)
@given(_steps)
def test_pod_gc_reindexes_a_group_as_each_update_in_turn(steps: list[Any]) -> None:
    fast, generic = _controller(), _controller()
    pods: dict[Key, JSON] = {}
    for step in steps:
        if isinstance(step, tuple):
            action, obj = step
            key = ("default", obj["metadata"]["name"])
            if action == "delete":
                fast._unindex(obj)
                generic._unindex(obj)
                pods.pop(key, None)
            else:
                fast._add(obj)
                generic._add(obj)
                pods[key] = obj
            continue
        pairs = []
        for name, change in step:
            old = pods.get(("default", name))
            if old is None:
                continue
            new = pods[("default", name)] = _changed(old, change)
            pairs.append((old, new))
        fast._pods_changed(_updates(pairs))
        for old, new in pairs:
            generic._reindex(old, new)
        assert _indexes(fast) == _indexes(generic) == _recount(pods)


def test_pod_gc_takes_a_group_of_adoptions_without_moving_anything() -> None:
    controller = _controller()
    olds = [pod(f"p{i}", node_name="n1", phase="Succeeded" if i % 2 else "Running") for i in range(4)]
    for obj in olds:
        controller._add(obj)
    before = _indexes(controller)
    controller._pods_changed(_updates([(old, _changed(old, "adopt")) for old in olds]))
    assert _indexes(controller) == before


def _disruption(with_budget: bool) -> tuple[DisruptionController, Any]:
    clock, store, _ = make_env()
    controller = DisruptionController(store, clock)
    controller.start()
    if with_budget:
        store.create(
            "poddisruptionbudgets.policy",
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "other"}}, "minAvailable": 1},
            },
        )
    return controller, store


@pytest.mark.parametrize(
    ("with_budget", "queued"),
    [
        pytest.param(False, [], id="no budget: a group queues nothing"),
        pytest.param(True, [("default", "pdb")], id="a budget matching a relabelled pod is queued"),
    ],
)
def test_disruption_queues_for_a_batch_of_updates_the_matching_budgets(
    with_budget: bool, queued: list[Key]
) -> None:
    controller, _ = _disruption(with_budget)
    controller.queue._queued.clear()  # what the budget's own creation queued
    old = pod("a", node_name="n1")
    pairs = [(old, _changed(old, "adopt")), (old, _changed(old, "relabel"))]
    handler = EventHandlers(on_update=controller._pod_updated)
    handler(_updates(pairs))
    assert list(controller.queue._queued) == queued


# a ReplicaSet's owned-pod view refreshed from marks ---------------------------------------------------

VIEW_LABELS = [{"app": "a"}, {"app": "a", "tier": "x"}, {"app": "b"}]
VIEW_STATUSES = [
    {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    {"phase": "Pending"},
    {"phase": "Failed"},
]


def _counts(view: OwnedPodsView) -> tuple[int, int, int, int, int]:
    return (view.unmatched, view.active, view.active_matched, view.labeled, view.ready)


@settings(max_examples=120, deadline=None)
@given(
    batches=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(NAMES),
                st.sampled_from(["new", "owner only", "gone"]),
                st.integers(0, len(VIEW_LABELS) - 1),
                st.integers(0, len(VIEW_STATUSES) - 1),
            ),
            max_size=6,
        ),
        max_size=6,
    )
)
def test_a_view_refreshed_from_marks_counts_what_a_view_built_afresh_counts(
    batches: list[list[tuple[str, str, int, int]]],
) -> None:
    selector = label_selector_from_dict({"matchLabels": {"app": "a"}})
    assert selector is not None
    template_labels = {"app": "a", "tier": "x"}
    view = OwnedPodsView(selector, dict(template_labels))
    current: dict[Key, JSON] = {}
    for i, batch in enumerate(batches):
        for name, change, labels, status in batch:
            key = ("default", name)
            prior = current.get(key)
            if change == "gone":
                current.pop(key, None)
            elif change == "owner only" and prior is not None:  # an adoption: labels and status kept
                current[key] = {
                    **prior,
                    "metadata": {**prior["metadata"], "ownerReferences": [{"uid": f"u{i}"}]},
                }
            else:
                current[key] = {
                    "metadata": {"name": name, "namespace": "default", "labels": dict(VIEW_LABELS[labels])},
                    "status": VIEW_STATUSES[status],
                }
            view.dirty.add(key)
        view.refresh(current.get)
        fresh = OwnedPodsView(selector, dict(template_labels))
        for key, obj in current.items():
            fresh.put(key, obj)
        assert _counts(view) == _counts(fresh)
        assert view.facts == fresh.facts
