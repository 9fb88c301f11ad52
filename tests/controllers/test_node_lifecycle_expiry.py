"""Resting nodes whose deadline came (kubetaint.controllers.nodelifecycle.expiry): the members of a
heartbeat group record seen by a pass are re-armed inline, and must leave exactly what re-arming
them node by node (`_settle_grouped`, then the new deadline) leaves: the same deadlines, buckets
(in order), heap, group records and members, noted renewals, health records and woken nodes,
whatever wakes, passes, other renewals, stale entries and missing health records come between."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import format_micro_time
from kubetaint.controllers.nodelifecycle import NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.health import NodeHealth, NodeHealthTracker
from kubetaint.controllers.nodelifecycle.resting import RestingNodes
from kubetaint.store.informer import Informer

from .builders import Cluster

GRACE = 25.0
NAMES = ["a", "b", "c", "d", "e"]
JSON = dict[str, Any]
Round = tuple[str, list[str], int | None]


def lease(name: str, renew: str | None) -> JSON:
    spec: JSON = {"holderIdentity": name, "leaseDurationSeconds": 40}
    if renew is not None:
        spec["renewTime"] = renew
    return {"metadata": {"name": name, "namespace": "kube-node-lease"}, "spec": spec}


class CountingRearms(RestingNodes):
    """Counts the members `_rearm_members` re-armed."""

    rearmed = 0

    def _rearm_members(self, deadline: float, names: list[str], *args: Any) -> list[str]:
        left = super()._rearm_members(deadline, names, *args)
        self.rearmed += len(names) - len(left)
        return left


#: one round: renew some nodes at one instant, pass, wake some nodes, lay one to rest again
ROUND = st.one_of(
    st.tuples(st.just("renew"), st.lists(st.sampled_from(NAMES), max_size=6), st.integers(0, 90)),
    st.tuples(st.just("pass"), st.just([]), st.none()),
    st.tuples(st.just("wake"), st.lists(st.sampled_from(NAMES), max_size=2), st.none()),
    st.tuples(st.just("rest"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=1), st.none()),
    st.tuples(st.just("forget"), st.lists(st.sampled_from(NAMES), min_size=1, max_size=1), st.none()),
)


@st.composite
def heartbeats(draw: st.DrawFn) -> list[Round]:
    """A heartbeat group renewing the same nodes in the same order, later each time."""
    names = draw(st.sampled_from([["a", "b", "c"], NAMES, ["b", "c", "e"], ["e", "a", "c", "d"]]))
    renew = draw(st.integers(0, 20))
    rounds: list[Round] = []
    for _ in range(draw(st.integers(1, 10))):
        rounds.append(("renew", names, renew))
        rounds.extend([("pass", [], None)] * draw(st.integers(0, 4)))
        renew += draw(st.sampled_from([10, 10, 10, 0, 3]))
    return rounds


ROUNDS = st.lists(st.one_of(ROUND.map(lambda r: [r]), heartbeats(), heartbeats()), max_size=8).map(
    lambda blocks: [r for block in blocks for r in block]
)


def _state(resting: RestingNodes, tracker: NodeHealthTracker) -> dict[str, Any]:
    """Everything wake_expired reads or writes, group records by their order of appearance."""
    records: dict[int, int] = {}

    def record_of(name: str) -> tuple[Any, ...]:
        record = resting.grouped[name]
        number = records.setdefault(id(record), len(records))
        mark = None if record.mark is None else record.mark.time
        return number, record.members, mark, record.newer, record.lease_of(name)["spec"].get("renewTime")

    return {
        "deadlines": list(resting.deadlines.items()),
        "due": [(at, list(names)) for at, names in resting._due.items()],
        "times": list(resting._times),
        "grouped": [(name, record_of(name)) for name in sorted(resting.grouped)],
        "renewals": sorted(
            (n, r[0]["spec"].get("renewTime"), r[1].time, r[2]) for n, r in resting.renewals.items()
        ),
        "healths": sorted(
            (n, h.probe_timestamp, None if h.lease is None else h.lease["spec"].get("renewTime"))
            for n, h in tracker.healths.items()
        ),
        "counts": (dict(resting.counts), dict(resting.unready_counts)),
    }


def _run(rounds: list[Round], inline: bool, group_at_least: int) -> Any:
    c = Cluster()
    tracker = NodeHealthTracker(
        c.store, c.clock, NodeLifecycleSettings(node_monitor_grace_period=GRACE), Informer(c.store, "leases")
    )
    first = format_micro_time(0.0)
    for name in NAMES:
        tracker.healths[name] = NodeHealth(0.0, 0.0, None, lease(name, first))
    resting = CountingRearms(tracker, group_at_least=group_at_least)
    resting.group_rearm = inline
    for name in NAMES:
        resting.rest(name, GRACE, "z" if name != "e" else None)
    field = resting.lease_field_handler()
    now = 0.0
    texts: dict[int, str] = {}
    keys: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    states = []
    for kind, names, value in rounds:
        if kind == "renew":
            assert value is not None
            text = texts.setdefault(value, format_micro_time(float(value)))
            olds, news = [lease(n, first) for n in names], [lease(n, text) for n in names]
            field(
                keys.setdefault(tuple(names), [("kube-node-lease", n) for n in names]),
                olds,
                news,
                ("spec", "renewTime"),
                text,
            )
        elif kind == "wake":
            for name in names:
                resting.wake(name)
        elif kind == "forget":  # a resting node without health record is woken, not re-armed
            tracker.healths.pop(names[0], None)
        elif kind == "rest":
            health = tracker.healths.get(names[0])
            if names[0] not in resting and health is not None:  # a visit lays it to rest again
                resting.rest(names[0], health.probe_timestamp + GRACE, "z")
        else:
            now += 5.0
            resting.begin_pass(now)
            resting.wake_changed_nodes()
            resting.wake_expired(now, GRACE)
        states.append((_state(resting, tracker), resting.take_woken()))
    return states, resting.rearmed


@settings(max_examples=300, deadline=None)
@given(ROUNDS, st.sampled_from([1, 2, 3]))
def test_group_members_re_armed_inline_leave_what_node_by_node_re_arming_leaves(
    rounds: list[Round], group_at_least: int
) -> None:
    inline, _ = _run(rounds, True, group_at_least)
    by_node, rearmed = _run(rounds, False, group_at_least)
    assert rearmed == 0
    for step, (got, want) in enumerate(zip(inline, by_node, strict=True)):
        assert got == want, (step, rounds[step])


def _heartbeat_rounds(count: int, names: list[str]) -> list[Round]:
    rounds: list[Round] = []
    for k in range(count):
        rounds.append(("renew", names, 10 * k + 2))
        rounds.extend([("pass", [], None)] * 2)
    return rounds


@pytest.mark.parametrize(
    ("forgotten", "rearmed"),
    [
        pytest.param(None, 5, id="a whole group comes due together: every member re-armed inline"),
        pytest.param("c", 2, id="a member without health record: it and the rest go node by node"),
        pytest.param("a", 0, id="the first member without health record: all go node by node"),
    ],
)
def test_a_group_coming_due_is_re_armed_inline(forgotten: str | None, rearmed: int) -> None:
    rounds = _heartbeat_rounds(3, NAMES)[:-1]  # renewals at 2, 12 and 22 s, passes to 25 s
    if forgotten is not None:
        rounds.append(("forget", [forgotten], None))
    rounds.append(("pass", [], None))  # at 30 s the deadlines of 25 s come due
    inline, count = _run(rounds, True, 1)
    by_node, _ = _run(rounds, False, 1)
    assert count == rearmed
    assert inline == by_node
    woken = inline[-1][1]
    assert woken == ([] if forgotten is None else [forgotten])


def test_a_group_that_stops_renewing_re_arms_once_then_wakes_node_by_node() -> None:
    rounds = _heartbeat_rounds(2, NAMES) + [("pass", [], None)] * 10  # renewals stop at 12 s
    inline, count = _run(rounds, True, 1)
    by_node, _ = _run(rounds, False, 1)
    assert count == 5, "at 30 s the renewal seen at 15 s re-arms the group to 40 s"
    assert inline == by_node
    assert inline[-1][0]["deadlines"] == [], "at 45 s every node woke (its settled record has no renewal)"
