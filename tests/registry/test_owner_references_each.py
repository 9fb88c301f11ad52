"""`Registry.update_owner_references_each(pods, refs)` (registry.podruns) gives what
`update_each("pods", ...)` of the pods with metadata.ownerReferences set to `refs` gives, and what
consecutive `update` calls give: the same stored objects or refusals (with their messages) in
the same places, the same resourceVersions and watch events in the same order. A pod that is
the very object the registry stored and the store still holds skips the look-ups of its update;
every other pod (stale, written behind the registry, being deleted, missing, given twice, an
identity-blind store, invalid references) takes update_each's own checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.registry import Registry, podruns
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from registry.test_pod_trust import OWNER, bare_pod, make_registry, with_meta
from registry.test_update_each import BAD_REFS, REFUSED, TWO_CONTROLLERS, _patch_store

NAMES = ["web-0", "web-1", "web-2", REFUSED]
#: what happens to the pods between their reads and the adoption (name -> change)
Setup = Callable[[Registry, dict[str, JSON]], None]
Refs = list[JSON]


def _nothing(_registry: Registry, _stored: dict[str, JSON]) -> None:
    return None


def _written_after_read(name: str) -> Setup:
    """The pod is updated through the registry after the caller read it: the read is stale."""

    def setup(registry: Registry, stored: dict[str, JSON]) -> None:
        registry.update("pods", with_meta(stored[name], annotations={"a": "b"}))

    return setup


def _written_behind(name: str, **meta: Any) -> Setup:
    """The store is written directly (not through the registry: nothing validates it) and the
    caller reads that."""

    def setup(registry: Registry, stored: dict[str, JSON]) -> None:
        body = with_meta({**stored[name], "status": {"phase": "Pending"}}, **meta)
        stored[name] = registry.store.update("pods", body)

    return setup


def _deleted(name: str) -> Setup:
    def setup(registry: Registry, stored: dict[str, JSON]) -> None:
        registry.delete("pods", "default", name)

    return setup


def _being_deleted(name: str) -> Setup:
    """A graceful delete marks the pod; the caller reads the marked pod."""

    def setup(registry: Registry, stored: dict[str, JSON]) -> None:
        registry.graceful_pod_deletion = True
        registry.delete("pods", "default", name, grace_period_seconds=30)
        registry.graceful_pod_deletion = False
        stored[name] = registry.get("pods", "default", name)

    return setup


def _adopted_already(refs_of: Callable[[], Refs], name: str, *, behind: bool = False) -> Setup:
    """The pod took the very reference list before (a no-op update then); `behind`: written to
    the store directly (a list validation refuses)."""

    def setup(registry: Registry, stored: dict[str, JSON]) -> None:
        writer = registry.store if behind else registry
        stored[name] = writer.update("pods", with_meta(stored[name], ownerReferences=refs_of()))

    return setup


def _outcome(
    names: list[str], setup: Setup, refs: Refs, *, way: str, fast_store: bool = True
) -> tuple[list[str], list[str]]:
    """Create every pod of NAMES, run `setup`, then adopt `names` (as read before setup, or as
    setup left them) with `refs` one `way`; the results and every pod watch event, as JSON."""
    registry = make_registry(fast=fast_store)
    store = registry.store
    assert isinstance(store, MemoryStore)
    _patch_store(store)
    events: list[WatchEvent] = []
    registry.subscribe(each_event(events.append), "pods")
    stored = {name: registry.create("pods", bare_pod(name)) for name in NAMES}
    setup(registry, stored)
    pods = [stored[name] for name in names]
    results: list[JSON | StatusError] = []
    if way == "owners":
        results = registry.update_owner_references_each(pods, refs)
    elif way == "each":
        results = registry.update_each("pods", [podruns.with_references(p, refs) for p in pods])
    else:
        for pod in pods:
            try:
                results.append(registry.update("pods", podruns.with_references(pod, refs)))
            except StatusError as err:
                results.append(err)
    shown = [
        f"{r.code} {r.reason} {r.message}" if isinstance(r, StatusError) else json.dumps(r, sort_keys=True)
        for r in results
    ]
    seen = [json.dumps([e.type, e.resource_version, e.object], sort_keys=True) for e in events]
    return shown, seen


def _assert_same(names: list[str], setup: Setup, refs: Refs) -> None:
    reference = _outcome(names, setup, refs, way="one-by-one", fast_store=False)
    assert _outcome(names, setup, refs, way="owners") == reference
    assert _outcome(names, setup, refs, way="each") == reference
    assert _outcome(names, setup, refs, way="owners", fast_store=False) == reference


SHARED: Refs = [OWNER]

CASES = [
    pytest.param(["web-0", "web-1", "web-2"], _nothing, SHARED, id="three bare pods take one shared list"),
    pytest.param([], _nothing, SHARED, id="no pod"),
    pytest.param(
        ["web-0", REFUSED, "web-1"],
        _nothing,
        SHARED,
        id="a write the store refuses mid-run leaves the ones after it to be made",
    ),
    pytest.param(
        ["web-0", "web-1", "web-2"],
        _written_after_read("web-1"),
        SHARED,
        id="a pod read before another write is a conflict, the others are adopted",
    ),
    pytest.param(
        ["web-0", "web-1", "web-2"],
        _written_behind("web-1"),
        SHARED,
        id="a pod written behind the registry takes the checked way and is adopted",
    ),
    pytest.param(
        ["web-0", "web-1", "web-2"],
        _written_behind("web-1", labels={"app": "-bad-"}),
        SHARED,
        id="a pod written behind the registry with an invalid label is refused by full validation",
    ),
    pytest.param(["web-0", "web-1", "web-2"], _deleted("web-2"), SHARED, id="a deleted pod is not found"),
    pytest.param(
        ["web-0", "web-1"],
        _being_deleted("web-0"),
        SHARED,
        id="a pod being deleted keeps its deletion fields through the checked way",
    ),
    pytest.param(
        ["web-0", "web-1", "web-0"],
        _nothing,
        SHARED,
        id="the same pod twice: the second is a conflict (its resourceVersion is stale)",
    ),
    pytest.param(
        ["web-0", "web-1"],
        _adopted_already(lambda: SHARED, "web-1"),
        SHARED,
        id="a pod holding the very list already changes nothing and keeps its version",
    ),
    pytest.param(
        ["web-0", "web-1", "web-2"], _nothing, BAD_REFS, id="an invalid list refuses each pod with its errors"
    ),
    pytest.param(
        ["web-0", "web-1"], _nothing, TWO_CONTROLLERS, id="two controller references refuse each pod"
    ),
    pytest.param(
        ["web-0", "web-1", "web-2"],
        _adopted_already(lambda: BAD_REFS, "web-1", behind=True),
        BAD_REFS,
        id="an invalid list a pod holds already is no change for it, refused for the others",
    ),
]


@pytest.mark.parametrize(("names", "setup", "refs"), CASES)
def test_owner_references_each_is_consecutive_updates(names: list[str], setup: Setup, refs: Refs) -> None:
    _assert_same(names, setup, refs)


SETUPS: list[Setup] = [
    _nothing,
    _written_after_read("web-1"),
    _written_behind("web-0"),
    _written_behind("web-2", labels={"app": "-bad-"}),
    _deleted("web-2"),
    _being_deleted("web-1"),
]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from(NAMES), max_size=6),
    st.sampled_from(range(len(SETUPS))),
    st.sampled_from([SHARED, BAD_REFS, TWO_CONTROLLERS]),
)
def test_owner_references_each_is_consecutive_updates_for_any_pods(
    names: list[str], setup: int, refs: Refs
) -> None:
    _assert_same(names, SETUPS[setup], refs)


def test_stored_pods_skip_the_look_ups_and_others_take_them(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = make_registry(fast=True)
    checked: list[str] = []
    plain = podruns.PodUpdateRun._checked

    def spy(run: podruns.PodUpdateRun, obj: JSON) -> Any:
        checked.append(obj["metadata"]["name"])
        return plain(run, obj)

    monkeypatch.setattr(podruns.PodUpdateRun, "_checked", spy)
    pods = [registry.create("pods", bare_pod(name)) for name in ("web-0", "web-1", "web-2")]
    behind = registry.store.update("pods", {**pods[1], "status": {"phase": "Pending"}})
    results = registry.update_owner_references_each([pods[0], behind, pods[2]], SHARED)
    assert checked == ["web-1"]
    assert all(isinstance(r, dict) and r["metadata"]["ownerReferences"] is SHARED for r in results)


def test_adopted_pods_stay_trusted_for_their_next_adoption() -> None:
    registry = make_registry(fast=True)
    pods = [registry.create("pods", bare_pod(name)) for name in ("web-0", "web-1")]
    adopted = registry.update_owner_references_each(pods, SHARED)
    config = registry._pod_config()
    for pod in adopted:
        assert isinstance(pod, dict)
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        assert registry._pods.keeps_spec(key, pod, pod, config)
        assert registry.store.get("pods", *key) is pod


def test_without_pod_trust_every_pod_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = make_registry(fast=True)
    registry.validator = lambda _resource, _obj, _old: None  # another validator: no trust
    checked: list[JSON] = []
    monkeypatch.setattr(podruns.PodUpdateRun, "_checked", lambda _run, obj: checked.append(obj))
    pods = [registry.create("pods", bare_pod(name)) for name in ("web-0", "web-1")]
    results = registry.update_owner_references_each(pods, SHARED)
    assert checked == []  # (no pod configuration: each takes `update`)
    assert [r["metadata"]["ownerReferences"] for r in results if isinstance(r, dict)] == [SHARED, SHARED]


def test_with_references_replaces_the_list_in_place_and_shares_the_rest() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "ownerReferences": [], "uid": "u"}}
    changed = podruns.with_references(pod, SHARED)
    assert list(changed["metadata"]) == ["name", "ownerReferences", "uid"]
    assert changed["metadata"]["ownerReferences"] is SHARED
    assert pod["metadata"]["ownerReferences"] == []
