"""Repeated vouched field writes (store.fieldwrite.RepeatedRounds): a round rewriting exactly the
objects a recent round wrote (a heartbeat group renewing its leases again) takes that round's key
and object lists as its own keys and old objects. Nothing observable may change: the same
results, stored objects, watch events (old and new objects, resourceVersions) and history
replays as the plain updates of `with_field` copies, whatever touches, deletes, creates and
other compositions come between the rounds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.store.changes import ChangeBatch, each_event
from kubetaint.store.fieldwrite import FieldWriteGroup, RepeatedRounds, with_field
from kubetaint.store.interface import JSON, StoreOptions, WatchEvent, update_many
from kubetaint.store.memory import MemoryStore

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")
NAMES = "abcde"


def memory_store(history: int) -> MemoryStore:
    counter = iter(range(100_000))
    return MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=history), uid_factory=lambda: f"uid-{next(counter)}"
    )


def lease(name: str, renew: str = "t0") -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def seen(events: list[WatchEvent]) -> list[tuple[Any, ...]]:
    return [(e.type, e.resource_version, dumps(e.object), dumps(e.old_object)) for e in events]


#: ("renew", names) the named leases, as last written, renewed in one write; ("again",) the last
#: renewal's objects renewed again (the list it returned, or an equal new list of them);
#: ("touch", name), ("delete", name), ("create", name)
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("renew"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True)),
        st.tuples(st.just("again"), st.booleans()),
        st.tuples(st.just("again"), st.booleans()),
        st.tuples(st.sampled_from(["touch", "delete", "create"]), st.sampled_from(NAMES)),
    ),
    max_size=20,
)


def drive(steps: list[tuple[Any, ...]], history: int, vouched_writes: bool) -> tuple[Any, ...]:
    """The steps against a store: vouched field writes (`update_field_many_if_current` with the
    writer's vouched objects, falling back to `update_field_many`) or plain updates of copies."""
    store = memory_store(history)
    log: list[Any] = []
    store.subscribe(each_event(lambda event: log.append(seen([event])[0])), LEASES)
    known = {name: store.create(LEASES, lease(name)) for name in NAMES[:4]}
    vouched: dict[tuple[str, str], JSON] = {(NS, name): obj for name, obj in known.items()}
    outcomes: list[Any] = []
    last: list[JSON] = []
    for number, step in enumerate(steps):
        verb, value = step[0], f"t{number + 1}"
        if verb in ("renew", "again"):
            if verb == "renew":
                objects = [known[n] for n in step[1] if n in known]
            else:
                objects = last if step[1] else list(last)
            if not objects:
                continue
            if vouched_writes:
                result = store.update_field_many_if_current(LEASES, objects, RENEW, value, vouched=vouched)
                if result is None:
                    result = store.update_field_many(LEASES, objects, RENEW, value)
                written, err = result
            else:
                written, err = update_many(store, LEASES, [with_field(o, RENEW, value) for o in objects])
            last = written
            for obj in written:
                known[obj["metadata"]["name"]] = obj
            outcomes.append((dumps(written), None if err is None else err.message))
        elif verb == "touch" and step[1] in known:
            changed = with_field(known[step[1]], ("spec", "holderIdentity"), value)
            known[step[1]] = vouched[NS, step[1]] = store.update(LEASES, changed)
        elif verb == "delete" and step[1] in known:
            store.delete(LEASES, NS, step[1])
            del known[step[1]]
        elif verb == "create" and step[1] not in known:
            known[step[1]] = vouched[NS, step[1]] = store.create(LEASES, lease(step[1], value))
    replays: list[Any] = []
    for since in range(0, store.current_resource_version() + 2):
        try:
            replays.append(seen(store.watch(LEASES, resource_version=str(since)).drain()))
        except StatusError as expired:
            replays.append([expired.code, expired.message])
    final = dumps(sorted(store.list(LEASES).items, key=dumps))
    return outcomes, log, replays, final


@settings(max_examples=200, deadline=None)
@given(STEPS, st.sampled_from([0, 3, 1000]))
def test_repeated_vouched_rounds_store_and_tell_what_plain_updates_do(
    steps: list[tuple[Any, ...]], history: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RepeatedRounds, "AT_LEAST", 1)
        assert drive(steps, history, vouched_writes=True) == drive(steps, history, vouched_writes=False)


def rounds_of(count: int, size: int = 20) -> list[FieldWriteGroup]:
    """The field-write groups of `count` vouched rounds renewing the same `size` leases."""
    store = memory_store(1 << 16)
    groups: list[FieldWriteGroup] = []
    store.subscribe(each_event(lambda event: None), LEASES)
    dispatcher = store._dispatcher
    publish = dispatcher.publish

    def keep(batch: ChangeBatch) -> None:
        if batch.field_write is not None:
            groups.append(batch.field_write)
        publish(batch)

    dispatcher.publish = keep  # type: ignore[method-assign]
    objects = [store.create(LEASES, lease(f"n{i:02d}")) for i in range(size)]
    vouched = {(NS, o["metadata"]["name"]): o for o in objects}
    for number in range(count):
        result = store.update_field_many_if_current(LEASES, objects, RENEW, f"r{number}", vouched=vouched)
        assert result is not None
        objects = result[0]
    return groups


@pytest.mark.usefixtures("default_mode")
def test_a_round_rewriting_the_last_rounds_objects_takes_its_lists() -> None:
    first, second, third = rounds_of(3)
    assert second.olds is first.news and second.keys is first.keys
    assert third.olds is second.news and third.keys is first.keys


def test_small_rounds_are_not_remembered() -> None:
    first, second = rounds_of(2, size=RepeatedRounds.AT_LEAST - 1)
    assert second.olds is not first.news
    assert second.olds == first.news


@pytest.mark.usefixtures("default_mode")
def test_a_round_of_other_objects_with_the_same_first_is_not_taken() -> None:
    rounds = RepeatedRounds()
    news = [{"n": i} for i in range(RepeatedRounds.AT_LEAST)]
    keys = [(NS, str(i)) for i in range(len(news))]
    rounds.remember(keys, news)
    assert rounds.take([news[0], {"n": "other"}, *news[2:]]) is None
    assert rounds.take(news[:-1]) is None
    assert rounds.take(list(news)) == (keys, news)
    assert rounds.take(list(news)) is None  # taken: forgotten


@pytest.mark.usefixtures("default_mode")
def test_at_most_a_few_rounds_are_remembered() -> None:
    rounds = RepeatedRounds()
    lists = [[{"n": (k, i)} for i in range(RepeatedRounds.AT_LEAST)] for k in range(RepeatedRounds.KEEP + 3)]
    for news in lists:
        rounds.remember([(NS, "x")] * len(news), news)
    assert rounds.take(lists[0]) is None  # the oldest were dropped
    assert rounds.take(lists[-1]) is not None
