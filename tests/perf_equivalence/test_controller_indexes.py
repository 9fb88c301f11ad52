"""The ReplicaSet controller's indexes and incremental views give exactly what a full scan or a
full recount gives (laws over random histories of pod and ReplicaSet writes)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import make_env, pod, replicaset
from kubetaint.api.selectors import LabelSelector, label_selector_from_dict
from kubetaint.controllers.replicaset import ReplicaSetController, podutil
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import NOTHING, OwnerSelectorIndex
from kubetaint.controllers.replicaset.view import OwnedPodViews
from kubetaint.store.informer import Informer
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
APPS = ["a", "b", "c"]
TIERS = ["x", "y"]
NAMESPACES = ["default", "team"]

label_sets = st.fixed_dictionaries(
    {}, optional={"app": st.sampled_from(APPS), "tier": st.sampled_from(TIERS)}
)
selectors = st.one_of(
    st.builds(lambda labels: {"matchLabels": labels}, label_sets),
    st.builds(
        lambda values: {"matchExpressions": [{"key": "app", "operator": "In", "values": values}]},
        st.lists(st.sampled_from(APPS), min_size=1, max_size=2, unique=True),
    ),
    st.just({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}),
    st.just({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["a"]}]}),
)


def _labeled_pod(name: str, namespace: str, labels: dict[str, str]) -> JSON:
    return pod(name, namespace=namespace, labels=labels)


def _full_scan_orphans(store: MemoryStore, namespace: str, selector: LabelSelector) -> list[str]:
    return [
        p["metadata"]["name"]
        for p in store.list("pods", namespace=namespace).items
        if podutil.controller_of(p) is None and selector.matches(p["metadata"].get("labels"))
    ]


@settings(max_examples=60, deadline=None)
@given(
    pods=st.lists(st.tuples(st.sampled_from(NAMESPACES), label_sets, st.booleans()), max_size=25),
    selector=selectors,
)
def test_orphan_candidates_hold_every_matching_orphan_in_key_order(
    pods: list[tuple[str, dict[str, str], bool]], selector: JSON
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    index = PodOwnerIndex(informer, lambda _old, _new: None)
    informer.start()
    for i, (namespace, labels, owned) in enumerate(pods):
        body = _labeled_pod(f"p{i:02d}", namespace, labels)
        if owned:
            body["metadata"]["ownerReferences"] = [
                {"kind": "ReplicaSet", "name": "o", "uid": "u", "controller": True}
            ]
        store.create("pods", body)
    parsed = label_selector_from_dict(selector)
    assert parsed is not None
    for namespace in NAMESPACES:
        candidates = index.orphan_candidates(namespace, parsed)
        keys = [podutil.key_of(p) for p in candidates]
        assert keys == sorted(keys)
        matching = [p["metadata"]["name"] for p in candidates if parsed.matches(p["metadata"]["labels"])]
        assert matching == _full_scan_orphans(store, namespace, parsed)


def test_an_adopted_pod_leaves_the_orphan_label_index() -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    index = PodOwnerIndex(informer, lambda _old, _new: None)
    informer.start()
    created = store.create("pods", _labeled_pod("p", "default", {"app": "a"}))
    selector = LabelSelector((("app", "=", ("a",)),))
    assert [p["metadata"]["name"] for p in index.orphan_candidates("default", selector)] == ["p"]
    ref = {"kind": "ReplicaSet", "name": "o", "uid": "u1", "controller": True}
    store.update("pods", {**created, "metadata": {**created["metadata"], "ownerReferences": [ref]}})
    assert index.orphan_candidates("default", selector) == []
    assert [p["metadata"]["name"] for p in index.pods_owned_by("u1")] == ["p"]
    assert index.owned_pod("u1", ("default", "p")) is not None
    assert index.owned_pod("u2", ("default", "p")) is None


rs_ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete"]),
        st.integers(0, 4),
        st.sampled_from(NAMESPACES),
        selectors,
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(ops=rs_ops, labels=label_sets, namespace=st.sampled_from(NAMESPACES))
def test_owners_matching_a_pod_are_those_a_scan_of_the_informer_finds_in_its_order(
    ops: list[tuple[str, int, str, JSON]], labels: dict[str, str], namespace: str
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    informer.start()
    for op, i, ns, selector in ops:
        name = f"rs{i}"
        body = replicaset(name, 1)
        body["metadata"]["namespace"] = ns
        body["spec"]["selector"] = selector
        existing = informer.get(ns, name)
        if op == "delete" or (op == "update" and existing is not None):
            if existing is not None:
                store.delete("replicasets.apps", ns, name)
            if op == "update":
                store.create("replicasets.apps", body)
        elif existing is None:
            store.create("replicasets.apps", body)
    expected = [
        podutil.key_of(rs)
        for rs in informer.items()
        if podutil.key_of(rs)[0] == namespace and owners.selectors.matching(rs).matches(labels)
    ]
    assert [podutil.key_of(rs) for rs in owners.matching(namespace, labels)] == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(None, None, id="a nil selector parses to None and matches no pod"),
        pytest.param({}, LabelSelector(), id="an empty selector selects everything"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Bogus"}]},
            NOTHING,
            id="an invalid operator matches nothing",
        ),
    ],
)
def test_selector_cache_edge_cases(selector: JSON | None, expected: LabelSelector | None) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "replicasets.apps")
    owners = OwnerSelectorIndex(informer)
    rs = {"metadata": {"name": "r", "namespace": "default"}, "spec": {"selector": selector}}
    matching = owners.selectors.matching(rs)
    assert matching == (NOTHING if expected is None else expected)
    assert owners.selectors.matching(rs) is matching


pod_ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "relabel", "ready", "terminate", "delete", "disown"]),
        st.integers(0, 5),
        label_sets,
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops=pod_ops, template_labels=label_sets, selector=selectors)
def test_view_counts_equal_a_recount_after_any_history(
    ops: list[tuple[str, int, dict[str, str]]], template_labels: dict[str, str], selector: JSON
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    views: OwnedPodViews
    index = PodOwnerIndex(informer, lambda old, new: [_mark(views, p) for p in (old, new) if p is not None])
    views = OwnedPodViews(index.pods_owned_by, index.owned_pod)
    informer.start()
    parsed = label_selector_from_dict(selector)
    assert parsed is not None
    ref = {"kind": "ReplicaSet", "name": "o", "uid": "u", "controller": True}
    views.view("u", parsed, template_labels)
    for op, i, labels in ops:
        name = f"p{i}"
        current = informer.get("default", name)
        if op == "create" and current is None:
            body = _labeled_pod(name, "default", labels)
            body["metadata"]["ownerReferences"] = [ref]
            store.create("pods", body)
        elif current is not None and op == "delete":
            store.delete("pods", "default", name)
        elif current is not None:
            store.update("pods", _changed(current, op, labels))
        if i % 2:  # refresh at random points, as syncs do
            views.view("u", parsed, template_labels)
    view = views.view("u", parsed, template_labels)
    owned = index.pods_owned_by("u")
    active = [p for p in owned if podutil.is_active(p)]
    assert view.active == len(active)
    assert view.ready == sum(podutil.is_ready(p) for p in active)
    assert view.labeled == sum(
        all(p["metadata"].get("labels", {}).get(k) == v for k, v in template_labels.items()) for p in active
    )
    assert view.unmatched == sum(not parsed.matches(p["metadata"].get("labels")) for p in owned)
    assert view.active_matched == sum(parsed.matches(p["metadata"].get("labels")) for p in active)
    assert [f.pod for f in view.sorted_facts()] == owned


def _mark(views: OwnedPodViews, pod_obj: JSON) -> None:
    ref = podutil.controller_of(pod_obj)
    if ref is not None:
        views.mark(str(ref.get("uid") or ""), podutil.key_of(pod_obj))


def _changed(current: JSON, op: str, labels: dict[str, str]) -> JSON:
    meta, status = dict(current["metadata"]), dict(current.get("status") or {})
    if op == "relabel":
        meta["labels"] = labels
    elif op == "ready":
        ready = podutil.is_ready(current)
        status["conditions"] = [{"type": "Ready", "status": "False" if ready else "True"}]
    elif op == "terminate":
        status["phase"] = "Succeeded"
    elif op == "disown":
        meta.pop("ownerReferences", None)
    return {**current, "metadata": meta, "status": status}


def test_status_counts_come_from_the_view_and_match_a_recount() -> None:
    clock, store, rng = make_env()
    controller = ReplicaSetController(store, clock, rng)
    controller.start()
    rs = store.create("replicasets.apps", replicaset("web", 4))
    clock.run_pending()
    pods = store.list("pods").items
    # one pod turns unready, one fails: the controller replaces the failed one
    store.update(
        "pods",
        {**pods[0], "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}},
    )
    store.update("pods", {**pods[1], "status": {"phase": "Failed"}})
    clock.run_pending()
    status = store.get("replicasets.apps", "default", "web")["status"]
    active = [p for p in store.list("pods").items if podutil.is_active(p)]
    assert status["replicas"] == len(active) == 4
    assert status["readyReplicas"] == sum(podutil.is_ready(p) for p in active)
    assert rs["metadata"]["uid"] in controller.views._views
    store.delete("replicasets.apps", "default", "web")
    assert rs["metadata"]["uid"] not in controller.views._views
