"""Pods share their admission result with earlier pods of the same template (registry.bulk),
looking up again what admission looked up, or in bulk (loading a scenario) checking only that
nothing else was written. Whatever the mix of pods and other writes, everything stored (objects,
key order, uids, resourceVersions) and every rejection must be what admitting each afresh gives."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.admission import CREATE, AdmissionChain, AdmissionSettings, Attributes
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry, StoreLookup, api_validator
from kubetaint.registry.bulk import PodAdmissionMemo, pod_key
from kubetaint.sim.cluster import seeded_uids
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
ALL_POD_PLUGINS = [
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "ExtendedResourceToleration",
    "RuntimeClass",
]


class NeverRemembers(PodAdmissionMemo):
    """The reference: every pod admitted afresh."""

    def admitted(self, obj: JSON, validator: object) -> JSON | None:
        return None


def make_registry(afresh: bool = False) -> Registry:
    store = MemoryStore(VirtualClock(), uid_factory=seeded_uids(random.Random(3)))
    settings = AdmissionSettings.from_dict({"enableAdmissionPlugins": ALL_POD_PLUGINS})
    registry = Registry(
        store,
        admission=AdmissionChain(settings, StoreLookup(store)),
        validator=api_validator(),
        rng=random.Random(7),
    )
    if afresh:
        registry._pod_memo = NeverRemembers(store, StoreLookup(store))
    return registry


def namespace(name: str, **annotations: str) -> JSON:
    meta: JSON = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def priority_class(name: str, value: int, *, default: bool = False) -> JSON:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


RUNTIME_CLASS: JSON = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "gvisor"},
    "handler": "runsc",
    "overhead": {"podFixed": {"cpu": "250m"}},
    "scheduling": {
        "nodeSelector": {"sandbox": "yes"},
        "tolerations": [{"key": "sandbox", "operator": "Exists"}],
    },
}
SETUP: list[tuple[str, JSON]] = [
    ("namespaces", namespace("default")),
    (
        "namespaces",
        namespace("team", **{"scheduler.alpha.kubernetes.io/defaultTolerations": '[{"key":"team"}]'}),
    ),
    ("namespaces", namespace("strict", **{"scheduler.alpha.kubernetes.io/tolerationsWhitelist": "[]"})),
    ("priorityclasses.scheduling.k8s.io", priority_class("high", 1000)),
    ("runtimeclasses.node.k8s.io", RUNTIME_CLASS),
]
TEMPLATE: JSON = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}


def pod(name: str, node: str | None = "node-1", namespace: str = "default", **spec: Any) -> JSON:
    body: JSON = {**copy.deepcopy(TEMPLATE), **spec}
    if node is not None:
        body["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "a"}},
        "spec": body,
        "status": {"phase": "Running"},
    }


def create_all(registry: Registry, steps: Sequence[tuple[str, JSON]]) -> list[str]:
    """Create each object; the outcome of each (the stored object as JSON text, key order
    included, or the rejection's status) in order."""
    outcomes: list[str] = []
    for resource, obj in steps:
        try:
            outcomes.append(json.dumps(registry.create(resource, copy.deepcopy(obj))))
        except StatusError as err:
            outcomes.append(f"{err.code} {err.message} {err.causes}")
    return outcomes


def one_by_one_and_in_bulk(steps: Sequence[tuple[str, JSON]]) -> tuple[list[str], list[str]]:
    """The outcomes admitting every pod afresh, and (checked equal to them) remembering outside
    bulk; then the outcomes in bulk."""
    afresh, remembering, bulk = make_registry(afresh=True), make_registry(), make_registry()
    expected = create_all(afresh, [*SETUP, *steps])
    assert create_all(remembering, [*SETUP, *steps]) == expected
    with bulk.bulk_creates():
        got = create_all(bulk, [*SETUP, *steps])
    return expected, got


VARIANTS = [
    pytest.param(pod("p2", node="node-2"), id="another node"),
    pytest.param(pod("p2", node=None), id="no node name at all"),
    pytest.param(pod("p2", node="Node_2"), id="an invalid node name"),
    pytest.param(pod("P2"), id="an invalid pod name"),
    pytest.param(pod("p2", namespace="team"), id="a namespace with default tolerations"),
    pytest.param(pod("p2", namespace="strict"), id="a namespace whose whitelist refuses every toleration"),
    pytest.param(pod("p2", namespace="missing"), id="a namespace that does not exist"),
    pytest.param(pod("p2", priorityClassName="high"), id="a priority class"),
    pytest.param(pod("p2", priorityClassName="nope"), id="an unknown priority class"),
    pytest.param(pod("p2", priority=5), id="a priority of its own"),
    pytest.param(pod("p2", runtimeClassName="gvisor"), id="a runtime class with overhead and scheduling"),
    pytest.param(pod("p2", overhead={"cpu": "1"}), id="an overhead without a runtime class"),
    pytest.param(
        pod(
            "p2",
            containers=[{"name": "app", "image": "app", "resources": {"requests": {"example.com/gpu": "1"}}}],
        ),
        id="an extended resource",
    ),
    pytest.param(
        pod("p2", tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]),
        id="its own not-ready toleration",
    ),
    pytest.param(pod("p2", activeDeadlineSeconds=0), id="an invalid spec field"),
    pytest.param(pod("p2", activeDeadlineSeconds=True), id="a boolean where a number goes"),
    pytest.param({**pod("p2"), "status": {"qosClass": "BestEffort"}}, id="a persisted QoS class"),
    pytest.param({"kind": "Pod", **pod("p2")}, id="another top-level key order"),
    pytest.param({**pod("p2"), "spec": {"nodeName": "node-2", **TEMPLATE}}, id="nodeName first in the spec"),
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_among_pods_of_one_template_is_admitted_as_on_its_own(variant: JSON) -> None:
    steps = [("pods", pod(f"p{i}", node=f"node-{i}")) for i in range(3, 6)]
    steps += [
        ("pods", variant),
        ("pods", copy.deepcopy({**variant, "metadata": {**variant["metadata"], "name": "v2"}})),
    ]
    steps += [("pods", pod(f"q{i}", node=f"node-{i}")) for i in range(3)]
    expected, got = one_by_one_and_in_bulk(steps)
    assert got == expected


@pytest.mark.parametrize(
    ("write", "expect_changed"),
    [
        pytest.param(
            ("priorityclasses.scheduling.k8s.io", priority_class("base", 7, default=True)),
            '"priority": 7',
            id="a new global default priority class changes the priority of later pods",
        ),
        pytest.param(
            ("runtimeclasses.node.k8s.io", {**RUNTIME_CLASS, "metadata": {"name": "kata"}}),
            None,
            id="a runtime class no pod names changes nothing",
        ),
    ],
)
def test_other_writes_between_pods_are_seen_by_later_pods(
    write: tuple[str, JSON], expect_changed: str | None
) -> None:
    before = [("pods", pod(f"a{i}")) for i in range(3)]
    after = [("pods", pod(f"b{i}")) for i in range(3)]
    expected, got = one_by_one_and_in_bulk([*before, write, *after])
    assert got == expected
    if expect_changed is not None:
        assert expect_changed in got[-1] and expect_changed not in got[len(SETUP)]


@pytest.mark.parametrize("mode", ["remembering", "bulk"])
def test_a_namespace_changed_behind_the_registry_is_seen_by_later_pods(mode: str) -> None:
    outcomes: dict[str, list[str]] = {}
    for name in ("afresh", mode):
        registry = make_registry(afresh=name == "afresh")
        create_all(registry, SETUP)

        def run(registry: Registry) -> list[str]:
            first = create_all(registry, [("pods", pod("a1", namespace="team"))])
            ns = registry.store.get("namespaces", "", "team")
            annotations = {"scheduler.alpha.kubernetes.io/defaultTolerations": '[{"key":"other"}]'}
            registry.store.update(
                "namespaces", {**ns, "metadata": {**ns["metadata"], "annotations": annotations}}
            )
            return first + create_all(registry, [("pods", pod("a2", namespace="team"))])

        if name == "bulk":
            with registry.bulk_creates():
                outcomes[name] = run(registry)
        else:
            outcomes[name] = run(registry)
    assert outcomes[mode] == outcomes["afresh"]
    assert '"key": "other"' in outcomes[mode][1] and '"key": "other"' not in outcomes[mode][0]


def test_an_invalid_pod_among_thousands_of_identical_ones_is_reported_precisely() -> None:
    steps = [("pods", pod(f"app-{i}", node=f"node-{i % 50}")) for i in range(2000)]
    steps[1234] = ("pods", pod("app-1234", node="Node_7"))
    steps[1500] = ("pods", pod("app-1500", priorityClassName="nope"))
    expected, got = one_by_one_and_in_bulk(steps)
    assert got == expected
    assert got[len(SETUP) + 1234].startswith(
        '422 Pod "app-1234" is invalid: spec.nodeName: Invalid value: "Node_7"'
    )
    assert got[len(SETUP) + 1500].startswith(
        '403 pods "app-1500" is forbidden: no PriorityClass with name nope was found'
    )


@pytest.mark.usefixtures("default_mode")
def test_pods_of_one_template_hit_one_entry_and_dry_runs_stay_out() -> None:
    registry = make_registry()
    create_all(registry, SETUP)
    with registry.bulk_creates():
        memo = registry._pod_memo
        assert memo.in_bulk
        for i in range(20):
            registry.create("pods", pod(f"p{i}", node=f"node-{i}"))
        registry.create("pods", pod("dry", node="node-1"), dry_run=True)
        assert len(memo) == 1
    assert not memo.in_bulk
    names = {p["metadata"]["name"] for p in registry.store.list("pods").items}
    assert names == {f"p{i}" for i in range(20)}


@pytest.mark.parametrize(
    ("obj", "memoisable"),
    [
        pytest.param(pod("p"), True, id="a plain pod"),
        pytest.param({**pod("p"), "spec": None}, False, id="a pod without a spec object"),
        pytest.param({**pod("p"), "status": ["x"]}, False, id="a status that is a list"),
        pytest.param({**pod("p"), "metadata": None}, False, id="a pod without metadata"),
    ],
)
def test_only_plain_json_pods_are_remembered(obj: JSON, memoisable: bool) -> None:
    assert (pod_key(obj) is not None) is memoisable


def test_keys_tell_json_types_apart_and_ignore_only_the_node_name() -> None:
    assert pod_key(pod("a", node="n1")) == pod_key(pod("b", node="n2"))
    assert pod_key(pod("a", activeDeadlineSeconds=1)) != pod_key(pod("a", activeDeadlineSeconds=True))
    assert pod_key(pod("a", activeDeadlineSeconds=1)) != pod_key(pod("a", activeDeadlineSeconds=1.0))
    assert pod_key(pod("a")) != pod_key(pod("a", namespace="team"))
    assert pod_key(pod("a", node=None)) != pod_key(pod("a"))


@pytest.mark.usefixtures("default_mode")
def test_a_gap_in_resource_versions_drops_every_entry() -> None:
    registry = make_registry()
    create_all(registry, SETUP)
    memo = PodAdmissionMemo(registry.store, StoreLookup(registry.store))
    memo.start_bulk()
    obj = pod("p")
    memo.remember(obj, {**obj, "spec": {**obj["spec"], "priority": 0}}, [], None)
    assert memo.admitted(pod("q"), None) is not None
    memo.stored({"metadata": {"resourceVersion": str(registry.store.current_resource_version() + 2)}})
    assert len(memo) == 0


def _versions(*numbers: int) -> list[JSON]:
    return [{"metadata": {"resourceVersion": str(n)}} for n in numbers]


@pytest.mark.usefixtures("default_mode")
@pytest.mark.parametrize(
    "offsets",
    [
        pytest.param([1, 2, 3], id="the next resourceVersions, one after another"),
        pytest.param([2, 3, 4], id="a write before the run"),
        pytest.param([1, 3, 4], id="a write inside the run"),
        pytest.param([1, 2, 4], id="a write before the last pod"),
        pytest.param([1], id="a run of one pod"),
        pytest.param([3], id="a run of one pod after another write"),
    ],
)
def test_a_stored_run_keeps_the_entries_exactly_when_storing_each_pod_would(offsets: list[int]) -> None:
    registry = make_registry()
    create_all(registry, SETUP)
    base = registry.store.current_resource_version()
    run = _versions(*(base + n for n in offsets))
    memos = []
    for _ in range(2):
        memo = PodAdmissionMemo(registry.store, StoreLookup(registry.store))
        memo.start_bulk()
        obj = pod("p")
        memo.remember(obj, {**obj, "spec": {**obj["spec"], "priority": 0}}, [], None)
        memos.append(memo)
    each, at_once = memos
    for created in run:
        each.stored(created)
    at_once.stored_run(run)
    assert (len(at_once), at_once._bulk_resource_version) == (len(each), each._bulk_resource_version)


class RecordingLookup:
    """A lookup that records which resources admission reads."""

    def __init__(self, inner: StoreLookup) -> None:
        self.inner = inner
        self.read: set[str] = set()

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        self.read.add(resource)
        return self.inner.get(resource, namespace, name)

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        self.read.add(resource)
        return self.inner.list(resource)


def admit(registry: Registry, obj: JSON, lookup: Any) -> Mapping[str, Any] | None:
    assert registry.admission is not None
    attrs = Attributes(CREATE, "pods", obj, None, "default", obj["metadata"]["name"])
    return registry.admission.mutate(attrs, lookup)


SPEC_FIELDS: dict[str, Callable[[], st.SearchStrategy[Any]]] = {
    "priorityClassName": lambda: st.sampled_from(["high", "system-node-critical"]),
    "runtimeClassName": lambda: st.just("gvisor"),
    "tolerations": lambda: st.lists(
        st.fixed_dictionaries({"key": st.sampled_from(["", "a", "node.kubernetes.io/unreachable"])}),
        max_size=2,
    ),
    "nodeSelector": lambda: st.dictionaries(
        st.sampled_from(["sandbox", "z"]), st.sampled_from(["yes", "no"])
    ),
}


@settings(max_examples=60, deadline=None)
@given(
    fields=st.fixed_dictionaries({}, optional={k: v() for k, v in SPEC_FIELDS.items()}),
    nodes=st.tuples(st.sampled_from(["n1", "n2", None]), st.sampled_from(["n3", "", None])),
)
def test_pod_admission_never_reads_the_node_name_nor_pods(fields: JSON, nodes: tuple[Any, Any]) -> None:
    """The premise of the memo: admitted specs differ only by nodeName, and no pod is read."""
    registry = make_registry()
    create_all(registry, SETUP)
    lookup = RecordingLookup(StoreLookup(registry.store))
    results = []
    for node in nodes:
        obj = pod("p", **fields)
        obj["spec"]["nodeName"] = node
        try:
            admitted = admit(registry, obj, lookup)
        except Exception as err:  # both must fail alike
            results.append(repr(err))
            continue
        assert admitted is not None
        spec = dict(admitted["spec"])
        assert spec["nodeName"] is node
        spec["nodeName"] = "?"
        results.append(json.dumps({**admitted, "spec": spec}))
    assert results[0] == results[1]
    assert lookup.read <= {"namespaces", "priorityclasses", "runtimeclasses"}


def test_a_validator_of_the_host_still_sees_every_pod_created_in_bulk() -> None:
    seen: list[str] = []

    def validator(resource: str, obj: JSON, old: JSON | None) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "p3":
            raise StatusError(422, "Invalid", "p3 refused")

    registry = make_registry()
    create_all(registry, SETUP)
    registry.validator = validator
    seen.clear()
    with registry.bulk_creates():
        outcomes = create_all(registry, [("pods", pod(f"p{i}", node=f"node-{i}")) for i in range(5)])
    assert seen == [f"p{i}" for i in range(5)]
    assert outcomes[3] == "422 p3 refused []"
    assert len(registry.store.list("pods").items) == 4


def shared_pod(name: str, node: str, containers: list[JSON], namespace: str = "default", **spec: Any) -> JSON:
    """A pod whose containers are the given list itself (pods stamped from one template)."""
    obj = pod(name, node=node, namespace=namespace, **spec)
    obj["spec"] = {"containers": containers, "nodeName": node, **spec}
    return obj


@pytest.mark.usefixtures("default_mode")
def test_pods_sharing_their_spec_values_are_admitted_as_pods_with_copies() -> None:
    containers = copy.deepcopy(TEMPLATE["containers"])
    steps = [
        ("pods", shared_pod("s0", "node-0", containers)),
        ("pods", shared_pod("s1", "node-1", containers)),
        ("pods", shared_pod("s2", "node-2", containers, namespace="team")),
        ("pods", shared_pod("s3", "node-3", containers, priorityClassName="high")),
        ("pods", pod("c0", node="node-4")),
        ("pods", shared_pod("s4", "Node_5", containers)),
        ("pods", shared_pod("s5", "node-6", containers)),
    ]
    registry = make_registry()
    with registry.bulk_creates():
        got = create_all(registry, [*SETUP, *steps])
        assert len(registry._pod_memo) == 3
    expected = create_all(make_registry(afresh=True), [*SETUP, *steps])
    assert got == expected
    assert '"nodeName": "node-6"' in got[-1] and '"priority": 1000' in got[-4]


class CopyingLookup(StoreLookup):
    """A lookup returning equal copies, as a store that decodes every read (SQLite, etcd) does."""

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        found = super().get(resource, namespace, name)
        return copy.deepcopy(found) if found is not None else None

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        return copy.deepcopy(list(super().list(resource)))


@pytest.mark.parametrize(
    "copying", [False, True], ids=["a store returning its objects", "a store returning copies"]
)
@pytest.mark.usefixtures("default_mode")
def test_outside_bulk_admission_runs_once_per_template_while_look_ups_agree(copying: bool) -> None:
    registry = make_registry()
    if copying:
        registry._lookup = CopyingLookup(registry.store)
        registry._pod_memo = PodAdmissionMemo(registry.store, registry._lookup)
    create_all(registry, SETUP)
    chain = registry.admission
    assert chain is not None
    calls: list[str] = []
    mutate = chain.mutate

    def counting(attrs: Attributes, lookup: Any = None) -> Mapping[str, Any] | None:
        calls.append(attrs.name)
        return mutate(attrs, lookup)

    chain.mutate = counting  # type: ignore[method-assign]
    create_all(registry, [("pods", pod(f"p{i}", node=f"node-{i}", namespace="team")) for i in range(5)])
    assert calls == ["p0"]
    registry.store.create("priorityclasses.scheduling.k8s.io", priority_class("base", 7, default=True))
    outcomes = create_all(
        registry, [("pods", pod(f"q{i}", node=f"node-{i}", namespace="team")) for i in range(3)]
    )
    assert calls == ["p0", "q0"]
    assert all('"priority": 7' in o for o in outcomes)


def test_outside_bulk_a_spec_list_changed_in_place_is_admitted_and_validated_afresh() -> None:
    """Python API callers may reuse and change their own lists between creates."""
    registry = make_registry()
    create_all(registry, SETUP)
    tolerations: list[JSON] = [{"key": "a", "operator": "Exists"}]
    first = pod("p0", tolerations=tolerations)
    registry.create("pods", first)
    tolerations.append({"key": "b", "operator": "Exists", "value": "x"})  # invalid with Exists
    with pytest.raises(StatusError) as err:
        registry.create("pods", {**first, "metadata": {**first["metadata"], "name": "p1"}})
    assert "spec.tolerations[1].operator" in str(err.value.causes)


_SHARED_CONTAINERS = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]
_SHARED_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
            ]
        }
    }
}


def _spec_variant(index: int, node: str) -> JSON:
    """Specs whose parts are shared objects or equal fresh ones, nodeName given or not, a
    node-name affinity or not, keys in either order."""
    containers = _SHARED_CONTAINERS if index % 2 == 0 else copy.deepcopy(_SHARED_CONTAINERS)
    spec: JSON = {"containers": containers}
    if index % 3:
        spec["nodeName"] = node
    if index % 5 == 0:
        spec["affinity"] = _SHARED_AFFINITY if index % 4 else copy.deepcopy(_SHARED_AFFINITY)
    if index % 7 == 0:
        spec = dict(reversed(list(spec.items())))
    if index % 11 == 0:
        spec["priority"] = 1 if index % 2 else 1.0
    return spec


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 80), st.sampled_from(["n1", "n2", 3])), max_size=12))
def test_the_memo_keys_a_pod_as_pod_key_does_whatever_the_pod_before(specs: list[tuple[int, Any]]) -> None:
    """A spec whose values are the very objects of the last spec keyed (nodeName's aside) takes
    that spec's text: the key is pod_key's all the same."""
    store = MemoryStore(VirtualClock())
    memo = PodAdmissionMemo(store, StoreLookup(store))
    memo.start_bulk()
    for index, node in specs:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": _spec_variant(index, node),
        }
        assert memo._key(pod) == pod_key(pod)
