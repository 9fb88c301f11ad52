"""`Registry.update_each` gives what consecutive `Registry.update` calls give: the same stored
objects or refusals (with their messages) in the same places, the same resourceVersions and the
same watch events in the same order, whether its pod updates keeping the stored spec are stored
as one batch (the in-memory store) or go one by one (a store that is not identity-aware); a
failure, at the checks or in the store, leaves the later updates to be made still."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api import errors
from kubetaint.api.errors import StatusError
from kubetaint.api.validation.objectmeta import owner_reference_errors
from kubetaint.registry.podtrust import OwnerErrorsOfRun
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from registry.test_pod_trust import (
    OWNER,
    UPDATES,
    Update,
    adopt,
    bare_pod,
    make_registry,
    with_meta,
)
from store.commits import update_each

REFUSED = "refused-by-store"  # the store refuses every write of a pod of this name after its create


def _refuse(obj: JSON) -> None:
    if (obj.get("metadata") or {}).get("name") == REFUSED:
        raise errors.conflict("pods", REFUSED, "refused by the store")


def _patch_store(store: MemoryStore) -> None:
    """Make `store` refuse updates of the pod named REFUSED, through `update` and `update_many`."""
    plain_update, plain_update_in = store.update, store._update_in

    def update(resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        _refuse(obj)
        return plain_update(resource, obj, dry_run=dry_run)

    def update_in(resource: str, spaces: Any, obj: JSON, indexed: bool) -> Any:
        _refuse(obj)
        return plain_update_in(resource, spaces, obj, indexed)

    store.update = update  # type: ignore[method-assign]
    store._update_in = update_in  # type: ignore[method-assign]


NAMES = ["web-0", "web-1", "web-2", REFUSED]


def _outcome(plan: list[tuple[str, Update]], *, fast: bool, each: bool) -> tuple[list[str], list[str]]:
    """Create the pods, then apply the plan's updates (each to the pod as stored before the
    plan) by one `update_each` or by consecutive `update` calls; the results (stored objects or
    refusals) and every pod watch event, as JSON text."""
    registry = make_registry(fast=fast)
    store = registry.store
    assert isinstance(store, MemoryStore)
    _patch_store(store)
    events: list[WatchEvent] = []
    registry.subscribe(each_event(events.append), "pods")
    stored = {name: registry.create("pods", bare_pod(name)) for name in NAMES}
    bodies = [update(stored[name]) for name, update in plan]
    results: list[JSON | StatusError] = []
    if each:
        results = update_each(registry, "pods", bodies)
    else:
        for body in bodies:
            try:
                results.append(registry.update("pods", body))
            except StatusError as err:
                results.append(err)
    shown = [
        f"{r.code} {r.reason} {r.message}" if isinstance(r, StatusError) else json.dumps(r, sort_keys=True)
        for r in results
    ]
    seen = [json.dumps([e.type, e.resource_version, e.object], sort_keys=True) for e in events]
    return shown, seen


def _assert_same(plan: list[tuple[str, Update]]) -> None:
    reference = _outcome(plan, fast=False, each=False)
    assert _outcome(plan, fast=True, each=True) == reference
    assert _outcome(plan, fast=True, each=False) == reference
    assert _outcome(plan, fast=False, each=True) == reference


def _shared_adoption() -> Update:
    refs = [OWNER]  # one list for every pod, as the ReplicaSet controller adopts
    return lambda p: with_meta(p, ownerReferences=refs)


def _taking(refs: list[JSON]) -> Update:
    """An update setting the very list `refs` (shared by every update made with it)."""
    return lambda p: with_meta(p, ownerReferences=refs)


BAD_REFS: list[JSON] = [
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "", "uid": "", "controller": True}
]
TWO_CONTROLLERS: list[JSON] = [OWNER, {**OWNER, "name": "other", "uid": "other-uid"}]
GOOD_REFS: list[JSON] = [OWNER]


PLANS = [
    pytest.param([("web-0", adopt), ("web-1", adopt), ("web-2", adopt)], id="three adoptions in a row"),
    pytest.param(
        [(name, _shared_adoption()) for name in ("web-0", "web-1", "web-2")],
        id="three adoptions sharing one reference list",
    ),
    pytest.param(
        [("web-0", adopt), (REFUSED, adopt), ("web-1", adopt)],
        id="a write the store refuses mid-run leaves the ones after it to be made",
    ),
    pytest.param(
        [(REFUSED, adopt), ("web-0", adopt)], id="a refused first write leaves the second to be made"
    ),
    pytest.param(
        [("web-0", adopt), ("web-1", lambda p: with_meta(p, labels={"app": "-bad-"})), ("web-2", adopt)],
        id="a refusal by validation mid-run leaves the ones after it to be made",
    ),
    pytest.param(
        [("web-0", adopt), ("web-0", adopt)],
        id="the same pod twice: the second is a conflict (its resourceVersion is stale)",
    ),
    pytest.param(
        [("web-0", adopt), ("web-1", lambda p: {**p, "spec": {**p["spec"], "activeDeadlineSeconds": 3}})],
        id="an update of another spec object takes the generic way between fast ones",
    ),
    pytest.param(
        [("web-0", lambda p: with_meta(p, resourceVersion=None, uid=None)), ("web-1", adopt)],
        id="updates without preconditions",
    ),
    pytest.param([("web-2", dict), ("web-1", adopt)], id="an update changing nothing keeps its version"),
    pytest.param(
        [("web-1", lambda p: with_meta(p, name="missing")), ("web-2", adopt)],
        id="an update of a missing pod is not found, the next is made",
    ),
    pytest.param([], id="nothing to update"),
    pytest.param(
        [(name, _taking(BAD_REFS)) for name in ("web-0", "web-1", "web-2")],
        id="adoptions sharing one invalid reference list are each refused with its errors",
    ),
    pytest.param(
        [("web-0", _taking(GOOD_REFS)), ("web-1", _taking(TWO_CONTROLLERS)), ("web-2", _taking(GOOD_REFS))],
        id="shared lists alternating, valid and invalid, each checked for its own contents",
    ),
    pytest.param(
        [
            ("web-0", _taking(BAD_REFS)),
            ("web-1", lambda p: {**p, "spec": {**p["spec"], "activeDeadlineSeconds": 3}}),
            ("web-2", _taking(BAD_REFS)),
        ],
        id="one invalid shared list on both sides of a generic update",
    ),
]


@pytest.mark.parametrize("plan", PLANS)
def test_update_each_is_consecutive_updates(plan: list[tuple[str, Update]]) -> None:
    _assert_same(plan)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(UPDATES)), max_size=6))
def test_update_each_is_consecutive_updates_for_any_plan(plan: list[tuple[str, Any]]) -> None:
    _assert_same([(name, param.values[0]) for name, param in plan])


@pytest.mark.usefixtures("default_mode")
def test_adoptions_by_update_each_stay_trusted() -> None:
    registry = make_registry(fast=True)
    pods = [registry.create("pods", bare_pod(name)) for name in ("web-0", "web-1")]
    adopted = update_each(registry, "pods", [adopt(p) for p in pods])
    config = registry._pod_config()
    for pod in adopted:
        assert isinstance(pod, dict)
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        assert registry._pods.keeps_spec(key, with_meta(pod, finalizers=["x/y"]), pod, config)


def test_other_resources_take_update_one_by_one() -> None:
    registry = make_registry(fast=True)
    registry.create("namespaces", {"metadata": {"name": "team"}})
    team = registry.get("namespaces", "", "team")
    results = update_each(
        registry,
        "namespaces",
        [with_meta(team, labels={"a": "b"}), with_meta(team, labels={"a": "-bad-"})],
    )
    assert isinstance(results[0], dict) and results[0]["metadata"]["labels"] == {"a": "b"}
    assert isinstance(results[1], StatusError) and results[1].code == 409


REF_LISTS = [GOOD_REFS, BAD_REFS, TWO_CONTROLLERS, [], None]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(range(len(REF_LISTS))), max_size=8))
def test_a_runs_owner_errors_memo_answers_as_owner_reference_errors(picks: list[int]) -> None:
    memo = OwnerErrorsOfRun()
    for i in picks:
        meta = {"name": "p", "ownerReferences": REF_LISTS[i]}
        assert memo(meta) == owner_reference_errors(meta)
        assert memo(meta) == owner_reference_errors(meta)


@pytest.mark.usefixtures("default_mode")
def test_a_run_looks_its_namespace_up_once() -> None:
    registry = make_registry(fast=True)
    pods = [registry.create("pods", bare_pod(name)) for name in ("web-0", "web-1", "web-2")]
    looked_up: list[str] = []
    get = registry.store.get

    def counting_get(resource: str, namespace: str, name: str) -> JSON:
        if resource == "namespaces":
            looked_up.append(name)
        return get(resource, namespace, name)

    registry.store.get = counting_get  # type: ignore[method-assign]
    results = update_each(registry, "pods", [adopt(pod) for pod in pods])
    assert all(isinstance(r, dict) for r in results)
    assert looked_up == ["default"]
