"""Heartbeat writes (lease renewals, node status posts) through the registry's fast path
(kubetaint.registry.heartbeats) store exactly what the generic admission-and-validation path
stores: the same objects, resourceVersions and watch events, every renewal seen by watchers;
anything that is not a plain heartbeat on an object the registry validated itself still goes
through admission and validation."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.admission.attributes import UPDATE
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.api.errors import StatusError
from kubetaint.api.validation import validate
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.registry.heartbeats import HeartbeatTrust, is_heartbeat
from kubetaint.registry.registry import APIValidator, api_validator
from kubetaint.registry.trust import Configuration
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, SetField, WatchEvent
from kubetaint.store.memory import MemoryStore
from store.commits import update_many

LEASES = "leases.coordination.k8s.io"
NAMESPACE = "kube-node-lease"
RENEW = ("spec", "renewTime")
CONDITIONS = ("status", "conditions")


def with_namespaces(store: MemoryStore, *names: str) -> MemoryStore:
    """The namespaces NamespaceLifecycle must find for the objects written in them."""
    for name in names:
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return store


def counting_uids() -> Any:
    counter = itertools.count()
    return lambda: f"uid-{next(counter)}"


def make_registry(validator: Any = None) -> Registry:
    store = with_namespaces(MemoryStore(VirtualClock(), uid_factory=counting_uids()), "kube-node-lease")
    return Registry(store, admission=AdmissionChain(), validator=validator)


@pytest.fixture
def validated(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """kube-apiserver's validation run on every object the registry's APIValidator is asked about
    (whatever resource name it is given), recording the names of the objects validated."""
    calls: list[str] = []

    def check(self: APIValidator, resource: str, obj: JSON, old: JSON | None) -> None:
        calls.append(obj["metadata"]["name"])
        errs = validate(obj, old=old, feature_gates=self.feature_gates)
        if errs:
            raise StatusError(422, "Invalid", "; ".join(f"{e.field}: {e.message}" for e in errs))

    monkeypatch.setattr(APIValidator, "__call__", check)
    return calls


def lease(name: str, renew: str = "2026-01-01T00:00:00.000000Z", duration: int = 40) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": duration, "renewTime": renew},
    }


def renewed(stored: JSON, renew: str, **spec: Any) -> JSON:
    """What a kubelet writes: the stored lease (its own metadata object) with renewTime moved."""
    return {**stored, "spec": {**stored["spec"], **spec, "renewTime": renew}}


def stamp(i: int) -> str:
    return f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000000Z"


def run_renewals(registry: Registry, names: list[str], rounds: int) -> tuple[list[JSON], list[WatchEvent]]:
    """Create the leases through the registry, then renew them all `rounds` times in batches;
    returns the final stored leases and every watch event of the run."""
    events: list[WatchEvent] = []
    registry.subscribe(each_event(events.append), LEASES)
    current = [registry.create(LEASES, lease(name)) for name in names]
    for r in range(1, rounds + 1):
        stored, err = update_many(registry, LEASES, [renewed(obj, stamp(r)) for obj in current])
        assert err is None
        current = stored
    return current, events


def dump(obj: Any) -> str:
    return json.dumps(obj)  # key order included


def generic_validator() -> Any:
    """kube-apiserver's validation, but not recognisably so: the registry cannot trust renewals."""
    check = api_validator()

    def validator(resource: str, obj: JSON, old: JSON | None) -> None:
        check(resource, obj, old)

    return validator


def test_fast_and_generic_renewals_store_the_same_objects_versions_and_events() -> None:
    names = [f"node-{i}" for i in range(5)]
    fast_final, fast_events = run_renewals(make_registry(), names, rounds=4)
    slow_final, slow_events = run_renewals(make_registry(generic_validator()), names, rounds=4)
    assert dump(fast_final) == dump(slow_final)
    assert [(e.type, e.resource_version, dump(e.object), dump(e.old_object)) for e in fast_events] == [
        (e.type, e.resource_version, dump(e.object), dump(e.old_object)) for e in slow_events
    ]
    assert [e.resource_version for e in fast_events] == list(range(2, 5 * 5 + 2))  # 1: the namespace


@pytest.mark.usefixtures("default_mode")
def test_trusted_renewals_skip_validation_and_others_are_validated(validated: list[str]) -> None:
    run_renewals(make_registry(), ["a", "b"], rounds=3)
    # the creates only: the registry knows the leases it stored from their creates on
    assert validated == ["a", "b"]
    validated.clear()
    run_renewals(make_registry(generic_validator()), ["a", "b"], rounds=3)
    assert validated == ["a", "b"] * 4


def test_a_watcher_sees_every_renewal_in_order() -> None:
    registry = make_registry()
    watch = registry.watch(LEASES, namespace=NAMESPACE, resource_version="0")
    current, _ = run_renewals(registry, ["a", "b", "c"], rounds=10)
    seen = watch.drain()
    assert [e.type for e in seen] == ["ADDED"] * 3 + ["MODIFIED"] * 30
    assert [e.resource_version for e in seen] == list(range(2, 35))  # 1: the namespace
    assert [e.object["spec"]["renewTime"] for e in seen[-3:]] == [stamp(10)] * 3
    assert current == [e.object for e in seen[-3:]]


def test_a_renewal_at_the_same_instant_changes_nothing() -> None:
    registry = make_registry()
    stored = registry.create(LEASES, lease("a"))
    again, err = update_many(registry, LEASES, [renewed(stored, stored["spec"]["renewTime"])])
    assert err is None and again == [stored]
    first, _ = update_many(registry, LEASES, [renewed(stored, stamp(1))])
    second, _ = update_many(registry, LEASES, [renewed(first[0], stamp(1))])
    assert second[0] is first[0]
    assert registry.current_resource_version() == 3  # the namespace, the create, one renewal


def invalid_duration(stored: JSON) -> JSON:
    return renewed(stored, stamp(9), leaseDurationSeconds=0)


def relabelled(stored: JSON) -> JSON:
    meta = {**stored["metadata"], "labels": {"bad label!": "x"}}
    return {**renewed(stored, stamp(9)), "metadata": meta}


def with_extra_field(stored: JSON) -> JSON:
    return {**renewed(stored, stamp(9)), "status": {"x": 1}}


@pytest.mark.parametrize(
    "change, reason",
    [
        pytest.param(invalid_duration, "Invalid", id="a renewal that also sets a zero duration is refused"),
        pytest.param(relabelled, "Invalid", id="a renewal with new (invalid) labels is validated"),
    ],
)
def test_a_change_beyond_renew_time_is_validated(change: Any, reason: str, validated: list[str]) -> None:
    registry = make_registry()
    stored = registry.create(LEASES, lease("a"))
    first, _ = update_many(registry, LEASES, [renewed(stored, stamp(1))])  # now trusted
    stored_objects, err = update_many(registry, LEASES, [change(first[0])])
    assert stored_objects == [] and err is not None and err.reason == reason
    assert registry.get(LEASES, NAMESPACE, "a") is first[0]


def test_a_lease_the_registry_did_not_validate_is_validated_when_renewed(validated: list[str]) -> None:
    registry = make_registry()
    registry.create(LEASES, lease("a"))
    update_many(registry, LEASES, [renewed(registry.get(LEASES, NAMESPACE, "a"), stamp(1))])
    # someone writes an invalid lease straight to the store behind the registry's back
    bad = registry.store.update(
        LEASES, renewed(registry.get(LEASES, NAMESPACE, "a"), stamp(2), leaseDurationSeconds=0)
    )
    stored_objects, err = update_many(registry, LEASES, [renewed(bad, stamp(3))])
    assert stored_objects == [] and err is not None and err.code == 422
    assert "spec.leaseDurationSeconds" in err.message


def test_a_custom_validator_sees_every_renewal() -> None:
    seen: list[str] = []

    def refuse_late(resource: str, obj: JSON, old: JSON | None) -> None:
        seen.append(obj["spec"]["renewTime"])
        if obj["spec"]["renewTime"] == stamp(3):
            raise StatusError(422, "Invalid", "too late")

    registry = make_registry(refuse_late)
    stored = registry.create(LEASES, lease("a"))
    for r in (1, 2, 3):
        result, err = update_many(registry, LEASES, [renewed(stored, stamp(r))])
        if result:
            stored = result[0]
    assert seen == [lease("a")["spec"]["renewTime"], stamp(1), stamp(2), stamp(3)]
    assert err is not None and err.message == "too late"


def test_a_batch_stops_at_a_refused_renewal_after_storing_the_ones_before(validated: list[str]) -> None:
    registry = make_registry()
    a, b, c = (registry.create(LEASES, lease(n)) for n in "abc")
    first, _ = update_many(registry, LEASES, [renewed(x, stamp(1)) for x in (a, b, c)])
    stored, err = update_many(
        registry,
        LEASES,
        [renewed(first[0], stamp(2)), invalid_duration(first[1]), renewed(first[2], stamp(2))],
    )
    assert [s["metadata"]["name"] for s in stored] == ["a"] and err is not None and err.code == 422
    assert registry.get(LEASES, NAMESPACE, "c") is first[2]


@pytest.mark.parametrize(
    "make_new, expected",
    [
        pytest.param(lambda old: renewed(old, stamp(5)), True, id="only renewTime moved is a renewal"),
        pytest.param(
            lambda old: renewed(old, old["spec"]["renewTime"]), True, id="an unchanged copy is a renewal"
        ),
        pytest.param(
            lambda old: {**old, "spec": {k: v for k, v in old["spec"].items() if k != "renewTime"}},
            False,
            id="dropping renewTime is not (left to the generic path)",
        ),
        pytest.param(
            lambda old: {**renewed(old, stamp(5)), "metadata": dict(old["metadata"])},
            True,
            id="an equal copy of the metadata carries the same preconditions",
        ),
        pytest.param(
            lambda old: renewed(old, stamp(5), holderIdentity="other"), False, id="a new holder is not"
        ),
        pytest.param(
            lambda old: renewed(old, stamp(5), leaseTransitions=1), False, id="a new spec field is not"
        ),
        pytest.param(with_extra_field, False, id="a new top-level field is not"),
        pytest.param(
            lambda old: {k: v for k, v in renewed(old, stamp(5)).items() if k != "kind"},
            False,
            id="a dropped top-level field is not",
        ),
        pytest.param(lambda old: {**old, "spec": None}, False, id="a spec that is not an object is not"),
    ],
)
def test_is_heartbeat_for_leases(make_new: Any, expected: bool) -> None:
    registry = make_registry()
    old = registry.create(LEASES, lease("a"))
    assert is_heartbeat(LEASES, make_new(old), old) is expected
    assert is_heartbeat("configmaps", make_new(old), old) is False


def test_trust_is_by_resource_version_configuration_and_resource() -> None:
    trust = HeartbeatTrust()
    config, other = Configuration(None, None), Configuration(None, None)
    key = (NAMESPACE, "a")
    stored = {**lease("a"), "metadata": {**lease("a")["metadata"], "uid": "u", "resourceVersion": "1"}}
    trust.remember("pods", key, stored, config)
    assert not trust.beats_valid(LEASES, key, renewed(stored, stamp(1)), stored, config)
    trust.remember(LEASES, key, stored, config)
    assert trust.beats_valid(LEASES, key, renewed(stored, stamp(1)), stored, config)
    assert not trust.beats_valid("nodes", key, renewed(stored, stamp(1)), stored, config)
    twin = {**stored}  # an equal copy: at the same resourceVersion
    assert trust.beats_valid(LEASES, key, renewed(twin, stamp(1)), twin, config)
    later = {**stored, "metadata": {**stored["metadata"], "resourceVersion": "2"}}
    assert not trust.beats_valid(LEASES, key, renewed(later, stamp(1)), later, config)
    assert not trust.beats_valid(LEASES, key, renewed(stored, stamp(1)), stored, other)
    trust.remember_all(LEASES, [(NAMESPACE, "b"), (NAMESPACE, "c")], [twin], config)
    assert trust.beats_valid(LEASES, (NAMESPACE, "b"), renewed(twin, stamp(1)), twin, config)
    assert len(trust) == 2
    trust.remember(LEASES, (NAMESPACE, "d"), stored, other)  # another configuration: the rest is void
    assert len(trust) == 1


@pytest.mark.parametrize(
    "strip",
    [
        pytest.param(("apiVersion",), id="without apiVersion"),
        pytest.param(("kind",), id="without kind"),
        pytest.param(("apiVersion", "kind"), id="without either"),
    ],
)
def test_only_objects_with_their_type_meta_are_trusted(strip: tuple[str, ...]) -> None:
    """A field write trusts the objects the trust holds as they are (with_type_meta would
    copy one without type meta, so it is not the stored object any more)."""
    trust = HeartbeatTrust()
    config = Configuration(None, None)
    key = (NAMESPACE, "a")
    typed = {**lease("a"), "metadata": {**lease("a")["metadata"], "uid": "u", "resourceVersion": "1"}}
    untyped = {k: v for k, v in typed.items() if k not in strip}
    trust.remember(LEASES, key, typed, config)
    trust.remember(LEASES, key, untyped, config)  # replaces the typed one: nothing trusted under key
    assert len(trust) == 0 and trust.batch_namespaces(LEASES, [untyped], config) is None
    trust.remember_all(LEASES, [key, (NAMESPACE, "b")], [typed, untyped], config)
    assert len(trust) == 1 and trust.batch_namespaces(LEASES, [typed], config) is not None
    trust.remember_all(LEASES, [key], [untyped], config)
    assert len(trust) == 0
    assert not trust.beats_valid(LEASES, key, renewed(untyped, stamp(1)), untyped, config)


class LeaseUpdates(AdmissionPlugin):
    """A plugin that may change lease updates (none of kubetaint's does)."""

    name = "LeaseUpdates"
    operations = frozenset({UPDATE})
    mutating = True
    resources = frozenset({"leases.coordination.k8s.io"})


class NodeCreates(AdmissionPlugin):
    name = "NodeCreates"
    operations = frozenset({"CREATE"})
    mutating = True
    resources = frozenset({"nodes"})


class AnyUpdates(AdmissionPlugin):
    name = "AnyUpdates"
    operations = frozenset({UPDATE})
    validating = True


@pytest.mark.parametrize(
    "validator, plugins, trusted",
    [
        pytest.param(APIValidator(), [], True, id="kube-apiserver validation and no plugins trust"),
        pytest.param(None, [], True, id="no validation at all trusts"),
        pytest.param(generic_validator(), [], False, id="another validator does not"),
        pytest.param(APIValidator(), [LeaseUpdates()], False, id="a plugin acting on lease updates does not"),
        pytest.param(APIValidator(), [NodeCreates()], True, id="a plugin acting on node creates only trusts"),
        pytest.param(APIValidator(), [AnyUpdates()], False, id="a plugin acting on every update does not"),
    ],
)
@pytest.mark.usefixtures("default_mode")
def test_when_the_registry_trusts_lease_renewals(
    validator: Any, plugins: list[AdmissionPlugin], trusted: bool
) -> None:
    registry = make_registry()
    registry.validator = validator
    assert registry.admission is not None
    registry.admission.plugins = plugins
    assert registry._trusts_heartbeats(LEASES) is trusted
    assert registry._trusts_heartbeats("pods") is False


@pytest.mark.usefixtures("default_mode")
def test_kubetaints_own_chain_trusts_heartbeats_on_leases_and_nodes() -> None:
    registry = make_registry()
    assert registry._trusts_heartbeats(LEASES) and registry._trusts_heartbeats("nodes")


# node status posts ------------------------------------------------------------------------


def node(name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [],
        },
    }


def posted(stored: JSON, beat: int, **status: Any) -> JSON:
    """What a kubelet posts: the stored node (its own metadata) with new conditions."""
    conditions = [{"type": "Ready", "status": "True", "lastHeartbeatTime": stamp(beat)}]
    return {**stored, "status": {**stored["status"], **status, "conditions": conditions}}


def run_posts(registry: Registry, names: list[str], rounds: int) -> tuple[list[JSON], list[WatchEvent]]:
    events: list[WatchEvent] = []
    registry.subscribe(each_event(events.append), "nodes")
    current = [registry.create("nodes", node(name)) for name in names]
    for r in range(1, rounds + 1):
        current = [registry.update("nodes", posted(obj, r)) for obj in current]
    return current, events


@pytest.mark.usefixtures("default_mode")
def test_fast_and_generic_status_posts_store_the_same_objects_versions_and_events(
    validated: list[str],
) -> None:
    fast_final, fast_events = run_posts(make_registry(), ["n1", "n2"], rounds=3)
    assert validated == ["n1", "n2"], "the creates only: the first posts are heartbeats on what they stored"
    slow_final, slow_events = run_posts(make_registry(generic_validator()), ["n1", "n2"], rounds=3)
    assert dump(fast_final) == dump(slow_final)
    assert [(e.type, e.resource_version, dump(e.object)) for e in fast_events] == [
        (e.type, e.resource_version, dump(e.object)) for e in slow_events
    ]
    assert fast_final[0]["spec"]["taints"] == [
        {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
    ], "admission ran on create"


def test_a_status_post_that_changes_more_than_conditions_is_validated(validated: list[str]) -> None:
    registry = make_registry()
    stored = registry.update("nodes", posted(registry.create("nodes", node("n1")), 1))
    validated.clear()
    with pytest.raises(StatusError) as err:
        registry.update("nodes", posted(stored, 2, capacity={"cpu": "-1"}))
    assert err.value.code == 422 and validated == ["n1"]
    assert registry.get("nodes", "", "n1") is stored


def test_a_node_changed_behind_the_registrys_back_is_validated_when_posted(validated: list[str]) -> None:
    registry = make_registry()
    stored = registry.update("nodes", posted(registry.create("nodes", node("n1")), 1))
    behind = registry.store.update("nodes", {**stored, "metadata": {**stored["metadata"], "labels": {}}})
    validated.clear()
    registry.update("nodes", posted(behind, 2))
    assert validated == ["n1"]


@pytest.mark.usefixtures("default_mode")
def test_deleting_forgets_and_a_recreated_lease_is_trusted_from_its_own_create(validated: list[str]) -> None:
    registry = make_registry()
    stored = registry.create(LEASES, lease("a"))
    update_many(registry, LEASES, [renewed(stored, stamp(1))])
    assert len(registry._heartbeats) == 1
    registry.delete(LEASES, NAMESPACE, "a")
    assert len(registry._heartbeats) == 0
    validated.clear()
    again = registry.create(LEASES, lease("a"))
    update_many(registry, LEASES, [renewed(again, stamp(2))])
    assert validated == ["a"], "its create: a renewal of what the create stored needs no check"
    registry.delete(LEASES, NAMESPACE, "a")
    behind = registry.store.create(LEASES, lease("a"))  # not through the registry: not trusted
    validated.clear()
    update_many(registry, LEASES, [renewed(behind, stamp(3))])
    assert validated == ["a"]


NODE_OWNER = {"apiVersion": "v1", "kind": "Node", "name": "a", "uid": "node-uid"}


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param({"ownerReferences": [NODE_OWNER]}, id="a kubelet's lease, owned by its Node"),
        pytest.param({"finalizers": ["example.com/keep"]}, id="a lease with a finalizer"),
        pytest.param(
            {"ownerReferences": [NODE_OWNER], "labels": {"k": "v"}, "annotations": {"a": "b"}},
            id="a lease with owners, labels and annotations",
        ),
    ],
)
def test_a_heartbeat_carrying_the_stored_metadata_cannot_fail_the_metadata_update_rules(meta: JSON) -> None:
    registry = make_registry()
    stored = registry.create(LEASES, {**lease("a"), "metadata": {**lease("a")["metadata"], **meta}})
    being_deleted = {**stored, "metadata": {**stored["metadata"], "deletionTimestamp": stamp(0)}}
    for old in (stored, being_deleted):
        assert validate(renewed(old, stamp(1)), old=old) == []


def renewals_and_posts(registry: Registry, rounds: int) -> list[tuple[str, str, str]]:
    """Commits of a lease renewal, a node status post and another renewal in turn, `rounds`
    times; each result as (name, resourceVersion, what it holds)."""
    leases = [registry.create(LEASES, lease(name)) for name in ("a", "b")]
    nodes = [registry.create("nodes", node("n1"))]
    told = []
    for i in range(1, rounds + 1):
        conditions = [{"type": "Ready", "status": "True", "lastHeartbeatTime": f"2026-01-01T00:00:0{i}Z"}]
        results = registry.commit(
            [
                SetField(LEASES, leases[:1], RENEW, stamp(i)),
                SetField("nodes", nodes, CONDITIONS, conditions),
                SetField(LEASES, leases[1:], RENEW, stamp(i)),
            ],
            stop_at_failure=True,
        )
        stored = [r for r in results if not isinstance(r, StatusError)]
        assert len(stored) == 3
        leases, nodes = [stored[0], stored[2]], [stored[1]]
        told += [(o["metadata"]["name"], o["metadata"]["resourceVersion"], dump(o)) for o in stored]
    return told


@pytest.mark.usefixtures("default_mode")
def test_a_commit_of_heartbeats_on_leases_and_nodes_in_turn_stores_what_the_generic_path_stores(
    validated: list[str],
) -> None:
    fast = renewals_and_posts(make_registry(), rounds=3)
    assert validated == ["a", "b", "n1"], "the creates only: the rest are heartbeats on what they stored"
    assert fast == renewals_and_posts(make_registry(generic_validator()), rounds=3)


@pytest.mark.usefixtures("default_mode")
def test_a_commit_of_heartbeats_with_one_not_trusted_is_validated_write_by_write(
    validated: list[str],
) -> None:
    registry = make_registry()
    a, b = registry.create(LEASES, lease("a")), registry.create(LEASES, lease("b"))
    behind = registry.store.update(LEASES, {**b, "metadata": {**b["metadata"], "labels": {"x": "y"}}})
    validated.clear()
    results = registry.commit(
        [SetField(LEASES, [a], RENEW, stamp(1)), SetField(LEASES, [behind], RENEW, stamp(1))]
    )
    assert [r["spec"]["renewTime"] for r in results] == [stamp(1), stamp(1)]  # type: ignore[index]
    assert validated == ["b"], "the lease changed behind the registry's back"
