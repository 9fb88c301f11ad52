"""Resting not-Ready nodes and lazily applied lease renewals
(kubetaint.controllers.nodelifecycle.resting).

A not-Ready node that already carries the NoExecute taint its status calls for, and whose name is
still in its zone queue's set, rests: its visits would only count it and retry a no-op Add. A
resting Ready node's lease renewals are noted and applied when its old deadline fires. Both must
give exactly what passes visiting every node give: the same writes in the same order (with the same
resourceVersions), taints at the same instants, events, probe timestamps and zone states."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.health import NodeHealth, NodeHealthTracker, renewed_after
from kubetaint.controllers.nodelifecycle.resting import RestingNodes
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.store.informer import Informer

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, lease, pod

JSON = dict[str, Any]
LEASES = "leases.coordination.k8s.io"
ZONE_A = ":\x00:a"


class VisitingEveryNode(NodeLifecycleController):
    """Looks at every node on every pass."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resting_enabled = False


def _stopped_zone_run(
    controller_class: type[NodeLifecycleController], offset: float, rate: float, recreate: bool = False
) -> dict[str, Any]:
    """Zone a (12 nodes) stops and is tainted at `rate` nodes/s; some of its nodes come back,
    tainted ones and not yet tainted ones; a node of zone b goes NotReady and back; with
    `recreate`, a healthy node of zone c is deleted and registered again."""
    c = Cluster()
    kubelets = Kubelets(c, offset=offset)
    for zone, count in (("a", 12), ("b", 8), ("c", 4)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    for i in range(4):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    controller = controller_class(c.store, c.clock, NodeLifecycleSettings(node_eviction_rate=rate))
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    c.run_until(31)
    kubelets.stop(*(f"a-{i:02d}" for i in range(12)))
    c.run_until(97)
    kubelets.set_condition("b-01", "Ready", "False")
    if recreate:
        c.run_until(123)
        kubelets.stop("c-03")
        c.delete_node("c-03")
        c.run_until(141)
        c.store.delete(LEASES, "kube-node-lease", "c-03")
        kubelets.add_node("c-03", zone="c")
    c.run_until(160)
    kubelets.restart("a-00", "a-01", "a-10", "a-11")  # tainted early / maybe not yet tainted
    c.run_until(205)
    kubelets.set_condition("b-01", "Ready", "True")
    kubelets.stop("b-02")
    c.run_until(290)
    kubelets.restart("a-05")
    c.run_until(400)
    controller.resting.settle_renewals()
    healths = {
        name: (health.probe_timestamp, health.ready_transition_timestamp)
        for name, health in sorted(controller.health.healths.items())
    }
    return {
        "changes": c.changes,
        "taints": c.taint_log,
        "events": c.event_log(),
        "healths": healths,
        "zones": dict(controller.zone_states),
        "retry": sorted(controller.nodes_to_retry),
        "nodes": c.store.list("nodes").items,
        "queued": {zone: sorted(q.queue.values) for zone, q in sorted(controller.zone_tainters.items())},
    }


@pytest.mark.parametrize(
    ("offset", "rate", "recreate"),
    [
        pytest.param(
            2.0, 0.1, False, id="a slow tainter leaves stopped nodes untainted and re-queued for long"
        ),
        pytest.param(0.0, 0.1, False, id="leases renewed at the instants of the passes with a slow tainter"),
        pytest.param(7.5, 1.0, False, id="a fast tainter taints the whole stopped zone within a few passes"),
        pytest.param(2.0, 0.05, False, id="a very slow tainter: the restarted nodes were never tainted"),
        pytest.param(2.0, 0.1, True, id="a resting node deleted and registered again"),
        pytest.param(0.0, 0.1, True, id="a node deleted at a pass instant and registered again"),
    ],
)
def test_resting_stopped_nodes_are_tainted_and_untainted_exactly_as_when_visited(
    offset: float, rate: float, recreate: bool
) -> None:
    resting = _stopped_zone_run(NodeLifecycleController, offset, rate, recreate)
    visiting = _stopped_zone_run(VisitingEveryNode, offset, rate, recreate)
    assert any(change.startswith("+node.kubernetes.io/unreachable") for _, _, change in resting["taints"])
    assert any(change.startswith("-node.kubernetes.io/unreachable") for _, _, change in resting["taints"])
    for key in ("changes", "taints", "events", "healths", "zones", "retry", "nodes", "queued"):
        assert resting[key] == visiting[key], key


def _stopped_zone(rate: float) -> tuple[Cluster, Kubelets, NodeLifecycleController]:
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for zone, count in (("a", 6), ("b", 6)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    controller = NodeLifecycleController(c.store, c.clock, NodeLifecycleSettings(node_eviction_rate=rate))
    controller.start()
    c.run_until(31)
    kubelets.stop(*(f"a-{i:02d}" for i in range(6)))
    return c, kubelets, controller


def test_a_tainted_unknown_node_rests_without_deadline_and_counts_as_not_ready() -> None:
    c, _, controller = _stopped_zone(rate=1.0)
    c.run_until(150)
    tainted = [name for _, name in c.no_execute_added()]
    assert sorted(tainted) == [f"a-{i:02d}" for i in range(6)]
    for name in tainted:
        assert controller.resting.deadlines[name] == (math.inf, ZONE_A, False)
    assert controller.resting.unready_counts == {ZONE_A: 6}
    assert controller.zone_states[ZONE_A] == "FullDisruption"


def test_an_untainted_unknown_node_rests_and_each_pass_requeues_it() -> None:
    c, _, controller = _stopped_zone(rate=0.02)  # one taint per 50 s
    c.run_until(130)
    tainted = {name for _, name in c.no_execute_added()}
    untainted = {f"a-{i:02d}" for i in range(6)} - tainted
    assert tainted and untainted
    queue = controller.zone_tainters[ZONE_A].queue
    for name in untainted:
        assert controller.resting.deadlines[name] == (math.inf, ZONE_A, False), name
        assert controller.resting.requeues[name][0] == ZONE_A
        # re-queued by the last pass (130 s after the start), as its visit would have
        assert queue.heap[queue._positions[name]].added_at == round(c.at(130) * 1e9)
    for name in tainted:
        assert controller.resting.deadlines[name][2] is False and name not in controller.resting.requeues


def test_a_restarted_tainted_node_wakes_and_is_untainted_at_the_next_pass() -> None:
    c, kubelets, controller = _stopped_zone(rate=1.0)
    c.run_until(150)
    kubelets.restart("a-03")  # at 150: Ready posted, lease renewed
    c.run_until(160)
    removed = [t for t, change in c.taints_of("a-03", "NoExecute") if change.startswith("-")]
    # the pass grid runs from the start in 5 s steps: 150 is a pass instant and the restart came
    # after that pass, so the next pass (155) removes the taint
    assert removed == [155.0]
    assert controller.resting.deadlines["a-03"][2] is True, "Ready again, resting as such"


# lazily applied renewals ------------------------------------------------------------------------

GRACE = 25.0
STEP = st.one_of(
    st.tuples(st.just("renew"), st.one_of(st.none(), st.integers(0, 120).map(float))),
    st.tuples(st.just("pass"), st.none()),
    st.tuples(st.just("wake"), st.none()),
)


def _tracker(c: Cluster) -> NodeHealthTracker:
    settings_ = NodeLifecycleSettings(node_monitor_grace_period=GRACE)
    return NodeHealthTracker(c.store, c.clock, settings_, Informer(c.store, LEASES))


def _lease(renew: float | None) -> JSON:
    result = lease("n", renew or 0.0)
    if renew is None:
        del result["spec"]["renewTime"]
    return result


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, max_size=40))
def test_noted_renewals_give_the_probe_times_and_leases_of_observing_at_every_pass(
    steps: list[tuple[str, float | None]],
) -> None:
    c = Cluster()
    eager, lazy = _tracker(c), _tracker(c)
    first = _lease(0.0)
    for tracker in (eager, lazy):
        tracker.healths["n"] = NodeHealth(0.0, 0.0, None, first)
    resting = RestingNodes(lazy)
    resting.rest("n", GRACE, "z")
    current, now, woken_by_change = first, 0.0, False
    for kind, value in steps:
        if kind == "renew":
            current = _lease(value)
            resting.lease_updated("n", current)
        elif kind == "wake":
            was_resting = "n" in resting
            resting.wake("n")  # its node object changed
            woken_by_change = woken_by_change or was_resting
        else:
            now += 5.0
            eager.observe_lease("n", current, now)
            expired = now > eager.healths["n"].probe_timestamp + GRACE
            was_resting = "n" in resting
            resting.begin_pass(now)
            resting.wake_expired(now, GRACE)
            if "n" in resting:
                assert not expired, "a resting node is within its grace period"
            else:
                assert expired or woken_by_change or not was_resting, "woken only when expired"
                lazy.observe_lease("n", current, now)  # the visit
                if not now > lazy.healths["n"].probe_timestamp + GRACE:
                    resting.rest("n", lazy.healths["n"].probe_timestamp + GRACE, "z")
            woken_by_change = False
    resting.settle_renewals()
    assert lazy.healths["n"].probe_timestamp == eager.healths["n"].probe_timestamp
    assert lazy.healths["n"].lease is eager.healths["n"].lease


@pytest.mark.parametrize(
    ("renewals", "probe", "saved"),
    [
        pytest.param([10.0], 5.0, 10.0, id="one renewal is seen by the next pass"),
        pytest.param([10.0, 20.0], 5.0, 20.0, id="two renewals before one pass: the later one counts"),
        pytest.param([-1.0], 0.0, 0.0, id="an earlier renewTime is not a renewal"),
        pytest.param([20.0, 10.0], 5.0, 10.0, id="a pass sees only the lease of its instant"),
    ],
)
def test_renewals_noted_before_one_pass_are_observed_at_that_pass(
    renewals: list[float], probe: float, saved: float
) -> None:
    c = Cluster()
    tracker = _tracker(c)
    tracker.healths["n"] = NodeHealth(0.0, 0.0, None, _lease(0.0))
    resting = RestingNodes(tracker)
    resting.rest("n", GRACE, "z")
    for renew in renewals:
        resting.lease_updated("n", _lease(renew))
    resting.begin_pass(5.0)
    resting.settle_renewals()
    health = tracker.healths["n"]
    assert health.probe_timestamp == probe
    assert (
        health.lease is not None and health.lease["spec"]["renewTime"] == _lease(saved)["spec"]["renewTime"]
    )


def test_a_renewal_its_pass_has_not_seen_yet_is_left_waiting() -> None:
    c = Cluster()
    tracker = _tracker(c)
    tracker.healths["n"] = NodeHealth(0.0, 0.0, None, _lease(0.0))
    resting = RestingNodes(tracker)
    resting.rest("n", GRACE, "z")
    resting.lease_updated("n", _lease(10.0))
    resting.settle_renewals()
    assert tracker.healths["n"].probe_timestamp == 0.0 and "n" in resting.renewals
    resting.wake("n")  # woken before that pass: the visit will see the lease itself
    assert tracker.healths["n"].probe_timestamp == 0.0 and not resting.renewals


@pytest.mark.parametrize(
    ("ready", "event", "woken"),
    [
        pytest.param(True, "update", False, id="a renewal of a resting Ready node is only noted"),
        pytest.param(False, "update", True, id="any lease update wakes a resting not-Ready node"),
        pytest.param(True, "delete", True, id="a deleted lease wakes a resting Ready node"),
    ],
)
def test_lease_events_wake_or_are_noted(ready: bool, event: str, woken: bool) -> None:
    c = Cluster()
    tracker = _tracker(c)
    tracker.healths["n"] = NodeHealth(0.0, 0.0, None, _lease(0.0))
    resting = RestingNodes(tracker)
    resting.rest("n", GRACE if ready else math.inf, "z", ready)
    if event == "update":
        resting.lease_updated("n", _lease(10.0))
    else:
        resting.lease_changed.add("n")
    resting.begin_pass(5.0)
    resting.wake_changed_nodes()
    resting.wake_expired(5.0, GRACE)
    assert ("n" not in resting) == woken


def test_zone_counts_add_resting_ready_and_not_ready_nodes() -> None:
    r = RestingNodes()
    r.rest("a", 50.0, "z")
    r.rest("b", math.inf, "z", False)
    r.rest("c", math.inf, "y", False)
    r.rest("d", math.inf, None, False)  # excluded from disruption checks
    assert r.zone_counts() == {"z": (1, 2), "y": (0, 1)}
    r.rest("b", 60.0, "z")  # Ready again
    assert r.zone_counts() == {"z": (2, 2), "y": (0, 1)}
    r.wake_expired(1e9, GRACE)
    assert sorted(r.deadlines) == ["c", "d"], "a node without deadline never expires"


def _deleted_and_restored_run(controller_class: type[NodeLifecycleController], offset: float) -> JSON:
    """A stopped node is deleted with its lease while a renewal of it waits to be applied, then
    restored with the very same status: its probe time is the one the passes before the deletion
    left, so it goes Unknown at the same instant."""
    c = Cluster()
    kubelets = Kubelets(c, offset=offset)
    for i in range(4):
        kubelets.add_node(f"a-{i:02d}", zone="a")
    controller = controller_class(c.store, c.clock)
    controller.start()
    c.run_until(33)  # after the renewal at 32 (offset 2) or 30 (offset 0)
    kubelets.stop("a-01")
    saved = c.node("a-01")
    c.delete_node("a-01")
    c.store.delete(LEASES, "kube-node-lease", "a-01")
    c.run_until(43)
    meta = {k: v for k, v in saved["metadata"].items() if k not in ("resourceVersion", "uid")}
    c.create("nodes", {**saved, "metadata": meta})
    c.run_until(150)
    return {"changes": c.changes, "nodes": c.store.list("nodes").items, "events": c.event_log()}


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(2.0, id="the renewal before the deletion is noted for the next pass"),
        pytest.param(0.0, id="the renewal before the deletion came at a pass instant"),
    ],
)
def test_a_deleted_node_drops_the_renewals_no_pass_saw(offset: float) -> None:
    resting = _deleted_and_restored_run(NodeLifecycleController, offset)
    visiting = _deleted_and_restored_run(VisitingEveryNode, offset)
    assert resting == visiting


def _queue_history(controller_class: type[NodeLifecycleController], restarted: list[str]) -> list[Any]:
    """The zone a queue (heap order, times, set) one second after every pass, while its stopped
    nodes wait to be tainted at 0.01 nodes/s and the `restarted` ones come back and stop again."""
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for i in range(10):
        kubelets.add_node(f"a-{i:02d}", zone="a")
    for i in range(10):
        kubelets.add_node(f"b-{i:02d}", zone="b")
    controller = controller_class(c.store, c.clock, NodeLifecycleSettings(node_eviction_rate=0.01))
    controller.start()
    history: list[Any] = []
    for second in range(1, 400, 5):
        if second == 31:
            kubelets.stop(*(f"a-{i:02d}" for i in range(10)))
        if second == 156:
            kubelets.restart(*restarted)
        if second == 221:
            kubelets.stop(*restarted)
        c.run_until(second)
        queue = controller.zone_tainters.get(ZONE_A)
        if queue is not None:
            heap = [(v.value, v.added_at, v.process_at) for v in queue.queue.heap]
            history.append((second, heap, sorted(queue.queue.values)))
    return history


@pytest.mark.parametrize(
    "restarted",
    [
        pytest.param(["a-05"], id="a node in the middle of the name order leaves the queue and comes back"),
        pytest.param(["a-00", "a-09"], id="the first and the last name leave the queue and come back"),
        pytest.param(["a-02", "a-03", "a-07"], id="several nodes between re-queued ones leave and come back"),
    ],
)
def test_re_queued_resting_nodes_keep_the_heap_order_of_visits_in_name_order(restarted: list[str]) -> None:
    resting = _queue_history(NodeLifecycleController, restarted)
    visiting = _queue_history(VisitingEveryNode, restarted)
    assert any(len(entry[1]) > 3 for entry in resting)
    assert resting == visiting


ACTIONS = st.lists(
    st.tuples(
        st.integers(1, 40),  # seconds after the previous action
        st.sampled_from(["stop", "restart", "not-ready", "ready", "drop-lease"]),
        st.integers(0, 7),  # node
    ),
    min_size=1,
    max_size=12,
)


def _random_run(controller_class: type[NodeLifecycleController], actions: list[tuple[int, str, int]]) -> Any:
    c = Cluster()
    kubelets = Kubelets(c, offset=3.0)
    names = [f"{'ab'[i % 2]}-{i:02d}" for i in range(8)]
    for i, name in enumerate(names):
        kubelets.add_node(name, zone="ab"[i % 2])
    controller = controller_class(c.store, c.clock, NodeLifecycleSettings(node_eviction_rate=0.05))
    controller.start()
    t = 20.0
    for delay, action, index in actions:
        t += delay
        c.run_until(t)
        name = names[index]
        if action == "stop":
            kubelets.stop(name)
        elif action == "restart":
            if c.get(LEASES, name, "kube-node-lease") is None:
                c.create(LEASES, lease(name, c.clock.now()))  # the kubelet creates it again
            kubelets.restart(name)
        elif action in ("not-ready", "ready"):
            kubelets.set_condition(name, "Ready", "False" if action == "not-ready" else "True")
        elif c.get(LEASES, name, "kube-node-lease") is not None:
            kubelets.stop(name)
            c.store.delete(LEASES, "kube-node-lease", name)
    c.run_until(t + 200)
    controller.resting.settle_renewals()
    healths = {n: (h.probe_timestamp, h.lease) for n, h in sorted(controller.health.healths.items())}
    return (c.changes, c.taint_log, c.event_log(), healths, dict(controller.zone_states))


@settings(max_examples=25, deadline=None)
@given(ACTIONS)
def test_resting_matches_visiting_every_node_through_random_outages(
    actions: list[tuple[int, str, int]],
) -> None:
    assert _random_run(NodeLifecycleController, actions) == _random_run(VisitingEveryNode, actions)


@pytest.mark.parametrize(
    "actions",
    [
        pytest.param(
            [(1, "not-ready", 0), (2, "stop", 0)],
            id="a status change and a renewal before one pass: the visit itself observes the renewal",
        ),
        pytest.param(
            [(13, "drop-lease", 0)],
            id="a renewal and then the lease deleted before the pass that would have seen the renewal",
        ),
        pytest.param(
            [(13, "drop-lease", 0), (30, "restart", 0)],
            id="a deleted lease created again by the restarted kubelet",
        ),
        pytest.param(
            [(3, "stop", 1), (2, "stop", 3), (60, "restart", 1), (1, "not-ready", 3)],
            id="two nodes of a zone stop, one comes back and the other reports NotReady",
        ),
    ],
)
def test_resting_matches_visiting_every_node_in_these_outages(actions: list[tuple[int, str, int]]) -> None:
    assert _random_run(NodeLifecycleController, actions) == _random_run(VisitingEveryNode, actions)


@pytest.mark.parametrize(
    ("newer", "older", "expected"),
    [
        pytest.param(
            "2026-01-01T00:00:01.000000Z", "2026-01-01T00:00:00.999999Z", True, id="a microsecond later"
        ),
        pytest.param("2026-01-01T00:00:01.000000Z", "2026-01-01T00:00:01.000000Z", False, id="the same time"),
        pytest.param(
            "2025-12-31T23:59:59.000000Z", "2026-01-01T00:00:00.000000Z", False, id="an earlier time"
        ),
        pytest.param("2026-01-01T00:00:01.000000Z", None, False, id="no saved renewTime"),
        pytest.param(None, "2026-01-01T00:00:01.000000Z", False, id="no observed renewTime"),
        pytest.param(
            "2026-01-01T00:00:01Z", "2026-01-01T00:00:00.500000Z", True, id="whole seconds against micro"
        ),
        pytest.param(
            "2026-01-01T00:00:01Z", "2026-01-01T00:00:01.000000Z", False, id="one instant written two ways"
        ),
        pytest.param(
            "2026-01-01T01:00:00.500000+01:00",
            "2026-01-01T00:00:00.400000Z",
            True,
            id="an offset time is compared as a time, not as text",
        ),
        pytest.param(
            "2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.400000Z", True, id="shorter fractions are parsed"
        ),
    ],
)
def test_renew_times_compare_as_times(newer: str | None, older: str | None, expected: bool) -> None:
    assert renewed_after(newer, older) is expected
