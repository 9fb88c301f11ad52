"""Resting nodes (kubetaint.controllers.nodelifecycle.resting): monitorNodeHealth passes that leave
idle nodes out give exactly what passes visiting every node give: the same writes, taints, events,
probe timestamps and zone states, through lease renewals, outages of single nodes, of a zone and of
the whole cluster (full disruption and its exit), recoveries, not-ready conditions, excluded nodes,
deleted leases and nodes that heartbeat through their status only."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.nodelifecycle.resting import RestingNodes
from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, node, pod

JSON = dict[str, Any]
LEASES = "leases.coordination.k8s.io"
EXCLUDED = {"node.kubernetes.io/exclude-disruption": ""}


class VisitingEveryNode(NodeLifecycleController):
    """Looks at every node on every pass."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resting_enabled = False


def _outage_run(controller_class: type[NodeLifecycleController], offset: float) -> dict[str, Any]:
    c = Cluster()
    kubelets = Kubelets(c, offset=offset)
    for zone, count in (("a", 10), ("b", 6), ("c", 3)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    kubelets.add_node("x-00", zone="a", labels=EXCLUDED)
    c.create("nodes", node("s-00", zone="b"))  # heartbeats through its status only
    kubelets.set_condition("s-00", "Ready", "True")
    for i in range(6):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    controller = controller_class(c.store, c.clock)
    controller.start()
    TaintEvictionController(c.store, c.clock).start()

    def status_beat() -> None:
        if c.t <= 400:
            kubelets.set_condition("s-00", "Ready", "True")
            c.clock.call_later(7, status_beat)

    c.clock.call_later(7, status_beat)
    c.run_until(31)
    kubelets.stop("a-00", "a-01", "a-02", "x-00")
    kubelets.set_condition("b-01", "Ready", "False")
    c.run_until(97)
    kubelets.stop("c-00", "c-01", "c-02")  # zone c fully disrupted
    kubelets.stop("b-02")
    c.store.delete(LEASES, "kube-node-lease", "b-02")  # its lease goes too
    c.run_until(240)
    kubelets.restart("a-00", "c-01")
    kubelets.set_condition("b-01", "Ready", "True")
    c.run_until(420)
    everyone = [
        n["metadata"]["name"] for n in c.store.list("nodes").items if n["metadata"]["name"] in kubelets.alive
    ]
    kubelets.stop(*everyone)  # the whole cluster: master disruption mode
    c.run_until(600)
    kubelets.restart("b-03", "b-04")  # leaves master disruption mode
    c.run_until(900)
    controller.resting.settle_renewals()  # renewals seen by past passes, applied lazily
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
    }


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(2.0, id="leases renewed between passes"),
        pytest.param(0.0, id="leases renewed at the instants of the passes"),
        pytest.param(7.5, id="leases renewed just before alternate passes"),
    ],
)
def test_passes_leaving_idle_nodes_out_match_passes_visiting_every_node(offset: float) -> None:
    resting, visiting = _outage_run(NodeLifecycleController, offset), _outage_run(VisitingEveryNode, offset)
    assert len(resting["taints"]) >= 8, "the run taints and untaints nodes"
    for key in ("changes", "taints", "events", "healths", "zones", "retry"):
        assert resting[key] == visiting[key], key


def test_healthy_nodes_rest_between_lease_renewals_and_stopped_ones_wake_at_their_deadline() -> None:
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for i in range(4):
        kubelets.add_node(f"a-{i:02d}", zone="a")
    controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    c.run_until(31)
    assert sorted(controller.resting.deadlines) == ["a-00", "a-01", "a-02", "a-03"]
    assert controller.resting.counts == {":\x00:a": 4}
    kubelets.stop("a-03")
    c.run_until(46)
    assert "a-03" in controller.resting, "within its grace period a stopped node still rests"
    controller.resting.settle_renewals()
    probe = controller.health.healths["a-03"].probe_timestamp
    # the deadline moves lazily: it may still be the one before the last renewal
    assert controller.resting.deadlines["a-03"][0] <= probe + controller.settings.node_monitor_grace_period
    c.run_until(probe - c.clock.start + controller.settings.node_monitor_grace_period + 5)
    ready = controller.resting.deadlines.get("a-03", (0.0, None, False))[2]
    assert not ready, "woken (and Unknown) once its grace period ran out"
    assert controller.resting.counts == {":\x00:a": 3}


def test_a_controller_with_resting_disabled_keeps_no_resting_nodes() -> None:
    c = Cluster()
    kubelets = Kubelets(c)
    kubelets.add_node("a-00", zone="a")
    controller = VisitingEveryNode(c.store, c.clock)
    controller.start()
    c.run_until(60)
    assert len(controller.resting) == 0


# RestingNodes bookkeeping ------------------------------------------------------------------------


def test_resting_counts_follow_rest_and_wake() -> None:
    r = RestingNodes()
    r.rest("n1", 50.0, "z")
    r.rest("n2", 55.0, "z")
    r.rest("n3", 55.0, None)  # excluded from disruption checks: not counted
    assert r.counts == {"z": 2} and len(r) == 3
    r.rest("n1", 60.0, "y")  # re-rest moves it
    assert r.counts == {"z": 1, "y": 1}
    r.wake("n2")
    r.wake("n2")  # waking twice changes nothing
    assert r.counts == {"y": 1} and "n2" not in r


@pytest.mark.parametrize(
    ("now", "still_resting"),
    [
        pytest.param(50.0, ["a", "b", "c"], id="a deadline equal to now is still within the grace period"),
        pytest.param(50.5, ["b", "c"], id="a deadline before now wakes its node"),
        pytest.param(70.0, ["c"], id="every passed deadline wakes, stale heap entries are ignored"),
    ],
)
def test_expired_deadlines_wake_their_nodes(now: float, still_resting: list[str]) -> None:
    r = RestingNodes()
    r.rest("a", 50.0, "z")
    r.rest("b", 40.0, "z")
    r.rest("b", 60.0, "z")  # renewed: the entry at 40 is stale
    r.rest("c", 80.0, None)
    r.wake_expired(now, 40.0)
    assert sorted(r.deadlines) == still_resting


def test_signals_wake_nodes_whose_object_or_lease_was_added_or_deleted() -> None:
    r = RestingNodes()
    r.rest("a", 50.0, "z")
    r.rest("b", 50.0, "z")
    r.rest("c", 50.0, "z")
    r.node_changed.update({"a", "gone"})
    r.lease_changed.update({"b", "awake"})
    r.wake_changed_nodes()
    assert sorted(r.deadlines) == ["c"] and not r.node_changed and not r.lease_changed
    assert sorted(r.take_woken()) == ["a", "b"] and r.take_woken() == []
    r.clear()
    assert len(r) == 0 and r.counts == {} and r.take_woken() == ["c"]
