"""The run-time churn shortcuts of the workload controllers decide what their general paths decide:
the owner selector index skips re-filing an owner whose status alone was written and stays what a
fresh index over the same owners holds; the DaemonSet controller's one-pod shortcuts (a node whose
only pod keeps running; a node with one scheduled pod in the status counts) give what
podsShouldBeOnNode and the general counting give; an event names its first and last time alike."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.workload_builders import (
    daemonset,
    make_env,
    node,
    owner_selector_index,
    pod,
    replicaset,
    write_owner,
)
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.controllers.daemonset.controller import DaemonSetController, _keeps_running
from kubetaint.controllers.daemonset.statuscounts import scheduled_counts, scheduled_counts_generic
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.controller import ReplicaSetController, _status_holds, _with_controller
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.owners import OwnerSelectorIndex
from kubetaint.controllers.replicaset.view import OwnedPodsView, OwnedPodViews, pod_facts
from kubetaint.controllers.tainteviction.controller import TaintEvictionController
from kubetaint.core.eviction import pod_update_needs_processing
from kubetaint.store.events import EventRecorder
from kubetaint.store.informer import Informer

JSON = dict[str, Any]
NAMESPACES = ["default", "team"]
SELECTORS: list[JSON | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
    {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
    {},
    None,
]


def _index_state(owners: OwnerSelectorIndex) -> tuple[Any, ...]:
    return (
        dict(owners._anchors),
        {anchor: set(keys) for anchor, keys in owners._by_anchor.items()},
        {space: set(keys) for space, keys in owners._unanchored.items()},
    )


owner_histories = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "status", "status", "delete"]),
        st.integers(0, 3),
        st.sampled_from(NAMESPACES),
        st.integers(0, len(SELECTORS) - 1),
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(history=owner_histories)
def test_owner_index_after_status_writes_is_what_a_fresh_index_over_the_same_owners_holds(
    history: list[tuple[str, int, str, int]],
) -> None:
    store, informer, owners = owner_selector_index()
    for op, i, namespace, selector in history:
        write_owner(store, informer, op, i, namespace, SELECTORS[selector])
        fresh_informer = Informer(store, "replicasets.apps")
        fresh = OwnerSelectorIndex(fresh_informer)
        fresh_informer.start()
        assert _index_state(owners) == _index_state(fresh)
        for ns in NAMESPACES:
            for labels in ({"app": "a"}, {"app": "b", "tier": "x"}, {}):
                # (the same owners; the order is each informer's, tested elsewhere)
                assert set(owners.matching_keys(ns, labels)) == set(fresh.matching_keys(ns, labels))


def test_a_status_write_keeps_the_owner_filed_and_a_new_selector_object_refiles_it() -> None:
    store, informer, owners = owner_selector_index()
    store.create("replicasets.apps", replicaset("rs", 1, {"app": "a"}))
    assert owners.matching_keys("default", {"app": "a"}) == [("default", "rs")]
    write_owner(store, informer, "status", 0, "default", None)  # rs0 is created, not rs
    rs = informer.get("default", "rs")
    assert rs is not None
    store.update("replicasets.apps", {**rs, "status": {"replicas": 3}})
    assert owners.matching_keys("default", {"app": "a"}) == [("default", "rs")]
    rs = informer.get("default", "rs")
    assert rs is not None
    spec = {**rs["spec"], "selector": {"matchLabels": {"app": "b"}}}
    store.update("replicasets.apps", {**rs, "spec": spec})
    assert owners.matching_keys("default", {"app": "a"}) == []
    assert owners.matching_keys("default", {"app": "b"}) == [("default", "rs")]


POD_STATES = [
    pytest.param("Running", None, id="a running pod"),
    pytest.param("Pending", None, id="a pending pod"),
    pytest.param("Unknown", None, id="a pod in phase Unknown"),
    pytest.param("Failed", None, id="a failed pod"),
    pytest.param("Succeeded", None, id="a succeeded pod"),
    pytest.param("Running", "2026-01-01T00:00:00Z", id="a running pod being deleted"),
    pytest.param("Failed", "2026-01-01T00:00:00Z", id="a failed pod being deleted"),
    pytest.param("Succeeded", "2026-01-01T00:00:00Z", id="a succeeded pod being deleted"),
]


@pytest.mark.parametrize(("phase", "deleting"), POD_STATES)
@pytest.mark.parametrize("should_run", [True, False], ids=["should run", "should only continue"])
def test_a_node_whose_only_pod_keeps_running_needs_no_change(
    phase: str, deleting: str | None, should_run: bool
) -> None:
    clock, store, rng = make_env()
    controller = DaemonSetController(store, clock, rng)
    ds = store.create("daemonsets.apps", daemonset("agent"))
    extra = {"deletionTimestamp": deleting} if deleting else {}
    only = pod("p", node_name="n1", phase=phase, **extra)
    before = len(store.list("events").items)
    general = controller.pods_should_be_on_node(node("n1"), ds, [only], placement=(should_run, True))
    if _keeps_running(only):
        assert general == ([], [])
    else:  # the shortcut is not taken: the general path deletes the terminal pod
        assert general == ([], [only])
    if _keeps_running(only):
        assert len(store.list("events").items) == before


def _daemon_pod(name: str, phase: str, ready: bool, created: str, revision: str | None) -> JSON:
    labels = {"app": "agent"} if revision is None else {"app": "agent", "controller-revision-hash": revision}
    return pod(name, labels=labels, node_name="n1", phase=phase, ready=ready, created=created)


daemon_pods = st.builds(
    _daemon_pod,
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["Running", "Pending", "Failed"]),
    st.booleans(),
    st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:05Z"]),
    st.sampled_from([None, "rev1", "rev2"]),
)


@settings(max_examples=150, deadline=None)
@given(
    scheduled=st.lists(daemon_pods, min_size=1, max_size=3),
    revision=st.sampled_from(["rev1", "rev2"]),
    min_ready=st.sampled_from([0, 10, 100000000000]),
)
def test_scheduled_counts_are_the_general_counts(
    scheduled: list[JSON], revision: str, min_ready: int
) -> None:
    now = 1767225700.0
    fast = scheduled_counts(copy.deepcopy(scheduled), revision, min_ready, now)
    assert fast == scheduled_counts_generic(scheduled, revision, min_ready, now)


def test_an_event_names_one_instant_as_its_first_and_last_time() -> None:
    clock, store, _ = make_env()
    clock.advance(12.5)
    recorder = EventRecorder(store, clock, "replicaset-controller")
    rs = store.create("replicasets.apps", replicaset("rs", 1))
    event = recorder.event(rs, "Normal", "SuccessfulCreate", "Created pod: rs-x")
    assert event is not None
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:12Z"


STATUS_CASES = [
    pytest.param(None, id="no status"),
    pytest.param({}, id="an empty status"),
    pytest.param(
        {
            "replicas": 3,
            "fullyLabeledReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "observedGeneration": 1,
        },
        id="the very counts",
    ),
    pytest.param(
        {
            "replicas": 3,
            "fullyLabeledReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "observedGeneration": 1,
            "conditions": [],
        },
        id="the very counts and a condition",
    ),
    pytest.param(
        {
            "replicas": 3,
            "fullyLabeledReplicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 2,
            "observedGeneration": 1,
        },
        id="another ready count",
    ),
    pytest.param(
        {
            "replicas": 3,
            "fullyLabeledReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "observedGeneration": 2,
        },
        id="another observed generation",
    ),
    pytest.param(
        {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2, "availableReplicas": 2},
        id="no observed generation",
    ),
    pytest.param(
        {
            "replicas": 3.0,
            "fullyLabeledReplicas": 3,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "observedGeneration": 1,
        },
        id="an equal float count",
    ),
]


@pytest.mark.parametrize("status", STATUS_CASES)
def test_status_holds_exactly_when_the_written_status_would_equal_the_stored_one(status: Any) -> None:
    written = {
        **(status or {}),
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "observedGeneration": 1,
    }
    assert _status_holds(status, (3, 3, 2, 2), 1) == (written == status)


view_ops = st.lists(
    st.tuples(
        st.sampled_from(["create", "relabel", "ready", "terminate", "delete", "disown", "sync"]),
        st.integers(0, 4),
        st.sampled_from([{"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}]),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops=view_ops)
def test_views_refreshed_through_the_owned_pod_lookup_equal_views_refreshed_key_by_key(
    ops: list[tuple[str, int, dict[str, str]]],
) -> None:
    _, store, _ = make_env()
    informer = Informer(store, "pods")
    both: list[OwnedPodViews] = []

    def mark(old: JSON | None, new: JSON | None) -> None:
        for p in (old, new):
            ref = None if p is None else podutil.controller_ref_of(p)
            if p is not None and ref is not None:
                for views in both:
                    views.mark(str(ref.get("uid") or ""), podutil.key_of(p))

    index = PodOwnerIndex(informer, mark)
    both.append(OwnedPodViews(index.pods_owned_by, index.owned_pod, index.owned_pod_lookup))
    both.append(OwnedPodViews(index.pods_owned_by, index.owned_pod))
    informer.start()
    selector = label_selector_from_dict({"matchLabels": {"app": "a"}})
    assert selector is not None
    ref = {"kind": "ReplicaSet", "name": "o", "uid": "u", "controller": True}
    for views in both:
        views.view("u", selector, {"app": "a"})
    for op, i, labels in ops:
        name = f"p{i}"
        current = informer.get("default", name)
        if op == "sync":
            fast, slow = (views.view("u", selector, {"app": "a"}) for views in both)
            assert fast.facts == slow.facts
            assert (fast.unmatched, fast.active, fast.active_matched, fast.labeled, fast.ready) == (
                slow.unmatched,
                slow.active,
                slow.active_matched,
                slow.labeled,
                slow.ready,
            )
            for key in [("default", f"p{j}") for j in range(5)]:
                assert index.owned_pod_lookup("u")(key) is index.owned_pod("u", key)
        elif op == "create" and current is None:
            body = pod(name, labels=labels, owner=ref)
            store.create("pods", body)
        elif current is not None and op == "delete":
            store.delete("pods", "default", name)
        elif current is not None and op != "create":
            meta, status = dict(current["metadata"]), dict(current["status"])
            if op == "relabel":
                meta["labels"] = labels
            elif op == "ready":
                status["conditions"] = [{"type": "Ready", "status": "False"}]
            elif op == "terminate":
                status["phase"] = "Succeeded"
            else:
                meta.pop("ownerReferences", None)
            store.update("pods", {**current, "metadata": meta, "status": status})


SPECS = [
    pytest.param(None, id="no spec"),
    pytest.param({}, id="an empty spec"),
    pytest.param({"nodeName": "n1"}, id="a bound spec"),
    pytest.param(
        {"nodeName": "n1", "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]},
        id="a bound spec with a NoExecute toleration",
    ),
]


@pytest.mark.parametrize("spec", SPECS)
def test_an_update_keeping_the_spec_object_queues_nothing_for_taint_eviction(spec: JSON | None) -> None:
    clock, store, _ = make_env()
    controller = TaintEvictionController(store, clock)
    controller._running = True
    old: JSON = {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}
    new: JSON = {"metadata": {"name": "p", "namespace": "default", "labels": {"a": "b"}}, "spec": spec}
    assert not pod_update_needs_processing(old, new)  # the general filter agrees
    controller.pod_updated(old, new)
    assert not controller._pod_updates
    moved = {**new, "spec": {**(spec or {}), "nodeName": "n2"}}
    controller.pod_updated(old, moved)
    assert list(controller._pod_updates) == [("default", "p", "n2")]


def _with_controller_generic(pod_obj: JSON, ref: JSON | None, only_ref: list[JSON] | None) -> JSON:
    """The general rule: other references kept, the controller reference replaced (or removed)."""
    meta = pod_obj["metadata"]
    kept = [r for r in meta.get("ownerReferences") or [] if not r.get("controller")]
    refs = [*kept, ref] if kept and ref is not None else kept or only_ref or []
    new_meta = {**meta, "ownerReferences": refs}
    if not refs:
        del new_meta["ownerReferences"]
    return {**pod_obj, "metadata": new_meta}


CONTROLLER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": True}
OTHER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "u2"}
OLD_CONTROLLER = {**CONTROLLER, "uid": "u0"}


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param(None, id="no references"),
        pytest.param([], id="an empty reference list"),
        pytest.param([OTHER], id="another owner"),
        pytest.param([OLD_CONTROLLER], id="another controller"),
        pytest.param([OTHER, OLD_CONTROLLER], id="another owner and another controller"),
    ],
)
@pytest.mark.parametrize(
    ("ref", "only_ref"),
    [
        pytest.param(CONTROLLER, [CONTROLLER], id="adopting"),
        pytest.param(None, None, id="releasing"),
        pytest.param(CONTROLLER, [], id="adopting with an empty list to share"),
    ],
)
def test_with_controller_is_the_general_rule(
    refs: list[JSON] | None, ref: JSON | None, only_ref: Any
) -> None:
    extra = {} if refs is None else {"ownerReferences": refs}
    given_pod = pod("p", **extra)
    assert _with_controller(given_pod, ref, only_ref) == _with_controller_generic(given_pod, ref, only_ref)


label_values = st.sampled_from(["a", "b", "c"])
pod_labels = st.fixed_dictionaries({}, optional={"app": label_values, "tier": st.sampled_from(["x", "y"])})
selector_dicts = st.sampled_from(
    [
        {"matchLabels": {"app": "a"}},
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
        {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
        {},
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    labels=pod_labels,
    template_labels=pod_labels,
    selector=selector_dicts,
    phase=st.sampled_from(["Running", "Failed"]),
)
def test_a_views_pod_facts_are_pod_facts(
    labels: dict[str, str], template_labels: dict[str, str], selector: JSON, phase: str
) -> None:
    parsed = label_selector_from_dict(selector)
    assert parsed is not None
    view = OwnedPodsView(parsed, dict(template_labels))
    for _ in range(2):  # the second time with the template's answer remembered
        subject = pod("p", labels=dict(labels), phase=phase)
        assert view._pod_facts(subject) == pod_facts(subject, parsed, template_labels)


@settings(max_examples=60, deadline=None)
@given(
    orphans=st.lists(st.sampled_from([0, 1, 2, 3]), max_size=10),
    selector=selector_dicts,
)
def test_adoption_takes_exactly_the_matching_orphans_when_labels_objects_repeat(
    orphans: list[int], selector: JSON
) -> None:
    shared: list[dict[str, str]] = [{"app": "a"}, {"app": "b"}, {"app": "a", "tier": "x"}, {}]
    clock, store, rng = make_env()
    controller = ReplicaSetController(store, clock, rng)
    controller.start()
    body = replicaset("rs", len(orphans), {"app": "a"})
    body["spec"]["selector"] = selector
    rs = store.create("replicasets.apps", body)
    for i, which in enumerate(orphans):
        store.create("pods", pod(f"p{i:02d}", labels=shared[which]))
    parsed = label_selector_from_dict(selector)
    assert parsed is not None
    expected = [f"p{i:02d}" for i, which in enumerate(orphans) if parsed.matches(shared[which])]
    adopted = controller._adopt_orphans(rs, parsed)
    assert [p["metadata"]["name"] for p in adopted] == expected
