"""Start-up shortcuts that must not change outcomes: the scenario copy, remembered quantities and
object-metadata checks, the kubelet's remembered requests and admitted-pod reads, the scheduler's
refreshed PodInfo, and the collector freeze around a simulation's loading."""

from __future__ import annotations

import copy
import gc
from collections import OrderedDict
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubelet.builders import container, make_pool, pod
from kubetaint.api.quantity import QuantityError, milli_value, parse_quantity, value
from kubetaint.api.validation.names import name_is_dns_label, name_is_dns_subdomain
from kubetaint.api.validation.objectmeta import (
    _validate_meta_content,
    _validate_names,
    validate_object_meta,
)
from kubetaint.kubelet.admission import predicate_admit
from kubetaint.kubelet.resources import StoredPodRequests, pod_requests
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info
from kubetaint.sim.scenario import copy_document
from kubetaint.sim.simulation import Simulation

JSON = dict[str, Any]

# the scenario copy ---------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=5))
def test_the_scenario_copy_equals_deepcopy_with_the_same_types(document: JSON) -> None:
    copied = copy_document(document)
    assert copied == copy.deepcopy(document)
    assert repr(copied) == repr(document)  # 1, 1.0 and True stay apart


def test_the_scenario_copy_shares_what_the_input_shares_and_nothing_with_the_input() -> None:
    containers = [{"name": "app", "resources": {"requests": {"cpu": "100m"}}}]
    document: JSON = {"objects": [{"spec": {"containers": containers}}, {"spec": {"containers": containers}}]}
    copied = copy_document(document)
    first, second = (o["spec"]["containers"] for o in copied["objects"])
    assert first is second, "a part shared in the input stays shared, as deepcopy keeps it"
    assert first is not containers
    first[0]["resources"]["requests"]["cpu"] = "2"
    assert containers[0]["resources"]["requests"]["cpu"] == "100m"


def test_the_scenario_copy_hands_other_types_to_deepcopy() -> None:
    inner = OrderedDict(a=[1, 2])
    document: JSON = {"odd": inner, "pair": (1, [2]), "again": inner}
    copied = copy_document(document)
    assert copied == copy.deepcopy(document)
    assert type(copied["odd"]) is OrderedDict and copied["odd"] is not inner
    assert copied["again"] is copied["odd"]
    assert copied["pair"][1] is not document["pair"][1]


# remembered quantities ------------------------------------------------------------------------------

QUANTITY_TEXTS = st.sampled_from(
    ["100m", "1", "0.5", "2Gi", "128974848", "129e6", "123Mi", "1.5k", "-1", "0", "1n", "12E", "x", "1.1.1"]
)


def _fresh(fn: str, raw: Any) -> int:
    amount = parse_quantity(raw) * (1000 if fn == "milli" else 1)
    return -((-amount.numerator) // amount.denominator) if isinstance(amount, Fraction) else amount


@settings(max_examples=200, deadline=None)
@given(st.lists(QUANTITY_TEXTS | st.integers(-5, 5) | st.floats(0, 10), min_size=1, max_size=6))
def test_remembered_quantities_equal_fresh_parses(raws: list[Any]) -> None:
    for raw in raws:
        for fn, call in (("milli", milli_value), ("value", value)):
            try:
                expected = _fresh(fn, raw)
            except QuantityError:
                with pytest.raises(QuantityError):
                    call(raw)
                continue
            assert call(raw) == expected
            assert call(raw) == expected, "asked again"


# object metadata ------------------------------------------------------------------------------------

NAMES = st.sampled_from(["web-0", "Web_0", "", "a" * 254, "x.y", "-bad"])
LABEL_MAPS = st.dictionaries(
    st.sampled_from(["app", "bad key!", "example.com/tier", "a/b/c"]),
    st.sampled_from(["web", "", "-bad-", "x" * 64]),
    max_size=3,
)
METAS = st.fixed_dictionaries(
    {},
    optional={
        "name": NAMES,
        "generateName": st.sampled_from(["web-", "Web-"]),
        "namespace": st.sampled_from(["default", "Bad_NS"]),
        "generation": st.integers(-2, 2),
        "labels": LABEL_MAPS,
        "annotations": st.dictionaries(st.sampled_from(["note", "Bad Key"]), st.just("v"), max_size=2),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(METAS, min_size=1, max_size=5), st.booleans(), st.booleans())
def test_remembered_metadata_checks_equal_fresh_checks(
    metas: list[JSON], namespaced: bool, label: bool
) -> None:
    name_fn = name_is_dns_label if label else name_is_dns_subdomain
    for meta in metas:
        expected = [
            *_validate_names(meta, namespaced=namespaced, name_fn=name_fn, path="metadata"),
            *_validate_meta_content(meta, "metadata"),
        ]
        for _ in range(2):
            assert validate_object_meta(meta, namespaced=namespaced, name_fn=name_fn) == expected


def test_metadata_with_labels_that_are_not_strings_is_checked_afresh() -> None:
    meta: JSON = {"name": "a", "labels": {"app": 1}}
    first = validate_object_meta(meta, namespaced=True, name_fn=name_is_dns_subdomain)
    meta2: JSON = {"name": "a", "labels": {"app": "1"}}
    assert validate_object_meta(meta2, namespaced=True, name_fn=name_is_dns_subdomain) == first == []


def test_objects_sharing_labels_keep_their_own_name_errors() -> None:
    labels = {"app": "web"}
    good = validate_object_meta(
        {"name": "web-0", "labels": labels}, namespaced=True, name_fn=name_is_dns_subdomain
    )
    bad = validate_object_meta(
        {"name": "Web_0", "labels": labels}, namespaced=True, name_fn=name_is_dns_subdomain
    )
    assert good == []
    assert [e.field for e in bad] == ["metadata.name"]


# kubelet admission -------------------------------------------------------------------------------------


@pytest.mark.usefixtures("default_mode")
def test_stored_requests_are_computed_once_per_spec_object() -> None:
    memo = StoredPodRequests(limit=2)
    first = pod("a", "n1", containers=[container(cpu="100m", memory="1Gi")])
    second = pod("b", "n1", containers=[container(cpu="2")])
    assert memo(first) == pod_requests(first)
    assert memo(first) is memo(first)
    assert memo(second) == pod_requests(second)
    third = pod("c", "n1", containers=[container(cpu="3")])
    assert memo(third) == {"cpu": 3000}, "past the limit the memo starts afresh"
    assert memo({**first, "spec": copy.deepcopy(first["spec"])}) == pod_requests(first)


@pytest.mark.parametrize(
    ("others", "asked", "reason"),
    [
        pytest.param(["1", "2"], "1", "", id="room left on the node admits"),
        pytest.param(["2", "1500m"], "1", "OutOfcpu", id="the sum of the others leaves too little cpu"),
        pytest.param([], "5", "OutOfcpu", id="a pod larger than the node is refused alone"),
    ],
)
def test_remembered_requests_admit_as_the_plain_sums_do(others: list[str], asked: str, reason: str) -> None:
    node: JSON = {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    running = [pod(f"o{i}", "n1", containers=[container(cpu=cpu)]) for i, cpu in enumerate(others)]
    new = pod("new", "n1", containers=[container(cpu=asked)])
    memo = StoredPodRequests()
    plain = predicate_admit(new, node, running)
    for _ in range(2):
        assert predicate_admit(new, node, running, requests_of=memo) == plain
    assert plain.reason == reason


@pytest.mark.usefixtures("default_mode")
def test_admission_reads_back_the_pods_running_pods_lists() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    for name in ("a", "b", "c", "d"):
        store.create("pods", pod(name, "n1", containers=[container(cpu="100m")]))
    clock.run_pending()
    kubelet = pool["n1"]
    b = store.get("pods", "default", "b")
    store.update("pods", {**b, "status": {**b["status"], "phase": "Failed"}})  # not yet seen
    store.delete("pods", "default", "c")
    store.create("pods", pod("c", "n1", containers=[container(cpu="100m")]))  # a new uid
    expected = sorted(p["metadata"]["uid"] for p in kubelet.running_pods())
    assert sorted(p["metadata"]["uid"] for p in kubelet._admitted.pods(store)) == expected
    assert len(expected) == 2
    view = kubelet._admitted.view
    assert view is not None, "a pool over the memory store keeps the pods routed to its kubelets"
    assert sorted(view.objects[key]["metadata"]["uid"] for key in view.member_keys()) == expected
    assert view.used() == {"cpu": 200}


def test_a_kubelet_refuses_the_pod_that_does_not_fit_beside_its_admitted_pods() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    store.create("pods", pod("a", "n1", containers=[container(cpu="7")]))
    clock.run_pending()
    store.create("pods", pod("b", "n1", containers=[container(cpu="2")]))
    clock.run_pending()
    status = store.get("pods", "default", "b")["status"]
    assert status["phase"] == "Failed"
    assert status["reason"] == "OutOfcpu"


# scheduler ------------------------------------------------------------------------------------------------


def test_a_refreshed_pod_info_has_every_slot_of_a_fresh_one() -> None:
    spec: JSON = {
        "containers": [
            {"name": "c", "resources": {"requests": {"cpu": "100m"}}, "ports": [{"hostPort": 80}]}
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "nodeName": "n1",
        "priority": 7,
    }
    old: JSON = {"metadata": {"name": "a", "namespace": "ns", "uid": "u1"}, "spec": spec}
    new: JSON = {
        "metadata": {"name": "a", "namespace": "ns", "uid": "u1", "ownerReferences": []},
        "spec": spec,
        "status": {"startTime": "2026-01-01T00:00:07Z", "nominatedNodeName": "n2"},
    }
    refreshed = PodInfo.refreshed(make_pod_info(old), new)
    fresh = make_pod_info(new)
    for slot in PodInfo.__slots__:
        assert getattr(refreshed, slot) == getattr(fresh, slot), slot


# the collector --------------------------------------------------------------------------------------------

SCENARIO: JSON = {
    "apiVersion": "kubetaint.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "freeze"},
    "spec": {"until": "30s", "nodeGroups": [{"name": "n", "count": 2}]},
}


def test_the_loaded_cluster_is_promoted_not_frozen() -> None:
    """Loading hands the cluster to the oldest generation at once; nothing stays frozen between
    construction and the first run (a process-wide freeze would outlive an unrun Simulation)."""
    assert gc.get_freeze_count() == 0
    sim = Simulation(SCENARIO)
    try:
        assert gc.get_freeze_count() == 0
        node = sim.objects("Node")[0]
        assert any(candidate is node for candidate in gc.get_objects(2))
        sim.advance(5)
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
