"""Batches (Dispatcher.publish, Informer following a ChangeBatch): every subscriber gets each
batch whole, in commit order, and an informer fed a batch ends with the cache and the handler
calls that one event at a time gives."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, each_event
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import JSON, WatchEvent
from kubetaint.store.memory import MemoryStore
from kubetaint.store.watch import Dispatcher
from store.commits import update_field_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"


def numbered(n: int, resource: str = LEASES) -> WatchEvent:
    return WatchEvent("MODIFIED", resource, {"n": n}, n, {})


class Grouping:
    """A subscriber recording the resourceVersions of each batch it is given."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def __call__(self, batch: ChangeBatch) -> None:
        self.calls.append([e.resource_version for e in batch])


def test_a_batch_goes_whole_to_each_subscriber_and_event_by_event_through_each_event() -> None:
    dispatcher = Dispatcher()
    grouping = Grouping()
    plain: list[int] = []
    dispatcher.subscribe(grouping, LEASES)
    dispatcher.subscribe(each_event(lambda e: plain.append(e.resource_version)), LEASES)
    dispatcher.publish(ChangeBatch([numbered(1)]))
    dispatcher.publish(ChangeBatch([numbered(2), numbered(3), numbered(4)]))
    dispatcher.publish(ChangeBatch([numbered(5)]))
    dispatcher.dispatch()
    assert grouping.calls == [[1], [2, 3, 4], [5]]
    assert plain == [1, 2, 3, 4, 5]


def test_a_group_reaches_only_the_handlers_of_its_resource_and_the_catch_all_ones() -> None:
    dispatcher = Dispatcher()
    pods, everything = Grouping(), Grouping()
    dispatcher.subscribe(pods, "pods")
    dispatcher.subscribe(everything)
    dispatcher.publish(ChangeBatch([numbered(1), numbered(2)]))
    dispatcher.publish(ChangeBatch([]))
    dispatcher.dispatch()
    assert pods.calls == [] and everything.calls == [[1, 2]]


def test_events_handlers_cause_during_a_group_come_after_it() -> None:
    dispatcher = Dispatcher()
    delivered: list[int] = []

    def handler(ev: WatchEvent) -> None:
        delivered.append(ev.resource_version)
        if ev.resource_version == 1:
            dispatcher.publish(ChangeBatch([numbered(10)]))

    dispatcher.subscribe(each_event(handler), LEASES)
    dispatcher.publish(ChangeBatch([numbered(1), numbered(2)]))
    dispatcher.publish(ChangeBatch([numbered(3)]))
    dispatcher.dispatch()
    assert delivered == [1, 2, 3, 10]


def test_a_handler_subscribed_later_gets_groups_from_then_on() -> None:
    dispatcher = Dispatcher()
    first, second = Grouping(), Grouping()
    dispatcher.subscribe(first, LEASES)
    dispatcher.publish(ChangeBatch([numbered(1)]))
    dispatcher.dispatch()
    unsubscribe = dispatcher.subscribe(second, LEASES)
    dispatcher.publish(ChangeBatch([numbered(2)]))
    dispatcher.dispatch()
    unsubscribe()
    dispatcher.publish(ChangeBatch([numbered(3)]))
    dispatcher.dispatch()
    assert first.calls == [[1], [2], [3]] and second.calls == [[2]]


def test_a_failing_handler_leaves_what_is_queued_after_the_group_for_the_next_dispatch() -> None:
    dispatcher = Dispatcher()
    delivered: list[int] = []

    def handler(ev: WatchEvent) -> None:
        delivered.append(ev.resource_version)
        if ev.resource_version == 2 and delivered.count(2) == 1:
            raise RuntimeError("boom")

    dispatcher.subscribe(each_event(handler), LEASES)
    dispatcher.publish(ChangeBatch([numbered(1), numbered(2)]))
    dispatcher.publish(ChangeBatch([numbered(3)]))
    with pytest.raises(RuntimeError):
        dispatcher.dispatch()
    dispatcher.dispatch()
    assert delivered == [1, 2, 3]


# informers ---------------------------------------------------------------------------------


def lease(name: str, namespace: str = NS, **labels: str) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace, "uid": f"u-{name}", "labels": labels},
        "spec": {"renewTime": "t0"},
    }


def version(obj: JSON, rv: int, **spec: Any) -> JSON:
    return {
        **obj,
        "metadata": {**obj["metadata"], "resourceVersion": str(rv)},
        "spec": {**obj["spec"], **spec},
    }


def recorded(informer: Informer, grouped: bool) -> list[tuple[str, Any, ...]]:
    """Two handlers' calls: the per-object adapter, or (`grouped`) a handler recording each batch
    of updates as one call, and a second adapter recording updates."""
    calls: list[tuple[Any, ...]] = []
    names = lambda obj: obj["metadata"]["name"] + "@" + obj["metadata"].get("resourceVersion", "")  # noqa: E731
    handlers = EventHandlers(
        on_add=lambda obj: calls.append(("add", names(obj))),
        on_update=lambda old, new: calls.append(("update", names(old), names(new))),
        on_delete=lambda obj: calls.append(("delete", names(obj))),
    )

    def batches(changes: Changes) -> None:
        if changes.only == "MODIFIED":
            calls.append(("updates", [(names(old), names(new)) for _, _, old, new in changes]))
        else:
            handlers(changes)

    informer.add_handlers(batches if grouped else handlers)
    informer.add_handlers(EventHandlers(on_update=lambda old, new: calls.append(("second", names(new)))))
    return calls


a, b, c = lease("a"), lease("b"), lease("c")
elsewhere = lease("x", namespace="other")
GROUPS = [
    pytest.param(
        [WatchEvent("MODIFIED", LEASES, version(a, 5, renewTime="t1"), 5, version(a, 1))], id="one update"
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, version(b, 2)),
            WatchEvent("MODIFIED", LEASES, version(a, 7), 7, version(a, 5)),
        ],
        id="several updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(c, 6), 6, version(c, 3)),
        ],
        id="an update of an object the cache lacks is an add",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("DELETED", LEASES, version(b, 6), 6, version(b, 2)),
        ],
        id="a delete in the group",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(elsewhere, 5), 5, version(elsewhere, 4)),
            WatchEvent("MODIFIED", LEASES, version(a, 6), 6, version(a, 1)),
        ],
        id="a change in another namespace is unseen",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 2), 2, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 5), 5, version(b, 2)),
        ],
        id="a change the listing covered is skipped",
    ),
    pytest.param(
        [WatchEvent("MODIFIED", LEASES, version(elsewhere, 5), 5, version(elsewhere, 4))],
        id="nothing seen",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(lease("x"), 6), 6, version(elsewhere, 3)),
            WatchEvent("MODIFIED", LEASES, version(b, 7), 7, version(b, 2)),
        ],
        id="an object moving into the namespace is an add",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(lease("b", namespace="other"), 6), 6, version(b, 2)),
            WatchEvent("MODIFIED", LEASES, version(a, 7), 7, version(a, 5)),
        ],
        id="an object moving out of the namespace is a delete",
    ),
    pytest.param(
        [
            WatchEvent("ADDED", LEASES, version(c, 5), 5),
            WatchEvent("MODIFIED", LEASES, version(a, 6), 6, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(c, 7), 7, version(c, 5)),
        ],
        id="an add first, then updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(lease("a", x="y"), 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, version(lease("b", x="y"), 2)),
        ],
        id="labels gained and lost (a selector's adds and deletes)",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("BOOKMARK", LEASES, {"metadata": {"resourceVersion": "6"}}, 6),
            WatchEvent("MODIFIED", LEASES, version(b, 7), 7, version(b, 2)),
        ],
        id="a bookmark in the group is unseen",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, None),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, version(b, 2)),
        ],
        id="an update without its old object",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, version(b, 2)),
            WatchEvent("MODIFIED", LEASES, version(c, 7), 7, version(c, 3)),
            WatchEvent("MODIFIED", LEASES, version(a, 8), 8, version(a, 5)),
        ],
        id="updates after one of an object the cache lacks",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 3), 3, version(b, 2)),
            WatchEvent("MODIFIED", LEASES, version(a, 6), 6, version(a, 5)),
        ],
        id="a change the listing covered between updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, None),
            WatchEvent("MODIFIED", LEASES, version(a, 7), 7, version(a, 5)),
        ],
        id="an update without its old object between updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("MODIFIED", LEASES, version(b, 6), 6, version(lease("b", namespace="other"), 2)),
            WatchEvent("MODIFIED", LEASES, version(a, 7), 7, version(a, 5)),
        ],
        id="an object moving back into the namespace between updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent(
                "MODIFIED", LEASES, {"metadata": {"name": "b", "resourceVersion": "6"}}, 6, version(b, 2)
            ),
            WatchEvent("MODIFIED", LEASES, version(a, 7), 7, version(a, 5)),
        ],
        id="an update of an object without a namespace between updates",
    ),
    pytest.param(
        [
            WatchEvent("MODIFIED", LEASES, version(a, 5), 5, version(a, 1)),
            WatchEvent("DELETED", LEASES, version(a, 6), 6, version(a, 5)),
            WatchEvent("MODIFIED", LEASES, version(b, 7), 7, version(b, 2)),
        ],
        id="updates on both sides of a delete",
    ),
]

#: informer settings: a namespace (the node lifecycle controller's lease informer), none, a
#: label selector (every event translated)
INFORMERS = [
    pytest.param({"namespace": NS}, id="one namespace"),
    pytest.param({}, id="every namespace"),
    pytest.param({"label_selector": "x=y"}, id="a label selector"),
    pytest.param({"namespace": NS, "label_selector": "x!=z"}, id="a namespace and a label selector"),
]


def fed_informer(
    events: list[WatchEvent], grouped: bool, as_group: bool, config: dict[str, str] | None = None
) -> tuple[Any, ...]:
    store = MemoryStore(VirtualClock())
    store.create(LEASES, lease("a"))
    store.create(LEASES, lease("b", x="y"))
    store.create(LEASES, lease("x", namespace="other"))
    informer = Informer(store, LEASES, **(config if config is not None else {"namespace": NS}))
    calls = recorded(informer, grouped)
    informer.start()
    calls.clear()
    if as_group:
        informer._follow_batch(ChangeBatch(events))
    else:
        for event in events:
            informer._follow_batch(ChangeBatch([event]))
    cache = sorted((k, v["metadata"]["resourceVersion"]) for k, v in informer._cache.items())
    flat: list[tuple[Any, ...]] = []
    for call in calls:
        if call[0] == "updates":
            flat.extend(("update", old, new) for old, new in call[1])
        else:
            flat.append(call)
    return cache, sorted(flat, key=lambda call: call[0] == "second")  # each handler set in order


@pytest.mark.parametrize("config", INFORMERS)
@pytest.mark.parametrize("events", GROUPS)
@pytest.mark.parametrize("grouped", [True, False], ids=["a batch handler", "the per-object adapter"])
def test_an_informer_fed_a_group_ends_as_fed_event_by_event(
    events: list[WatchEvent], grouped: bool, config: dict[str, str]
) -> None:
    assert fed_informer(events, grouped, True, config) == fed_informer(events, grouped, False, config)


NAMES = st.sampled_from(["a", "b", "c", "x"])
SPACES = st.sampled_from([NS, "other"])
LABELS = st.sampled_from([{}, {"x": "y"}])


@st.composite
def event_groups(draw: st.DrawFn) -> list[WatchEvent]:
    """Events of one resource with rising resourceVersions (some at or below the listing's)."""
    events: list[WatchEvent] = []
    rv = draw(st.integers(1, 3))
    for _ in range(draw(st.integers(0, 8))):
        rv += 1
        kind = draw(st.sampled_from(["MODIFIED", "MODIFIED", "MODIFIED", "ADDED", "DELETED", "BOOKMARK"]))
        if kind == "BOOKMARK":
            events.append(WatchEvent("BOOKMARK", LEASES, {"metadata": {"resourceVersion": str(rv)}}, rv))
            continue
        name = draw(NAMES)
        new = version(lease(name, namespace=draw(SPACES), **draw(LABELS)), rv)
        old = version(lease(name, namespace=draw(SPACES), **draw(LABELS)), rv - 1)
        if kind == "MODIFIED":
            events.append(WatchEvent("MODIFIED", LEASES, new, rv, draw(st.sampled_from([old, None]))))
        elif kind == "ADDED":
            events.append(WatchEvent("ADDED", LEASES, new, rv))
        else:
            events.append(WatchEvent("DELETED", LEASES, new, rv, old))
    return events


@settings(max_examples=150, deadline=None)
@given(events=event_groups(), grouped=st.booleans(), which=st.sampled_from([p.values[0] for p in INFORMERS]))
def test_any_group_ends_as_fed_event_by_event(
    events: list[WatchEvent], grouped: bool, which: dict[str, str]
) -> None:
    assert fed_informer(events, grouped, True, which) == fed_informer(events, grouped, False, which)


def test_a_field_write_reaches_a_handler_as_one_batch_of_updates() -> None:
    store = MemoryStore(VirtualClock())
    leases = [store.create(LEASES, lease(n)) for n in "abc"]
    informer = Informer(store, LEASES, namespace=NS)
    calls = recorded(informer, grouped=True)
    informer.start()
    calls.clear()
    renewed, err = update_field_many(store, LEASES, leases, ("spec", "renewTime"), "t1")
    assert err is None
    assert calls[0] == ("updates", [("a@1", "a@4"), ("b@2", "b@5"), ("c@3", "c@6")])
    assert [call[0] for call in calls[1:]] == ["second"] * 3
    assert [informer.get(NS, n) for n in "abc"] == renewed


def test_an_informer_is_its_own_store_handler_and_stops() -> None:
    store = MemoryStore(VirtualClock())
    informer = Informer(store, LEASES, namespace=NS)
    informer.start()
    store.create(LEASES, lease("a"))
    informer.stop()
    store.create(LEASES, lease("b"))
    assert len(informer) == 1 and informer.get(NS, "a") is not None


def _pods_store() -> MemoryStore:
    counter = iter(range(100))
    store = MemoryStore(VirtualClock(), uid_factory=lambda: f"uid-{next(counter)}")
    for name in ("a", "b", "c"):
        store.create("pods", {"metadata": {"name": name, "namespace": "default"}, "spec": {}})
    return store


def _bodies(store: MemoryStore, names: list[str]) -> list[JSON]:
    """Relabelled copies of the stored pods (a bare body for a name not stored)."""
    bodies = []
    for name in names:
        try:
            pod = store.get("pods", "default", name)
        except StatusError:
            pod = {"metadata": {"name": name, "namespace": "default"}, "spec": {}}
        bodies.append({**pod, "metadata": {**pod["metadata"], "labels": {"x": name}}})
    return bodies
