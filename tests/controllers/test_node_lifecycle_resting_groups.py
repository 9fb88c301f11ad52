"""RestingNodes' group lease handlers (an informer's on_update_many for a batch of renewals, and its
on_field_updates for a field-write group of them) note exactly what its per-update handler notes
when given the same renewals one by one: the same noted renewals, the same health records after
every pass, the same nodes to wake. That holds too when a heartbeat group's renewals are noted as
one record (`.grouped_renewals`), whatever wakes, passes and other renewals come between."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import format_micro_time
from kubetaint.controllers.nodelifecycle import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.health import NodeHealth, NodeHealthTracker
from kubetaint.controllers.nodelifecycle.resting import RestingNodes
from kubetaint.store.informer import Informer

from .builders import Cluster

GRACE = 25.0
NAMES = ["a", "b", "c", "d"]
JSON = dict[str, Any]


def lease(name: str, renew: str | None) -> JSON:
    spec: JSON = {"holderIdentity": name, "leaseDurationSeconds": 40}
    if renew is not None:
        spec["renewTime"] = renew
    return {"metadata": {"name": name, "namespace": "kube-node-lease"}, "spec": spec}


#: a round renews some nodes at one instant (one shared text, as a pool's batch), or a pass
ROUND = st.one_of(
    st.tuples(
        st.just("renew"),
        st.lists(st.sampled_from([*NAMES, "unknown"]), max_size=6),
        st.one_of(st.none(), st.integers(0, 60)),
    ),
    st.tuples(st.just("pass"), st.just([]), st.none()),
    st.tuples(st.just("wake"), st.lists(st.sampled_from(NAMES), max_size=2), st.none()),
)
#: a heartbeat group renews the same nodes in the same order, later each time, passes between


@st.composite
def heartbeats(draw: st.DrawFn) -> list[tuple[str, list[str], int | None]]:
    names = draw(st.sampled_from([["a", "b", "c"], ["a", "b", "c", "d"], ["b", "c"]]))
    renew = draw(st.integers(0, 20))
    rounds: list[tuple[str, list[str], int | None]] = []
    for _ in range(draw(st.integers(1, 8))):
        rounds.append(("renew", names, renew))
        rounds.extend([("pass", [], None)] * draw(st.integers(0, 3)))
        renew += draw(st.sampled_from([10, 10, 10, 0, 3]))
    return rounds


ROUNDS = st.lists(st.one_of(ROUND.map(lambda r: [r]), heartbeats(), heartbeats()), max_size=8).map(
    lambda blocks: [r for block in blocks for r in block]
)


class AskedTracker(NodeHealthTracker):
    """A tracker of another class: RestingNodes asks its would_observe instead of inlining it."""


def other_step(resting: RestingNodes, kind: str, names: list[str], now: float) -> float:
    """A round that is not a renewal: wake the named nodes, or begin the next pass 5 s later
    (waking what it wakes); the time after the round."""
    if kind == "wake":
        for name in names:
            resting.wake(name)
        return now
    now += 5.0
    resting.begin_pass(now)
    resting.wake_changed_nodes()
    resting.wake_expired(now, GRACE)
    return now


def run(
    rounds: list[tuple[str, list[str], int | None]],
    grouped: str,
    tracker_class: type[NodeHealthTracker] = NodeHealthTracker,
    unsaved: tuple[str, ...] = (),
    group_at_least: int = 16,
) -> tuple[Any, ...]:
    """`grouped`: "one" (on_update each), "many" (on_update_many) or "field" (on_field_updates;
    "field, keys kept": with the same keys list each time the same names are renewed);
    `unsaved`: nodes whose health record holds no lease yet; `group_at_least`: the smallest field
    group noted as one record."""
    c = Cluster()
    tracker = tracker_class(
        c.store, c.clock, NodeLifecycleSettings(node_monitor_grace_period=GRACE), Informer(c.store, "leases")
    )
    first = format_micro_time(0.0)
    for name in NAMES:
        tracker.healths[name] = NodeHealth(0.0, 0.0, None, None if name in unsaved else lease(name, first))
    resting = RestingNodes(tracker, group_at_least=group_at_least)
    for name in NAMES:
        resting.rest(name, GRACE, "z", ready=name != "d")
    one, many, field = resting.lease_handler(), resting.lease_group_handler(), resting.lease_field_handler()
    now = 0.0
    texts: dict[int, str] = {}  # one text object per instant, as micro_time's cache gives
    kept_keys: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for kind, names, value in rounds:
        if kind == "renew":
            text = None if value is None else texts.setdefault(value, format_micro_time(float(value)))
            pairs = [(lease(n, first), lease(n, text)) for n in names]
            if grouped == "many":
                many(pairs)
            elif grouped in ("field", "field, keys kept"):
                keys = [("kube-node-lease", n) for n in names]
                if grouped == "field, keys kept":  # one list per group, as an informer's run hands it
                    keys = kept_keys.setdefault(tuple(names), keys)
                field(keys, [old for old, _ in pairs], [new for _, new in pairs], ("spec", "renewTime"), text)
            else:
                for old, new in pairs:
                    one(old, new)
        else:
            now = other_step(resting, kind, names, now)
    noted = {
        n: (lease["spec"].get("renewTime"), mark.time, newer)
        for n, (lease, mark, newer) in resting.noted_renewals().items()
    }
    resting.settle_renewals()
    healths = {
        n: (h.probe_timestamp, (h.lease or {}).get("spec", {}).get("renewTime"))
        for n, h in tracker.healths.items()
    }
    return noted, healths, sorted(resting.lease_changed), sorted(resting.deadlines), resting.take_woken()


@settings(max_examples=150, deadline=None)
@given(st.lists(ROUND, max_size=30))
def test_a_group_of_renewals_is_noted_as_the_same_renewals_one_by_one(
    rounds: list[tuple[str, list[str], int | None]],
) -> None:
    assert run(rounds, grouped="many") == run(rounds, grouped="one")


@settings(max_examples=150, deadline=None)
@given(st.lists(ROUND, max_size=30))
def test_a_field_write_group_of_renewals_is_noted_as_the_same_renewals_one_by_one(
    rounds: list[tuple[str, list[str], int | None]],
) -> None:
    assert run(rounds, grouped="field") == run(rounds, grouped="one")


@settings(max_examples=300, deadline=None)
@given(ROUNDS, st.sampled_from([1, 2, 3]))
def test_a_heartbeat_group_noted_as_one_record_is_noted_as_its_renewals_one_by_one(
    rounds: list[tuple[str, list[str], int | None]], group_at_least: int
) -> None:
    assert run(rounds, grouped="field", group_at_least=group_at_least) == run(rounds, grouped="one")


@settings(max_examples=300, deadline=None)
@given(ROUNDS, st.sampled_from([1, 2, 3]))
def test_a_heartbeat_group_handed_the_same_keys_list_each_round_is_noted_as_its_renewals_one_by_one(
    rounds: list[tuple[str, list[str], int | None]], group_at_least: int
) -> None:
    kept = run(rounds, grouped="field, keys kept", group_at_least=group_at_least)
    assert kept == run(rounds, grouped="one")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(ROUND, max_size=30),
    st.sampled_from(["one", "many", "field"]),
    st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
)
def test_renewals_are_noted_alike_whether_the_tracker_is_asked_or_inlined(
    rounds: list[tuple[str, list[str], int | None]], grouped: str, unsaved: list[str]
) -> None:
    inlined = run(rounds, grouped, NodeHealthTracker, tuple(unsaved))
    assert inlined == run(rounds, grouped, AskedTracker, tuple(unsaved))


def test_a_field_group_of_another_field_is_noted_from_its_leases() -> None:
    c = Cluster()
    tracker = NodeHealthTracker(
        c.store, c.clock, NodeLifecycleSettings(node_monitor_grace_period=GRACE), Informer(c.store, "leases")
    )
    tracker.healths["a"] = NodeHealth(0.0, 0.0, None, lease("a", format_micro_time(0.0)))
    resting = RestingNodes(tracker)
    resting.rest("a", GRACE, "z")
    renewed = lease("a", format_micro_time(9.0))
    # the group says it set holderIdentity: the renewTime noted is the lease's own
    resting.lease_field_handler()(
        [("kube-node-lease", "a")], [lease("a", None)], [renewed], ("spec", "holderIdentity"), "a"
    )
    assert resting.renewals["a"][0] is renewed and resting.renewals["a"][2] == format_micro_time(9.0)


@settings(max_examples=150, deadline=None)
@given(st.lists(ROUND, max_size=30), st.sampled_from(["one", "field"]))
def test_a_noted_renewal_that_leaves_the_renewals_is_never_changed_again(
    rounds: list[tuple[str, list[str], int | None]], grouped: str
) -> None:
    # a re-noted renewal updates its record in place: a record settled, dropped or replaced must
    # keep what it held when it left (wake and settle read it after taking it out)
    c = Cluster()
    tracker = NodeHealthTracker(
        c.store, c.clock, NodeLifecycleSettings(node_monitor_grace_period=GRACE), Informer(c.store, "leases")
    )
    first = format_micro_time(0.0)
    for name in NAMES:
        tracker.healths[name] = NodeHealth(0.0, 0.0, None, lease(name, first))
    resting = RestingNodes(tracker)
    for name in NAMES:
        resting.rest(name, GRACE, "z")
    one, field = resting.lease_handler(), resting.lease_field_handler()
    left: list[tuple[list[Any], list[Any]]] = []  # (record, its contents after the round it left)
    now = 0.0
    for kind, names, value in rounds:
        before = dict(resting.renewals)
        if kind == "renew":
            text = None if value is None else format_micro_time(float(value))
            news = [lease(n, text) for n in names]
            if grouped == "field":
                field([("kube-node-lease", n) for n in names], news, news, ("spec", "renewTime"), text)
            else:
                for new in news:
                    one(None, new)
        else:
            now = other_step(resting, kind, names, now)
        for name, record in before.items():
            if resting.renewals.get(name) is not record:
                left.append((record, list(record)))
    for record, contents in left:
        assert record == contents
