"""Pod updates keeping the stored spec (kubetaint.registry.podtrust) store exactly what the
generic admission-and-validation path stores: the same objects, resourceVersions, watch events
and refusals with the same messages; anything else (another spec object, a pod written behind
the registry, a chain holding a plugin that may act on such an update) takes the generic path."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from kubetaint.admission import AdmissionChain, AdmissionSettings
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.registry.binding import bind
from kubetaint.registry.podtrust import PodTrust, chain_keeps_stored_specs
from kubetaint.registry.trust import Configuration
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore

Update = Callable[[JSON], JSON]


class TrustingNothing(Registry):
    """A registry that trusts nothing, as in reference mode: it always takes the generic path
    (the reference every fast result is compared with)."""

    def _pod_config(self) -> Configuration | None:
        return None

    def _trusts_heartbeats(self, resource: str) -> bool:
        return False


def counting_uids() -> Any:
    counter = itertools.count()
    return lambda: f"uid-{next(counter)}"


def make_registry(*, fast: bool, plugins: list[str] | None = None, **settings: Any) -> Registry:
    store = MemoryStore(VirtualClock(), uid_factory=counting_uids())
    registry_type = Registry if fast else TrustingNothing
    admission_settings = AdmissionSettings(**settings)
    if plugins is not None:
        admission_settings = AdmissionSettings(enable_admission_plugins=plugins, **settings)
    registry = registry_type(store, admission=AdmissionChain(admission_settings), clock=VirtualClock())
    registry.create("namespaces", {"metadata": {"name": "default"}})
    return registry


def bare_pod(name: str = "web-1", **spec: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], "nodeName": "node-1", **spec},
    }


def with_meta(pod: JSON, **fields: Any) -> JSON:
    """The stored pod with metadata fields set (None removes one), spec and status kept."""
    meta = {**pod["metadata"], **fields}
    return {**pod, "metadata": {k: v for k, v in meta.items() if v is not None}}


OWNER = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "web",
    "uid": "rs-uid",
    "controller": True,
    "blockOwnerDeletion": True,
}


def adopt(pod: JSON) -> JSON:
    return with_meta(pod, ownerReferences=[OWNER])


UPDATES: list[Any] = [
    pytest.param(adopt, id="adopting a bare pod adds a controller ownerReference"),
    pytest.param(
        lambda p: with_meta(p, ownerReferences=[{"kind": "ReplicaSet", "controller": True}]),
        id="an ownerReference without name or uid is stored as the generic path stores it",
    ),
    pytest.param(lambda p: with_meta(p, ownerReferences=None), id="releasing a pod removes its references"),
    pytest.param(
        lambda p: with_meta(p, ownerReferences=[OWNER, {**OWNER, "name": "other", "uid": "u2"}]),
        id="a second controller reference is refused",
    ),
    pytest.param(
        lambda p: with_meta(p, ownerReferences=[{**OWNER, "apiVersion": "v1", "kind": "Event"}]),
        id="an Event owner is refused",
    ),
    pytest.param(lambda p: with_meta(p, finalizers=["example.com/keep"]), id="a finalizer is added"),
    pytest.param(
        lambda p: with_meta(p, finalizers=["orphan", "foregroundDeletion"]),
        id="conflicting finalizers are refused",
    ),
    pytest.param(
        lambda p: with_meta(p, deletionTimestamp="2030-01-01T00:00:00Z"),
        id="setting a deletionTimestamp by update is refused (or kept, when being deleted)",
    ),
    pytest.param(
        lambda p: with_meta(p, deletionGracePeriodSeconds=5),
        id="changing the deletion grace period is refused",
    ),
    pytest.param(
        lambda p: with_meta(p, uid="someone-else", labels={"app": "-bad-"}),
        id="another uid is a conflict before any validation error",
    ),
    pytest.param(
        lambda p: with_meta(p, resourceVersion="1", ownerReferences=[{}]),
        id="a stale resourceVersion is a conflict before any validation error",
    ),
    pytest.param(lambda p: with_meta(p, labels={"app": "web", "tier": "front"}), id="a valid label is added"),
    pytest.param(lambda p: with_meta(p, labels={"app": "-bad-"}), id="an invalid label value is refused"),
    pytest.param(
        lambda p: with_meta(p, labels={"bad key!": "x"}),
        id="an invalid label key is refused with its message",
    ),
    pytest.param(
        lambda p: with_meta(p, annotations={"Bad/Key/Three": "x"}), id="an invalid annotation key is refused"
    ),
    pytest.param(
        lambda p: with_meta(p, annotations={"note": "x" * (300 * 1024)}),
        id="annotations over 256 KiB are refused",
    ),
    pytest.param(lambda p: with_meta(p, generation=-1), id="a negative generation is refused"),
    pytest.param(lambda p: with_meta(p, generateName="Bad_Prefix-"), id="an invalid generateName is refused"),
    pytest.param(lambda p: with_meta(p, resourceVersion="1"), id="a stale resourceVersion is a conflict"),
    pytest.param(lambda p: with_meta(p, uid="someone-else"), id="another uid is a conflict"),
    pytest.param(
        lambda p: with_meta(p, resourceVersion=None, uid=None),
        id="an update without preconditions keeps the stored uid and resourceVersion rules",
    ),
    pytest.param(
        lambda p: with_meta(p, creationTimestamp="1999-01-01T00:00:00Z"),
        id="a changed creationTimestamp is reset to the stored one",
    ),
    pytest.param(
        lambda p: {**p, "status": {"phase": "Running"}}, id="a status change keeping the spec object"
    ),
    pytest.param(dict, id="an update changing nothing keeps the resourceVersion"),
    pytest.param(
        lambda p: {**p, "spec": {**p["spec"], "nodeName": "node-2"}},
        id="a changed immutable spec field (another spec object) is refused by the generic path",
    ),
    pytest.param(
        lambda p: {**adopt(p), "spec": {**p["spec"], "activeDeadlineSeconds": 30}},
        id="a spec change allowed on update goes through admission and validation",
    ),
    pytest.param(
        lambda p: {**adopt(p), "kind": "Node"},
        id="an update claiming another kind is validated as that kind",
    ),
]


def outcome(registry: Registry, update: Update, rounds: int = 2) -> tuple[list[str], list[str]]:
    """Create a pod, apply `update` to the stored pod `rounds` times; the results (stored objects
    or error messages) and every pod watch event, as JSON text."""
    events: list[WatchEvent] = []
    registry.subscribe(each_event(events.append), "pods")
    results: list[str] = []
    current = registry.create("pods", bare_pod())
    for _ in range(rounds):
        try:
            current = registry.update("pods", update(current))
            results.append(json.dumps(current, sort_keys=True))
        except StatusError as err:
            results.append(f"{err.code} {err.reason} {err.message}")
        current = registry.get("pods", "default", "web-1")
    seen = [json.dumps([e.type, e.resource_version, e.object], sort_keys=True) for e in events]
    return results, seen


@pytest.mark.parametrize("update", UPDATES)
def test_an_update_keeping_the_spec_stores_what_the_generic_path_stores(update: Update) -> None:
    assert outcome(make_registry(fast=True), update) == outcome(make_registry(fast=False), update)


@pytest.mark.parametrize("update", UPDATES)
def test_the_same_holds_for_a_pod_being_deleted_gracefully(update: Update) -> None:
    def run(registry: Registry) -> tuple[list[str], list[str]]:
        registry.graceful_pod_deletion = True
        registry.create("pods", bare_pod("other"))
        registry.create("pods", bare_pod())
        registry.delete("pods", "default", "web-1", grace_period_seconds=30)
        current = registry.get("pods", "default", "web-1")
        try:
            stored = registry.update("pods", update(current))
            return [json.dumps(stored, sort_keys=True)], []
        except StatusError as err:
            return [f"{err.code} {err.message}"], []

    assert run(make_registry(fast=True)) == run(make_registry(fast=False))


@pytest.mark.usefixtures("default_mode")
def test_adoption_takes_the_fast_path_and_each_result_is_trusted_in_turn() -> None:
    registry = make_registry(fast=True)
    current = registry.create("pods", bare_pod())
    config = registry._pod_config()
    for update in (adopt, lambda p: {**p, "status": {"phase": "Running"}}, adopt):
        body = update(current)
        assert registry._pods.keeps_spec(("default", "web-1"), body, current, config)
        current = registry.update("pods", body)
    assert current["metadata"]["ownerReferences"] == [OWNER]
    assert current["status"] == {"phase": "Running"}


def test_a_pod_written_behind_the_registry_is_not_trusted() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    behind = registry.store.update("pods", {**created, "status": {"phase": "Pending"}})
    assert not registry._pods.keeps_spec(("default", "web-1"), adopt(behind), behind, registry._pod_config())
    assert registry.update("pods", adopt(behind))["metadata"]["ownerReferences"] == [OWNER]


@pytest.mark.usefixtures("default_mode")
def test_an_equal_copy_of_the_spec_is_trusted() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    copied = {**adopt(created), "spec": json.loads(json.dumps(created["spec"]))}
    config = registry._pod_config()
    assert config is not None and registry._pods.keeps_spec(("default", "web-1"), copied, created, config)
    changed = {**copied, "spec": {**copied["spec"], "priority": 5}}
    assert not registry._pods.keeps_spec(("default", "web-1"), changed, created, config)


@pytest.mark.usefixtures("default_mode")
def test_a_deleted_and_recreated_pod_is_trusted_only_as_recreated() -> None:
    registry = make_registry(fast=True)
    first = registry.create("pods", bare_pod())
    registry.delete("pods", "default", "web-1")
    assert len(registry._pods) == 0
    second = registry.create("pods", bare_pod())
    config = registry._pod_config()
    assert not registry._pods.keeps_spec(("default", "web-1"), adopt(first), first, config)
    assert registry._pods.keeps_spec(("default", "web-1"), adopt(second), second, config)


@pytest.mark.usefixtures("default_mode")
def test_a_registry_whose_validator_changed_forgets_what_it_trusted() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    registry.validator = type(registry.validator)()
    assert not registry._pods.keeps_spec(
        ("default", "web-1"), adopt(created), created, registry._pod_config()
    )
    registry.update("pods", adopt(created))  # validated afresh, then trusted under the new validator
    assert len(registry._pods) == 1


@pytest.mark.usefixtures("default_mode")
def test_an_update_is_trusted_under_the_validator_that_checked_it_not_one_swapped_in_meanwhile() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    checked_by = registry.validator
    swapped_in = type(registry.validator)()

    def swap_validator(event: WatchEvent) -> None:
        registry.validator = swapped_in  # e.g. reconfigured by a watcher while the write is delivered

    registry.store.subscribe(each_event(swap_validator), "pods")
    adopted = registry.update("pods", adopt(created))
    assert registry.validator is swapped_in
    assert registry._pods._config is not None and registry._pods._config.validator is checked_by
    # under the new validator the adopted pod is not trusted: its next update is validated afresh
    assert not registry._pods.keeps_spec(
        ("default", "web-1"), adopt(adopted), adopted, registry._pod_config()
    )


@pytest.mark.usefixtures("default_mode")
def test_dry_runs_are_not_remembered() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    registry.create("pods", bare_pod("dry"), dry_run=True)
    dry = registry.update("pods", adopt(created), dry_run=True)
    assert dry["metadata"]["ownerReferences"] == [OWNER]
    assert registry.get("pods", "default", "web-1") is created
    assert registry._pods.keeps_spec(("default", "web-1"), adopt(created), created, registry._pod_config())


@pytest.mark.usefixtures("default_mode")
def test_a_copy_at_the_stored_resource_version_is_trusted() -> None:
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    adopted = registry.update("pods", adopt(created))
    assert len(registry._pods) == 1
    config = registry._pod_config()
    copy = json.loads(json.dumps(adopted))  # as a store that decodes each read returns it
    assert config is not None
    assert registry._pods.keeps_spec(("default", "web-1"), adopt(copy), copy, config)


def test_the_reference_mode_trusts_nothing(switch_reference_mode: Callable[[bool], None]) -> None:
    switch_reference_mode(True)
    registry = make_registry(fast=True)
    created = registry.create("pods", bare_pod())
    registry.update("pods", adopt(created))
    assert registry._pod_config() is None and len(registry._pods) == 0


@pytest.mark.parametrize(
    ("plugins", "trusted"),
    [
        pytest.param(None, True, id="the default chain keeps stored specs"),
        pytest.param(["PodTolerationRestriction"], False, id="PodTolerationRestriction reads the namespace"),
        pytest.param(
            ["ExtendedResourceToleration"], False, id="ExtendedResourceToleration rewrites tolerations"
        ),
    ],
)
def test_which_chains_are_trusted(plugins: list[str] | None, trusted: bool) -> None:
    settings = AdmissionSettings() if plugins is None else AdmissionSettings(enable_admission_plugins=plugins)
    assert chain_keeps_stored_specs(AdmissionChain(settings).plugins) is trusted
    assert chain_keeps_stored_specs([])


def test_a_namespace_whitelist_changed_after_create_still_refuses_a_metadata_update() -> None:
    whitelist = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"

    def run(fast: bool) -> str:
        registry = make_registry(fast=fast, plugins=["PodTolerationRestriction"])
        created = registry.create("pods", bare_pod(tolerations=[{"key": "a", "operator": "Exists"}]))
        ns = registry.get("namespaces", "", "default")
        annotated = {**ns, "metadata": {**ns["metadata"], "annotations": {whitelist: '[{"key": "b"}]'}}}
        registry.update("namespaces", annotated)
        with pytest.raises(StatusError) as caught:
            registry.update("pods", adopt(created))
        return f"{caught.value.code} {caught.value.message}"

    refused = run(fast=True)
    assert refused == run(fast=False)
    assert "conflict with its namespace whitelist" in refused


@pytest.mark.parametrize(
    "node",
    [
        pytest.param("node-2", id="a pod bound to a valid node name stays trusted"),
        pytest.param("Node_2", id="a pod bound to an invalid node name is refused on its next update"),
    ],
)
@pytest.mark.usefixtures("default_mode")
def test_binding_keeps_the_trust_only_for_a_valid_node_name(node: str) -> None:
    def run(fast: bool) -> tuple[list[str], bool]:
        registry = make_registry(fast=fast)
        registry.create("pods", {**bare_pod(), "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
        bound = bind(registry, "default", "web-1", node)
        trusted = registry._pods.keeps_spec(("default", "web-1"), adopt(bound), bound, registry._pod_config())
        results: list[str] = []
        for update in (adopt, lambda p: {**p, "status": {**p["status"], "phase": "Running"}}):
            current = registry.get("pods", "default", "web-1")
            try:
                results.append(json.dumps(registry.update("pods", update(current)), sort_keys=True))
            except StatusError as err:
                results.append(f"{err.code} {err.message}")
        return results, trusted

    fast_results, trusted = run(fast=True)
    assert fast_results == run(fast=False)[0]
    assert trusted is (node == "node-2")


@pytest.mark.parametrize("fast", [pytest.param(True, id="fast path"), pytest.param(False, id="generic path")])
def test_kubectl_replace_with_another_uid_is_a_conflict_not_invalid(fast: bool) -> None:
    registry = make_registry(fast=fast)
    created = registry.create("pods", bare_pod())
    with pytest.raises(StatusError) as info:
        registry.update("pods", with_meta(created, uid="other", ownerReferences=[{}]))
    assert info.value.code == 409
    assert "Precondition failed: UID in precondition: other, UID in object meta: uid-" in info.value.message


def test_a_new_finalizer_on_a_pod_being_deleted_is_forbidden() -> None:
    registry = make_registry(fast=True)
    registry.graceful_pod_deletion = True
    registry.create("pods", bare_pod())
    registry.delete("pods", "default", "web-1", grace_period_seconds=30)
    current = registry.get("pods", "default", "web-1")
    with pytest.raises(StatusError) as info:
        registry.update("pods", with_meta(current, finalizers=["example.com/keep"]))
    assert info.value.code == 422
    assert info.value.message == (
        'Pod "web-1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the '
        'object is being deleted, found new finalizers []string{"example.com/keep"}'
    )


def _trusted_object(kind: str, version: str, n: int) -> JSON:
    return {"apiVersion": version, "kind": kind, "metadata": {"name": f"p{n}", "namespace": "default"}}


TRUST_STEPS = [
    pytest.param([("Pod", "v1", 0), ("Pod", "v1", 1)], id="two pods"),
    pytest.param([("Pod", "v1", 0), ("Node", "v1", 0)], id="a pod then another kind under its key"),
    pytest.param([("Pod", "v2", 1), ("Pod", "v1", 2)], id="another version, then a pod"),
    pytest.param([], id="nothing"),
]


@pytest.mark.parametrize("steps", TRUST_STEPS)
@pytest.mark.parametrize("same_config", [True, False], ids=["the remembered configuration", "another one"])
def test_remembering_a_run_at_once_remembers_what_remembering_each_does(
    steps: list[tuple[str, str, int]], same_config: bool
) -> None:
    first, second = Configuration(None, None), Configuration(None, None)
    one_by_one, at_once = PodTrust(), PodTrust()
    earlier = _trusted_object("Pod", "v1", 9)
    for trust in (one_by_one, at_once):
        trust.remember(("default", "p9"), earlier, first)
        trust.remember(("default", "p1"), earlier, first)
    config = first if same_config else second
    items = [(("default", f"p{n}"), _trusted_object(kind, version, n)) for kind, version, n in steps]
    for key, obj in items:
        one_by_one.remember(key, obj, config)
    at_once.remember_all(items, config)
    assert at_once._stored == one_by_one._stored
    assert at_once._config == one_by_one._config
    created = PodTrust()
    created.remember(("default", "p9"), earlier, first)
    created.remember(("default", "p1"), earlier, first)
    created.remember_created([obj for _, obj in items], config)
    assert created._stored == one_by_one._stored
    assert created._config == one_by_one._config
