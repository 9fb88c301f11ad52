"""Registry.create_pods (registry.podbatch) and MemoryStore.create_many: a run of pod creates
stored at once must leave exactly what one create after another leaves (objects, key order,
uids, resourceVersions, history and events, the memo's and the pod trust's later answers) and
report the failure one create after another meets first."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.admission import CREATE, AdmissionChain, AdmissionSettings, Attributes, ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry, StoreLookup, api_validator
from kubetaint.sim.cluster import seeded_uids
from kubetaint.store.changes import each_event
from kubetaint.store.interface import Create, ListResult, WatchEvent, until_failure
from kubetaint.store.memory import MemoryStore
from store.commits import create_many

JSON = dict[str, Any]
PLUGINS = ["Priority", "DefaultTolerationSeconds", "PodTolerationRestriction", "RuntimeClass"]
TEMPLATE: JSON = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}


class CreateOnlyStore:
    """A MemoryStore without create_many (the generic path of every other store)."""

    def __init__(self, inner: MemoryStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "create_many":
            raise AttributeError(name)
        return getattr(self._inner, name)


def make_store() -> MemoryStore:
    return MemoryStore(VirtualClock(), uid_factory=seeded_uids(random.Random(5)))


def make_registry(store: Any, *, admission: bool = True) -> Registry:
    inner = store if isinstance(store, MemoryStore) else store._inner
    chain = None
    if admission:
        chain = AdmissionChain(
            AdmissionSettings.from_dict({"enableAdmissionPlugins": PLUGINS}), StoreLookup(inner)
        )
    registry = Registry(store, admission=chain, validator=api_validator(), rng=random.Random(7))
    for name in ("default", "team"):
        registry.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return registry


def pod(name: str, node: str = "node-1", namespace: str = "default", **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "a"}},
        "spec": {**TEMPLATE, "nodeName": node, **spec},
        "status": {"phase": "Running"},
    }


#: Containers with limits only (SetDefaults_Pod gives them requests), one list shared by the pods.
LIMITS_ONLY: JSON = {
    "containers": [{"name": "app", "image": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]
}
LIMITS_INIT: JSON = {
    **LIMITS_ONLY,
    "initContainers": [{"name": "init", "image": "init", "resources": {"limits": {"cpu": "2"}}}],
}


def outcome(err: StatusError | None) -> str | None:
    return None if err is None else f"{err.code} {err.message} {err.causes}"


def one_by_one(registry: Registry, pods: list[JSON], restore: bool = False) -> tuple[list[JSON], str | None]:
    created: list[JSON] = []
    for obj in pods:
        try:
            created.append(registry.create("pods", obj, restore=restore))
        except StatusError as err:
            return created, outcome(err)
    return created, None


def state(registry: Registry) -> str:
    """Everything stored, in key order, with the store's resourceVersion."""
    store = registry.store
    listed: dict[str, list[JSON]] = {
        r: store.list(r).items for r in ("pods", "namespaces", "priorityclasses.scheduling.k8s.io")
    }
    return json.dumps([listed, store.current_resource_version()])


def after(registry: Registry) -> list[str]:
    """What later writes give (the memo and the pod trust as the run left them)."""
    results: list[str] = []
    for write in (
        lambda: registry.create("pods", pod("later-1", node="node-9")),
        lambda: registry.update("pods", {**registry.get("pods", "default", "later-1"), "status": {}}),
        lambda: registry.update(
            "pods",
            {
                **registry.get("pods", "default", "p0"),
                "metadata": {**registry.get("pods", "default", "p0")["metadata"], "labels": {"b": "c"}},
            },
        ),
    ):
        try:
            results.append(json.dumps(write()))
        except StatusError as err:
            results.append(str(outcome(err)))
    return results


RUNS = [
    pytest.param([pod(f"p{i}", node=f"node-{i}") for i in range(6)], id="pods of one template"),
    pytest.param([pod(f"p{i}", namespace=("team", "default")[i % 2]) for i in range(6)], id="two namespaces"),
    pytest.param(
        [pod("p0"), pod("p1", priorityClassName="nope"), pod("p2")], id="admission refuses the second pod"
    ),
    pytest.param([pod("p0"), pod("p1", node="Node_1"), pod("p2")], id="validation refuses the second pod"),
    pytest.param([pod("p0"), pod("p1"), pod("p0"), pod("p3")], id="the store refuses a name taken"),
    pytest.param(
        [pod("p0"), pod("p0"), pod("p2", priorityClassName="nope")],
        id="a name taken is reported before a later admission refusal",
    ),
    pytest.param(
        [pod("p0"), {**pod("x"), "metadata": {"namespace": "default"}}, pod("p2")],
        id="a pod without a name",
    ),
    pytest.param(
        [pod("p0"), {**pod("x"), "metadata": {"generateName": "gen-", "namespace": "default"}}, pod("p2")],
        id="a generated name",
    ),
    pytest.param([pod("p0", activeDeadlineSeconds=0), pod("p1")], id="the first pod refused"),
    pytest.param([], id="no pod at all"),
    pytest.param(
        [pod(f"p{i}", node=f"node-{i}", **LIMITS_ONLY) for i in range(4)],
        id="pods of one template whose requests default to their limits",
    ),
    pytest.param(
        [pod(f"p{i}", **(LIMITS_ONLY if i % 2 else {})) for i in range(5)],
        id="two templates in turn, one defaulted",
    ),
    pytest.param(
        [pod("p0", **LIMITS_ONLY), pod("p1", **LIMITS_ONLY), pod("p2", **LIMITS_INIT)],
        id="the same containers, then other init containers",
    ),
]


@pytest.mark.parametrize("bulk", [pytest.param(True, id="in bulk"), pytest.param(False, id="outside bulk")])
@pytest.mark.parametrize(
    "store_kind", [pytest.param("memory", id="memory"), pytest.param("generic", id="generic")]
)
@pytest.mark.parametrize(
    "restore", [pytest.param(False, id="created"), pytest.param(True, id="restored (a scenario loaded)")]
)
@pytest.mark.parametrize("pods", RUNS)
def test_create_pods_is_one_create_after_another(
    pods: list[JSON], bulk: bool, store_kind: str, restore: bool
) -> None:
    reference = make_registry(make_store())
    store: Any = make_store() if store_kind == "memory" else CreateOnlyStore(make_store())
    batched = make_registry(store)

    def at_once(pods: list[JSON]) -> tuple[list[JSON], StatusError | None]:
        creates = [Create("pods", obj) for obj in pods]
        return until_failure(batched.commit(creates, stop_at_failure=True, restore=restore))

    if bulk:
        with reference.bulk_creates():
            expected, expected_err = one_by_one(reference, copy.deepcopy(pods), restore)
        with batched.bulk_creates():
            got, got_err = at_once(copy.deepcopy(pods))
    else:
        expected, expected_err = one_by_one(reference, copy.deepcopy(pods), restore)
        got, got_err = at_once(copy.deepcopy(pods))
    assert json.dumps(got) == json.dumps(expected)
    assert outcome(got_err) == expected_err
    assert state(batched) == state(reference)
    assert after(batched) == after(reference)


def test_without_pod_admission_each_pod_takes_create() -> None:
    pods = [pod("p0"), pod("p1", node="Node_1"), pod("p2")]
    reference, batched = (
        make_registry(make_store(), admission=False),
        make_registry(make_store(), admission=False),
    )
    expected, expected_err = one_by_one(reference, copy.deepcopy(pods))
    got, got_err = create_many(batched, "pods", copy.deepcopy(pods))
    assert (json.dumps(got), outcome(got_err)) == (json.dumps(expected), expected_err)
    assert state(batched) == state(reference)


# MemoryStore.create_many --------------------------------------------------------------------

KEYS = st.lists(
    st.tuples(
        st.sampled_from(["default", "team", "a"]), st.sampled_from(["x", "y", "z", ""]), st.integers(0, 2)
    ),
    max_size=10,
)


def store_pod(namespace: str, name: str, node: int) -> JSON:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": f"n{node}"}}


def watched() -> tuple[MemoryStore, list[tuple[str, str, int, str]]]:
    store = make_store()
    seen: list[tuple[str, str, int, str]] = []

    def handler(event: WatchEvent) -> None:
        seen.append((event.type, event.resource, event.resource_version, json.dumps(event.object)))

    store.subscribe(each_event(handler))
    return store, seen


def listing(result: ListResult) -> str:
    return json.dumps([result.items, result.resource_version])


@settings(max_examples=120, deadline=None)
@given(KEYS, st.sampled_from(["pods", "configmaps"]))
def test_create_many_is_create_after_create(keys: list[tuple[str, str, int]], resource: str) -> None:
    objects = [store_pod(*key) for key in keys]
    reference, reference_seen = watched()
    expected: list[JSON] = []
    expected_err: str | None = None
    for obj in copy.deepcopy(objects):
        try:
            expected.append(reference.create(resource, obj))
        except StatusError as err:
            expected_err = outcome(err)
            break
    store, seen = watched()
    got, err = create_many(store, resource, copy.deepcopy(objects))
    assert json.dumps(got) == json.dumps(expected)
    assert outcome(err) == expected_err
    assert seen == reference_seen
    assert listing(store.list(resource)) == listing(reference.list(resource))
    for node in range(3 if resource == "pods" else 0):
        selector = f"spec.nodeName=n{node}"
        assert listing(store.list(resource, field_selector=selector)) == listing(
            reference.list(resource, field_selector=selector)
        )
    assert history(store) == history(reference)


def history(store: MemoryStore) -> list[tuple[str, str, int, str]]:
    """The store's change history (what a watch from a resourceVersion replays)."""
    return [(e.type, e.resource, e.resource_version, json.dumps(e.object)) for e in store._history]


class PodCounter(AdmissionPlugin):
    """A plugin of another kind that reads pods: it labels each pod with how many are stored."""

    name = "PodCounter"
    operations = frozenset({CREATE})
    mutating = True
    resources = frozenset({"pods"})

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> JSON:
        obj = dict(attrs.object or {})
        meta = dict(obj.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), "seen": str(len(lookup.list("pods")))}
        return {**obj, "metadata": meta}


def counting_registry(store: MemoryStore) -> Registry:
    registry = make_registry(store)
    assert registry.admission is not None
    registry.admission.plugins.append(PodCounter())
    return registry


def counting_validator(store: MemoryStore) -> Any:
    """A validator of another kind that reads pods: it refuses the fourth pod."""
    check = api_validator()

    def validator(resource: str, obj: JSON, old: JSON | None) -> None:
        if resource == "pods" and len(store.list("pods").items) >= 3:
            raise StatusError(422, "Invalid", f"too many pods for {obj['metadata']['name']}")
        check(resource, obj, old)

    return validator


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(counting_registry, id="an admission plugin that reads pods"),
        pytest.param(
            lambda store: Registry(
                store,
                admission=make_registry(store).admission,
                validator=counting_validator(store),
                rng=random.Random(7),
            ),
            id="a validator that reads pods",
        ),
    ],
)
def test_pods_are_created_one_by_one_when_a_check_may_read_pods(build: Any) -> None:
    pods = [pod(f"p{i}", node=f"node-{i}") for i in range(6)]
    reference, batched = build(make_store()), build(make_store())
    with reference.bulk_creates():
        expected, expected_err = one_by_one(reference, copy.deepcopy(pods))
    with batched.bulk_creates():
        got, got_err = create_many(batched, "pods", copy.deepcopy(pods))
    assert (json.dumps(got), outcome(got_err)) == (json.dumps(expected), expected_err)
    assert state(batched) == state(reference)
    assert len(expected) >= 3
