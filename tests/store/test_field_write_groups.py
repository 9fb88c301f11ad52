"""Field-write groups (store.changes.FieldWriteGroup): a MemoryStore field write of current
objects publishes its updates as one batch whose compact view is the group, its events built
only for whoever reads them. Every observer sees what the generic updates (`update_many` of
`with_field` copies) show it: subscribers the same events, a bounded history the same tail (and
the same "too old" answers), an informer the same cache and the same changes from the compact
view as from the events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, FieldWriteGroup, each_event
from kubetaint.store.informer import Changes, EventHandlers, Informer
from kubetaint.store.interface import JSON, StoreOptions, WatchEvent, with_field
from kubetaint.store.memory import MemoryStore
from store.commits import update_field_many, update_many

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")


def memory_store(history: int = 1000) -> MemoryStore:
    counter = iter(range(10_000))
    return MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=history), uid_factory=lambda: f"uid-{next(counter)}"
    )


def lease(name: str, namespace: str = NS, renew: str = "t0") -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace, "labels": {"n": name}},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


def dumps(value: Any) -> str:
    return json.dumps(value)


# FieldWriteGroup on its own ------------------------------------------------------------------


def group_of(size: int) -> FieldWriteGroup:
    olds = [{"n": i} for i in range(size)]
    news = [{"n": i, "x": 1} for i in range(size)]
    return FieldWriteGroup(LEASES, [(NS, str(i)) for i in range(size)], olds, news, 7, path=RENEW, value="v")


def test_a_group_of_one_namespace_holds_its_names_and_gives_the_keys_a_group_of_keys_holds() -> None:
    olds = [{"n": i} for i in range(3)]
    news = [{"n": i, "x": 1} for i in range(3)]
    keyed = FieldWriteGroup(LEASES, [(NS, str(i)) for i in range(3)], olds, news, 7, path=RENEW, value="v")
    named = FieldWriteGroup.in_namespace(
        LEASES, NS, ["0", "1", "2"], olds, news, first_rv=7, path=RENEW, value="v"
    )
    assert list(named.each_key()) == named.keys == keyed.keys == list(keyed.each_key())
    assert named.names == keyed.names == ["0", "1", "2"]
    assert named.namespaces() == keyed.namespaces() == {NS}
    assert described(named.events()) == described(keyed.events())


def described(events: list[WatchEvent]) -> list[tuple[Any, ...]]:
    return [(e.type, e.resource, e.resource_version, e.object, e.old_object) for e in events]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 12), st.lists(st.one_of(st.none(), st.integers(-2, 15)), max_size=5))
def test_a_groups_tails_and_events_are_the_updates_in_order(size: int, asks: list[int | None]) -> None:
    group = group_of(size)
    expected = [("MODIFIED", LEASES, 7 + i, {"n": i, "x": 1}, {"n": i}) for i in range(size)]
    for count in asks:  # any order of asks: each answer is the same slice
        want = expected if count is None else expected[len(expected) - max(0, min(count, size)) :]
        assert described(group.tail(count)) == want
    assert described(group.events()) == expected
    assert group.events() is group.events(), "built once"
    assert len(group) == size


def test_the_events_reuse_a_tail_built_before() -> None:
    group = group_of(5)
    tail = group.tail(2)
    assert group.events()[3:] == tail and all(a is b for a, b in zip(group.events()[3:], tail, strict=True))


# a MemoryStore's field write against the generic updates ------------------------------------


class Grouping:
    """A store subscriber: what it is given, batch by batch."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[Any, ...]]] = []

    def __call__(self, batch: ChangeBatch) -> None:
        self.calls.append(seen(list(batch)))

    def one(self, event: WatchEvent) -> None:
        self.calls.append(seen([event]))


def seen(events: list[WatchEvent]) -> list[tuple[Any, ...]]:
    return [(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in events]


def recording_informer(store: MemoryStore, log: list[Any], **selectors: Any) -> Informer:
    informer = Informer(store, LEASES, **selectors)
    name = dumps(selectors)
    informer.add_handlers(
        EventHandlers(
            on_add=lambda o: log.append((name, 0, "add", dumps(o))),
            on_update=lambda o, n: log.append((name, 0, "update", dumps(o), dumps(n))),
            on_delete=lambda o: log.append((name, 0, "delete", dumps(o))),
        )
    )

    def changes(batch: Changes) -> None:
        # one record per change: the generic updates come one by one, not as one batch
        log.extend((name, 1, kind, dumps(o), dumps(n)) for kind, _, o, n in batch)

    def field(batch: Changes) -> None:
        # the compact view of a field write, when given, tells what the changes tell
        group = batch.field_write
        if group is None:
            log.extend((name, 2, kind, dumps(o), dumps(n)) for kind, _, o, n in batch)
            return
        keys, olds, news = group.keys, group.olds, group.news
        assert keys == [(n["metadata"]["namespace"], n["metadata"]["name"]) for n in news]
        assert all(
            with_field(o, group.path, group.value)["spec"] == n["spec"]
            for o, n in zip(olds, news, strict=True)
        )
        log.extend((name, 2, "MODIFIED", dumps(o), dumps(n)) for o, n in zip(olds, news, strict=True))

    informer.add_handlers(changes)
    informer.add_handlers(field)
    return informer


def without_field_views(informer: Informer) -> None:
    """Make `informer` follow each batch from its events alone (before it starts)."""
    follow = informer._follow_batch
    vars(informer)["_follow_batch"] = lambda batch: follow(ChangeBatch(list(batch)))


#: set-ups: the leases written (by name) after creating these (name, namespace) leases and
#: running the steps
SETUPS = [
    pytest.param(["a", "b", "c"], [], id="every lease current"),
    pytest.param(["a", "b", "c"], ["touch b"], id="one changed in between: the rest after it by events"),
    pytest.param(["a", "b", "c"], ["delete c"], id="the last one deleted: not found"),
    pytest.param(["a", "b", "o"], [], id="one in another namespace"),
    pytest.param(["a", "b", "c"], ["renew b"], id="one holds the value already: no write"),
    pytest.param([], [], id="nothing to write"),
]


def run(names: list[str], steps: list[str], write: str, history: int) -> tuple[Any, ...]:
    store = memory_store(history)
    stored = {n: store.create(LEASES, lease(n, "other" if n == "o" else NS)) for n in ["a", "b", "c", "o"]}
    log: list[Any] = []
    informers = [
        recording_informer(store, log),
        recording_informer(store, log, namespace=NS),
        recording_informer(store, log, namespace="other"),
        recording_informer(store, log, label_selector="n!=c"),
    ]
    for informer in informers:
        if write == "events":  # the informers follow the batch's events, not its compact view
            without_field_views(informer)
        informer.start()
    grouping, plain = Grouping(), Grouping()
    store.subscribe(grouping, LEASES)
    store.subscribe(each_event(plain.one))
    start = store.current_resource_version()
    for step in steps:
        verb, name = step.split()
        if verb == "touch":
            store.update(LEASES, with_field(stored[name], ("spec", "holderIdentity"), "x"))
        elif verb == "renew":
            stored[name] = store.update(LEASES, with_field(stored[name], RENEW, "t1"))
        else:
            store.delete(LEASES, NS, name)
    objects = [stored[n] for n in names]
    result: tuple[list[JSON], StatusError | None]
    if write in ("fast", "events"):
        result = update_field_many(store, LEASES, objects, RENEW, "t1")
    else:
        result = update_many(store, LEASES, [with_field(o, RENEW, "t1") for o in objects])
    written, err = result
    replays = []
    for since in range(start - 2, store.current_resource_version() + 1):
        try:
            replays.append(seen(store.watch(LEASES, resource_version=str(since)).drain()))
        except StatusError as expired:
            replays.append([expired.code, expired.message])
    caches = [dumps(sorted(informer.items(), key=dumps)) for informer in informers]
    # each handler set's calls in order (a group goes to one handler set after the other)
    log.sort(key=lambda record: (record[0], record[1]))
    return (
        dumps(written),
        None if err is None else err.message,
        log,
        [call for calls in grouping.calls for call in calls],
        plain.calls,
        replays,
        caches,
        dumps(store.list(LEASES).items),
    )


@pytest.mark.parametrize("history", [1000, 3, 1, 0])
@pytest.mark.parametrize("names, steps", SETUPS)
def test_every_observer_of_a_field_write_sees_what_it_sees_of_the_generic_updates(
    names: list[str], steps: list[str], history: int
) -> None:
    fast, events, generic = (run(names, steps, write, history) for write in ("fast", "events", "generic"))
    assert fast == events
    assert fast == generic


@pytest.mark.usefixtures("default_mode")
def test_a_field_write_of_current_objects_is_one_group_an_informer_takes_whole() -> None:
    store = memory_store()
    leases = [store.create(LEASES, lease(n)) for n in "abc"]
    informer = Informer(store, LEASES, namespace=NS)
    told: list[Changes] = []
    informer.add_handlers(told.append)
    informer.start()
    told.clear()  # the listing
    written, err = update_field_many(store, LEASES, leases, RENEW, "t1")
    assert err is None
    ((batch),) = told
    assert batch.field_write is not None and batch.only == "MODIFIED"
    group = batch.field_write
    keys, olds, news, path, value = group.keys, group.olds, group.news, group.path, group.value
    assert keys == [(NS, n) for n in "abc"] and path == RENEW and value == "t1"
    assert all(a is b for a, b in zip(olds, leases, strict=True))
    assert all(a is b for a, b in zip(news, written, strict=True))
    assert [informer.get(NS, n) for n in "abc"] == written


# an informer following a field write's compact view against following its events -------------


def informer_run(case: str, via_group: bool) -> tuple[Any, ...]:
    store = memory_store()
    leases = [
        store.create(LEASES, lease(n)) for n in ("ac" if case == "one created after the listing" else "abc")
    ]
    selectors: dict[str, Any] = {"namespace": NS}
    if case == "label selector":
        selectors = {"label_selector": "n!=b"}
    elif case == "another namespace":
        selectors = {"namespace": "other"}
    elif case == "every namespace":
        selectors = {}
    informer = Informer(store, LEASES, **selectors)
    log: list[Any] = []
    informer.add_handlers(
        EventHandlers(
            on_add=lambda o: log.append(("add", dumps(o))),
            on_update=lambda o, n: log.append(("update", dumps(o), dumps(n))),
        )
    )
    informer.start()
    if case == "one created after the listing":  # its ADDED followed: cached as every other
        leases.insert(1, store.create(LEASES, lease("b")))
    rv = store.current_resource_version()
    news = [
        with_field({**o, "metadata": {**o["metadata"], "resourceVersion": str(rv + i + 1)}}, RENEW, "t1")
        for i, o in enumerate(leases)
    ]
    first = rv + 1
    if case == "listed after the first":
        first = rv - 1  # the informer's listing holds the first updates already
        informer._synced_rv = rv  # as if it had listed at rv (the cache holds the old objects still)
    group = FieldWriteGroup(LEASES, [(NS, n) for n in "abc"], leases, news, first, path=RENEW, value="t1")
    if via_group:
        informer._follow_batch(ChangeBatch.field_write_of(group))
    else:
        informer._follow_batch(ChangeBatch(group.events()))
    return log, dumps(sorted(informer.items(), key=dumps))


@pytest.mark.parametrize(
    "case",
    [
        "every one cached",
        "one created after the listing",
        "listed after the first",
        "label selector",
        "another namespace",
        "every namespace",
    ],
)
def test_an_informer_follows_a_field_group_as_its_events(case: str) -> None:
    assert informer_run(case, via_group=True) == informer_run(case, via_group=False)


# a bounded history holding field-write groups lazily -----------------------------------------

#: a step: ("renew", names) a field write of those leases as last written, ("touch", name) a
#: plain update, ("delete", name), ("create", name)
history_steps = st.lists(
    st.one_of(
        st.tuples(st.just("renew"), st.lists(st.sampled_from("abcd"), max_size=4, unique=True)),
        st.tuples(st.sampled_from(["touch", "delete", "create"]), st.sampled_from("abcd")),
    ),
    max_size=12,
)


def history_run(steps: list[tuple[str, Any]], history: int, fast: bool) -> tuple[Any, ...]:
    store = memory_store(history)
    stored = {n: store.create(LEASES, lease(n)) for n in "abc"}
    known = dict(stored)  # as last written, deleted ones too (a renewal of one is not found)
    outcomes: list[Any] = []
    for number, (verb, arg) in enumerate(steps):
        value = f"t{number}"
        if verb == "renew":
            objects = [known[n] for n in arg if n in known]
            if fast:
                written, err = update_field_many(store, LEASES, objects, RENEW, value)
            else:
                written, err = update_many(store, LEASES, [with_field(o, RENEW, value) for o in objects])
            stored.update((o["metadata"]["name"], o) for o in written)
            known.update(stored)
            outcomes.append((dumps(written), None if err is None else err.message))
        elif verb == "touch" and arg in stored:
            stored[arg] = known[arg] = store.update(
                LEASES, with_field(stored[arg], ("spec", "holderIdentity"), value)
            )
        elif verb == "delete" and arg in stored:
            store.delete(LEASES, NS, arg)
            del stored[arg]
        elif verb == "create" and arg not in stored:
            stored[arg] = known[arg] = store.create(LEASES, lease(arg))
    replays: list[Any] = []
    for since in range(0, store.current_resource_version() + 2):
        try:
            replays.append(seen(store.watch(LEASES, resource_version=str(since)).drain()))
        except StatusError as expired:
            replays.append([expired.code, expired.message])
    return outcomes, replays


@settings(max_examples=150, deadline=None)
@given(history_steps, st.sampled_from([0, 1, 2, 3, 5, 8, 1000]))
def test_a_history_of_field_writes_replays_and_expires_as_one_of_their_events(
    steps: list[tuple[str, Any]], history: int
) -> None:
    assert history_run(steps, history, fast=True) == history_run(steps, history, fast=False)


@pytest.mark.parametrize(
    "bound, sizes, expected_held",
    [
        pytest.param(10, [3, 4], [3, 4], id="every update fits: each group held whole"),
        pytest.param(5, [3, 4], [1, 4], id="the bound drops the oldest updates first"),
        pytest.param(3, [2, 6], [0, 3], id="a group larger than the bound keeps only its last ones"),
        pytest.param(0, [2], [0], id="no history: nothing kept"),
        pytest.param(None, [2, 6], [2, 6], id="no bound: every update kept"),
    ],
)
def test_a_group_stands_in_the_history_for_the_last_updates_it_keeps(
    bound: int | None, sizes: list[int], expected_held: list[int]
) -> None:
    from kubetaint.store.watchhistory import WatchHistory

    history = WatchHistory(bound)
    groups = [group_of(size) for size in sizes]
    for group in groups:
        history.add_group(group)
    assert [history.reach(group)[0] for group in groups] == expected_held
    every = [event for group in groups for event in group.events()]
    kept = every[max(0, len(every) - bound) :] if bound is not None else every
    assert len(history) == len(kept)
    assert described(list(history)) == described(kept)
    assert described(list(history.since(9))) == described([e for e in kept if e.resource_version > 9])
    assert history.oldest_version() == (kept[0].resource_version if kept else None)


@pytest.mark.parametrize(
    "bound, entries",
    [
        pytest.param(4, ["e", 3, "e", "e", 2], id="events and groups, the bound cutting a group"),
        pytest.param(3, ["e", "e", "e", "e", "e"], id="events only"),
        pytest.param(5, [2, "e", 7, "e"], id="a group over the bound between events"),
        pytest.param(2, [1, "e", 1], id="groups of one"),
    ],
)
def test_a_history_of_events_and_groups_holds_the_last_updates_in_order(
    bound: int, entries: list[Any]
) -> None:
    from kubetaint.store.watchhistory import WatchHistory

    history = WatchHistory(bound)
    every: list[WatchEvent] = []
    rv = 0
    for entry in entries:
        if entry == "e":
            rv += 1
            event = WatchEvent("MODIFIED", "leases", lease(f"e{rv}"), rv, lease(f"e{rv}"))
            history.append(event)
            every.append(event)
        else:
            group = group_of(entry)
            group.first_rv = rv + 1
            rv += entry
            history.add_group(group)
            every.extend(group.events())
    kept = every[max(0, len(every) - bound) :]
    assert len(history) == len(kept)
    assert described(list(history)) == described(kept)
    assert history.oldest_version() == kept[0].resource_version


def test_the_changes_of_a_field_write_read_as_the_changes_listed() -> None:
    group = group_of(3)
    listed = [
        ("MODIFIED", key, old, new) for key, old, new in zip(group.keys, group.olds, group.news, strict=True)
    ]
    assert len(Changes.of_field_write(group)) == 3
    assert Changes.of_field_write(group)[1] == listed[1]
    assert listed[2] in Changes.of_field_write(group)
    changes = Changes.of_field_write(group)
    assert changes.field_write is group and changes.only == "MODIFIED"
    assert list(changes) == listed and changes == listed and len(changes) == 3
    assert list(reversed(Changes.of_field_write(group))) == listed[::-1]
    assert [run for _, run in Changes.of_field_write(group).runs()] == [listed]
