"""An informer's field-write runs (store.fieldruns): when field-write groups rewrite the same objects
round after round (a heartbeat group's lease renewals), their newest objects stand for their keys
instead of being stored in the cache each round. Nothing an informer's user sees may change: the
same handler calls with the same objects, and the same answers from get, items, keyed_items, keys
and len, whatever plain updates, deletes, creates, other groups and late handlers come between."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubetaint.store.fieldruns import FieldRuns

from kubetaint.clock import VirtualClock
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, StoreOptions
from kubetaint.store.memory import MemoryStore

LEASES = "leases.coordination.k8s.io"
NS = "kube-node-lease"
RENEW = ("spec", "renewTime")
NAMES = "abcde"


def lease(name: str, renew: str = "t0") -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": renew},
    }


class Watched:
    """An informer over a store with two handler sets logging what they are told."""

    def __init__(self, store: MemoryStore, runs_at_least: int | None, namespace: str = NS) -> None:
        self.informer = Informer(store, LEASES, namespace=namespace)
        if runs_at_least is None:
            self.informer._runs.at_least = 1 << 30  # never a run: the plain cache
        else:
            self.informer._runs.at_least = runs_at_least
        self.log: list[Any] = []
        self.informer.add_handlers(self.plain_handlers("plain"))
        self.informer.add_handlers(
            EventHandlers(
                on_add=lambda o: self.log.append(("field-add", dumps(o))),
                on_field_updates=lambda keys, olds, news, path, value: self.log.append(
                    ("field", list(keys), dumps(olds), dumps(news), path, value)
                ),
            )
        )
        self.informer.start()

    def plain_handlers(self, tag: str) -> EventHandlers:
        log = self.log
        return EventHandlers(
            on_add=lambda o: log.append((tag, "add", dumps(o))),
            on_update=lambda o, n: log.append((tag, "update", dumps(o), dumps(n))),
            on_delete=lambda o: log.append((tag, "delete", dumps(o))),
        )

    def reads(self) -> tuple[Any, ...]:
        informer = self.informer
        gets = {name: dumps(informer.get(NS, name)) for name in NAMES}
        return (
            gets,
            len(informer),
            sorted(informer.keys()),
            dumps(list(informer.items())),
            dumps(informer.keyed_items()),
        )


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def memory_store() -> MemoryStore:
    counter = iter(range(100_000))
    return MemoryStore(
        VirtualClock(), options=StoreOptions(history_size=50), uid_factory=lambda: f"uid-{next(counter)}"
    )


#: ("renew", names): the leases, as last written, renewed in one field write; ("again",): the last
#: renewal's names renewed again; ("touch", name) a plain update; ("delete", name); ("create",
#: name); ("touch many", names) plain updates told as one group; ("late",) a handler set added late (a
#: replay); ("read",) every read compared
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("renew"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True)),
        st.just(("again",)),
        st.just(("again",)),
        st.just(("again",)),
        st.tuples(st.sampled_from(["touch", "delete", "create"]), st.sampled_from(NAMES)),
        st.tuples(
            st.just("touch many"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)
        ),
        st.just(("late",)),
        st.just(("read",)),
    ),
    max_size=25,
)


def drive(steps: list[tuple[Any, ...]], runs_at_least: int | None) -> tuple[Any, ...]:
    """Run `steps` against a store watched by an informer; what the informer's user saw."""
    store = memory_store()
    known = {name: store.create(LEASES, lease(name)) for name in NAMES[:4]}
    watched = Watched(store, runs_at_least)
    reads: list[Any] = []
    last: list[str] = []
    for number, step in enumerate(steps):
        verb = step[0]
        if verb in ("renew", "again"):
            names = step[1] if verb == "renew" else last
            last = names
            objects = [known[n] for n in names if n in known]
            if objects:
                written, err = store.update_field_many(LEASES, objects, RENEW, f"t{number + 1}")
                assert err is None
                known.update((obj["metadata"]["name"], obj) for obj in written)
        elif verb == "touch" and step[1] in known:
            current = known[step[1]]
            changed = {**current, "spec": {**current["spec"], "holderIdentity": f"h{number}"}}
            known[step[1]] = store.update(LEASES, changed)
        elif verb == "touch many":
            batch = [
                {**known[n], "spec": {**known[n]["spec"], "holderIdentity": f"m{number}"}}
                for n in step[1]
                if n in known
            ]
            written, err = store.update_group(LEASES, batch)  # told as one group (deliver_many)
            assert err is None
            known.update((obj["metadata"]["name"], obj) for obj in written)
        elif verb == "delete" and step[1] in known:
            store.delete(LEASES, NS, step[1])
            del known[step[1]]
        elif verb == "create" and step[1] not in known:
            known[step[1]] = store.create(LEASES, lease(step[1], f"t{number}"))
        elif verb == "late":
            watched.informer.add_handlers(watched.plain_handlers(f"late{number}"))
        elif verb == "read":
            reads.append(watched.reads())
    return watched.log, reads, watched.reads()


@settings(max_examples=300, deadline=None)
@given(STEPS, st.sampled_from([1, 2, 3]))
def test_an_informer_with_field_runs_shows_what_its_plain_cache_shows(
    steps: list[tuple[Any, ...]], at_least: int
) -> None:
    assert drive(steps, at_least) == drive(steps, None)


# the runs' own bookkeeping ---------------------------------------------------------------------


def renewed_rounds(rounds: int, names: str = "abcd") -> tuple[MemoryStore, Watched, dict[str, JSON]]:
    store = memory_store()
    known = {name: store.create(LEASES, lease(name)) for name in names}
    watched = Watched(store, runs_at_least=2)
    for number in range(rounds):
        written, _ = store.update_field_many(LEASES, list(known.values()), RENEW, f"r{number}")
        known = {obj["metadata"]["name"]: obj for obj in written}
    return store, watched, known


@pytest.mark.parametrize(
    ("rounds", "in_a_run"),
    [
        pytest.param(1, False, id="one round is followed into the cache: no group to compare it with"),
        pytest.param(2, True, id="a second round rewriting the first's objects starts a run"),
        pytest.param(5, True, id="later rounds of the same objects keep the run"),
    ],
)
def test_a_run_starts_when_a_group_rewrites_the_objects_of_the_one_before(
    rounds: int, in_a_run: bool
) -> None:
    _, watched, known = renewed_rounds(rounds)
    runs = watched.informer._runs
    assert bool(runs) is in_a_run
    for name, obj in known.items():
        assert watched.informer.get(NS, name) is obj  # the newest object, run or not


def test_the_cache_behind_a_run_is_older_until_a_read_of_everything_settles_it() -> None:
    _, watched, known = renewed_rounds(4)
    informer = watched.informer
    behind = informer._cache[(NS, "a")]
    assert behind is not known["a"] and behind["spec"]["renewTime"] != "r3"
    assert [o["spec"]["renewTime"] for o in informer.items()] == ["r3"] * 4
    assert not informer._runs
    assert informer._cache[(NS, "a")] is known["a"]


@pytest.mark.parametrize(
    "interruption",
    [
        pytest.param("touch", id="a plain update of a run's object settles the runs"),
        pytest.param("subset", id="a group of only some of a run's objects settles the runs"),
        pytest.param("delete", id="a delete of a run's object settles the runs"),
    ],
)
def test_anything_else_about_a_runs_keys_settles_it_first(interruption: str) -> None:
    store, watched, known = renewed_rounds(3)
    informer = watched.informer
    assert informer._runs
    if interruption == "touch":
        changed = {**known["b"], "spec": {**known["b"]["spec"], "holderIdentity": "x"}}
        known["b"] = store.update(LEASES, changed)
    elif interruption == "subset":
        written, _ = store.update_field_many(LEASES, [known["b"], known["c"]], RENEW, "s")
        known.update(b=written[0], c=written[1])
    else:
        store.delete(LEASES, NS, "b")
        del known["b"]
    assert not informer._runs
    assert {k[1]: v for k, v in informer._cache.items()} == known


def test_runs_of_disjoint_groups_keep_each_other() -> None:
    store = memory_store()
    first = [store.create(LEASES, lease(n)) for n in "ab"]
    second = [store.create(LEASES, lease(n)) for n in "cd"]
    watched = Watched(store, runs_at_least=2)
    for number in range(4):
        first, _ = store.update_field_many(LEASES, first, RENEW, f"x{number}")
        second, _ = store.update_field_many(LEASES, second, RENEW, f"y{number}")
    runs = watched.informer._runs
    assert len(runs._by_first) == 2
    assert [watched.informer.get(NS, n) for n in "abcd"] == first + second


def test_small_groups_never_start_a_run() -> None:
    cache: dict[tuple[str, str], JSON] = {}
    runs = FieldRuns(cache, at_least=3)
    olds = [lease("a"), lease("b")]
    news = [lease("a", "t1"), lease("b", "t1")]
    assert not runs.start([(NS, "a"), (NS, "b")], olds, news)
    assert not runs.start([(NS, "a"), (NS, "b")], news, [lease("a", "t2"), lease("b", "t2")])
    assert not runs


def test_the_candidates_for_a_run_are_bounded() -> None:
    runs = FieldRuns({}, at_least=1)
    for number in range(FieldRuns.CANDIDATES + 5):
        runs.start([(NS, str(number))], [lease(str(number))], [lease(str(number), "t1")])
    assert len(runs._candidates) == FieldRuns.CANDIDATES
