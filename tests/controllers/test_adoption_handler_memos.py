"""The identity memos of the pod handlers adoptions run through change nothing:
`OwnerSelectorIndex.matching_keys` answers what `matching` works out afresh after any history of
owner writes, however often the very same labels object is asked about; a ReplicaSet's owned-pod
view fed pods that keep their labels and status objects counts what a view built afresh counts;
and the DaemonSet controller's remembered template hash is compute_hash's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import daemonset, make_env, owner_selector_index, replicaset, write_owner
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.controllers.daemonset.controller import DaemonSetController
from kubetaint.controllers.deployment.hashing import compute_hash
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.controllers.replicaset.view import OwnedPodsView

JSON = dict[str, Any]
NAMESPACES = ["default", "team"]
#: one object per label set, asked again and again (what one template's pods share)
LABELS: list[dict[str, str]] = [{}, {"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}]
SELECTORS: list[JSON | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]},
    {},
    None,
]

steps = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["create", "update", "status", "delete"]),
            st.integers(0, 3),
            st.sampled_from(NAMESPACES),
            st.integers(0, len(SELECTORS) - 1),
        ),
        st.tuples(st.just("ask"), st.integers(0, len(LABELS) - 1), st.sampled_from(NAMESPACES), st.just(0)),
    ),
    max_size=30,
)


def _fresh_keys(owners: OwnerSelectorIndex, namespace: str, labels: dict[str, str]) -> list[tuple[str, str]]:
    return [podutil.key_of(o) for o in owners.matching_uncached(namespace, labels)]


@settings(max_examples=80, deadline=None)
@given(history=steps)
def test_matching_keys_of_the_same_labels_object_equal_a_fresh_match_after_any_owner_history(
    history: list[tuple[str, int, str, int]],
) -> None:
    store, informer, owners = owner_selector_index()
    for op, i, namespace, selector in history:
        if op == "ask":
            labels = LABELS[i]
            assert owners.matching_keys(namespace, labels) == _fresh_keys(owners, namespace, labels)
            assert owners.matching_keys(namespace, labels) == _fresh_keys(owners, namespace, labels)
        else:
            write_owner(store, informer, op, i, namespace, SELECTORS[selector])
        for ns in NAMESPACES:
            for labels in LABELS:
                assert owners.matching_keys(ns, labels) == _fresh_keys(owners, ns, labels)


def test_an_equal_labels_object_in_another_namespace_is_not_taken_for_the_last_one() -> None:
    store, _, owners = owner_selector_index()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    labels = {"app": "a"}
    assert owners.matching_keys("default", labels) == [("default", "rs")]
    assert owners.matching_keys("team", labels) == []
    assert owners.matching_keys("default", labels) == [("default", "rs")]


def test_a_deleted_owner_leaves_the_remembered_keys() -> None:
    store, _, owners = owner_selector_index()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    labels = {"app": "a"}
    assert owners.matching_keys("default", labels) == [("default", "rs")]
    store.delete("replicasets.apps", "default", "rs")
    assert owners.matching_keys("default", labels) == []


# the ReplicaSet controller's owned-pod views ------------------------------------------------------

VIEW_LABELS: list[dict[str, str]] = [{"app": "a"}, {"app": "a", "tier": "x"}, {"app": "b"}]
VIEW_STATUSES: list[JSON] = [
    {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]},
    {"phase": "Succeeded"},
    {},
]


def _view_pod(name: str, labels: int, status: int, deleting: bool, refs: int) -> JSON:
    meta: JSON = {"name": name, "namespace": "default", "labels": VIEW_LABELS[labels]}
    meta["ownerReferences"] = [{"uid": f"o{refs}"}]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta, "status": VIEW_STATUSES[status]}


def _counts(view: OwnedPodsView) -> tuple[int, int, int, int, int]:
    return (view.unmatched, view.active, view.active_matched, view.labeled, view.ready)


view_steps = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]),
        st.sampled_from(["new", "metadata only", "deletion only", "gone"]),
        st.integers(0, len(VIEW_LABELS) - 1),
        st.integers(0, len(VIEW_STATUSES) - 1),
        st.booleans(),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(steps=view_steps)
def test_a_view_fed_owner_only_changes_counts_what_a_view_built_afresh_counts(
    steps: list[tuple[str, str, int, int, bool]],
) -> None:
    selector = label_selector_from_dict({"matchLabels": {"app": "a"}})
    assert selector is not None
    template_labels = {"app": "a", "tier": "x"}
    view = OwnedPodsView(selector, dict(template_labels))
    current: dict[tuple[str, str], JSON] = {}
    for i, (name, change, labels, status, deleting) in enumerate(steps):
        key = ("default", name)
        prior = current.get(key)
        if change == "gone":
            current.pop(key, None)
        elif change == "metadata only" and prior is not None:  # the same labels and status objects
            current[key] = {**prior, "metadata": {**prior["metadata"], "ownerReferences": [{"uid": f"n{i}"}]}}
        elif change == "deletion only" and prior is not None:  # the same objects, being deleted now
            current[key] = {**prior, "metadata": {**prior["metadata"], "deletionTimestamp": f"t{i}"}}
        else:
            current[key] = _view_pod(name, labels, status, deleting, i)
        view.put(key, current.get(key))
        fresh = OwnedPodsView(selector, dict(template_labels))
        for k, pod in current.items():
            fresh.put(k, pod)
        assert _counts(view) == _counts(fresh)
        assert view.facts == fresh.facts


# the DaemonSet controller's template hash -----------------------------------------------------------


@pytest.mark.parametrize(
    "counts",
    [
        pytest.param([None, None, 0, 0, 1, None], id="changing collision counts are hashed with each count"),
        pytest.param([1, True, 1], id="a boolean count is not taken for the equal integer"),
    ],
)
def test_the_remembered_template_hash_is_compute_hash_of_the_template_and_count(counts: list[Any]) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    ds = daemonset("ds", {"app": "d"})
    template = ds["spec"]["template"]
    for count in counts:
        assert controller._template_hash(template, count) == compute_hash(template, count)
    other = {**template, "metadata": {"labels": {"app": "e"}}}
    assert controller._template_hash(other, None) == compute_hash(other, None)
    assert compute_hash(other, None) != compute_hash(template, None)
