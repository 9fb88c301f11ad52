"""The incremental monitorNodeHealth pass (MonitorWork in nodelifecycle/controller.py) gives
exactly what passes visiting every node give (reference mode): the same writes in the same order,
taints at the same instants, events, probe timestamps, zone states and queues, through lease
renewals, outages of single nodes, of a zone and of the whole cluster (full disruption and its
exit), recoveries, not-ready conditions, excluded nodes, deleted leases, nodes that heartbeat
through their status only, and nodes deleted and registered again."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.health import renew_text
from kubetaint.controllers.nodelifecycle.monitor_work import Settled, status_post_only
from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, node, pod
from .reference import in_reference_mode

JSON = dict[str, Any]
LEASES = "leases.coordination.k8s.io"
EXCLUDED = {"node.kubernetes.io/exclude-disruption": ""}
ZONE_A = ":\x00:a"


def _outage_run(reference: bool, offset: float) -> dict[str, Any]:
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
    with in_reference_mode(reference):
        controller = NodeLifecycleController(c.store, c.clock)
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


def _stopped_zone_run(reference: bool, offset: float, rate: float, recreate: bool = False) -> dict[str, Any]:
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
    with in_reference_mode(reference):
        controller = NodeLifecycleController(c.store, c.clock, NodeLifecycleSettings(node_eviction_rate=rate))
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
        "queued": {
            zone: sorted(q.queue.values) for zone, q in sorted(controller.zone_no_execute_tainter.items())
        },
    }


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(2.0, id="leases renewed between passes"),
        pytest.param(0.0, id="leases renewed at the instants of the passes"),
        pytest.param(7.5, id="leases renewed just before alternate passes"),
    ],
)
def test_passes_visiting_changed_nodes_match_passes_visiting_every_node(offset: float) -> None:
    incremental, reference = _outage_run(False, offset), _outage_run(True, offset)
    assert len(incremental["taints"]) >= 8, "the run taints and untaints nodes"
    for key in ("changes", "taints", "events", "healths", "zones", "retry"):
        assert incremental[key] == reference[key], key


@pytest.mark.parametrize(
    ("offset", "rate", "recreate"),
    [
        pytest.param(
            2.0, 0.1, False, id="a slow tainter leaves stopped nodes untainted and re-queued for long"
        ),
        pytest.param(0.0, 0.1, False, id="leases renewed at the instants of the passes with a slow tainter"),
        pytest.param(7.5, 1.0, False, id="a fast tainter taints the whole stopped zone within a few passes"),
        pytest.param(2.0, 0.05, False, id="a very slow tainter: the restarted nodes were never tainted"),
        pytest.param(2.0, 0.1, True, id="a settled node deleted and registered again"),
        pytest.param(0.0, 0.1, True, id="a node deleted at a pass instant and registered again"),
    ],
)
def test_stopped_nodes_are_tainted_and_untainted_exactly_as_when_every_node_is_visited(
    offset: float, rate: float, recreate: bool
) -> None:
    incremental = _stopped_zone_run(False, offset, rate, recreate)
    reference = _stopped_zone_run(True, offset, rate, recreate)
    assert any(change.startswith("+node.kubernetes.io/unreachable") for _, _, change in incremental["taints"])
    assert any(change.startswith("-node.kubernetes.io/unreachable") for _, _, change in incremental["taints"])
    for key in ("changes", "taints", "events", "healths", "zones", "retry", "nodes", "queued"):
        assert incremental[key] == reference[key], key


def test_healthy_nodes_settle_and_stopped_ones_are_visited_at_their_deadline() -> None:
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for i in range(4):
        kubelets.add_node(f"a-{i:02d}", zone="a")
    with in_reference_mode(False):
        controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    c.run_until(31)
    work = controller.work
    assert work is not None
    assert {name: s.kind for name, s in work.settled.items()} == dict.fromkeys(
        ["a-00", "a-01", "a-02", "a-03"], Settled.READY
    )
    assert work.to_visit() == [], "a pass between renewals visits no node"
    kubelets.stop("a-03")
    c.run_until(200)
    assert work.settled["a-03"].kind is Settled.TAINTED, "Unknown with the unreachable taint"
    assert work.zone_counts() == {ZONE_A: (3, 4)}


def test_reference_mode_keeps_no_settled_nodes() -> None:
    c = Cluster()
    Kubelets(c).add_node("a-00", zone="a")
    with in_reference_mode():
        controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    c.run_until(60)
    assert controller.work.settled == {} and controller.work.to_visit() == ["a-00"]


def _excluded_zone_run(reference: bool) -> dict[str, Any]:
    """Zone 0 has only nodes left out of disruption checks: its state is dropped after every pass
    (it comes first in zone order) and its tainting queue is made again at the next one."""
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for i in range(3):
        kubelets.add_node(f"a-{i:02d}", zone="a")
        kubelets.add_node(f"x-{i:02d}", zone="0", labels=EXCLUDED)
    with in_reference_mode(reference):
        controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    c.run_until(31)
    kubelets.stop("x-00", "x-01", "a-02")
    c.run_until(200)
    kubelets.restart("x-00")
    c.run_until(300)
    queued = {zone: sorted(q.queue.values) for zone, q in sorted(controller.zone_no_execute_tainter.items())}
    return {"changes": c.changes, "taints": c.taint_log, "events": c.event_log(), "queued": queued}


def test_a_zone_whose_queue_is_made_again_is_tainted_as_when_every_node_is_visited() -> None:
    incremental, reference = _excluded_zone_run(False), _excluded_zone_run(True)
    assert any("x-01" in str(entry) for entry in incremental["taints"])
    for key in ("changes", "taints", "events", "queued"):
        assert incremental[key] == reference[key], key


def _status_posts_run(reference: bool, offset: float, period: float) -> dict[str, Any]:
    """Kubelets renew their leases and post their Ready status every `period` seconds (a status
    post moves only the conditions' heartbeats), through node outages, a node going NotReady
    and back, and restarts."""
    c = Cluster()
    kubelets = Kubelets(c, offset=offset)
    for zone, count in (("a", 8), ("b", 5)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    for i in range(4):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    with in_reference_mode(reference):
        controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    visits = 0
    visit = controller._process_node

    def counted(*args: Any) -> None:
        nonlocal visits
        visits += 1
        visit(*args)

    controller._process_node = counted  # type: ignore[method-assign]
    not_ready: set[str] = set()

    def status_round() -> None:
        for name in sorted(kubelets.alive):
            kubelets.set_condition(name, "Ready", "False" if name in not_ready else "True")
        c.clock.call_later(period, status_round)

    c.clock.call_later(period, status_round)
    c.run_until(31)
    kubelets.stop("a-00", "a-01", "a-02", "a-03")
    c.run_until(97)
    not_ready.add("b-01")
    c.run_until(160)
    kubelets.restart("a-01", "a-02")
    c.run_until(205)
    not_ready.discard("b-01")
    c.run_until(400)
    healths = {
        name: (health.probe_timestamp, health.ready_transition_timestamp, renew_text(health.lease))
        for name, health in sorted(controller.health.healths.items())
    }
    return {
        "changes": c.changes,
        "taints": c.taint_log,
        "events": c.event_log(),
        "healths": healths,
        "zones": dict(controller.zone_states),
        "nodes": c.store.list("nodes").items,
        "visits": visits,
    }


@pytest.mark.parametrize(
    ("offset", "period"),
    [
        pytest.param(2.0, 13.0, id="posts between passes, leases renewed between passes"),
        pytest.param(0.0, 10.0, id="posts and renewals at the instants of the passes"),
        pytest.param(7.5, 3.0, id="posts more often than passes"),
        pytest.param(2.0, 60.0, id="posts every minute"),
    ],
)
def test_status_posts_on_settled_nodes_are_observed_as_a_visit_observes_them(
    offset: float, period: float
) -> None:
    incremental = _status_posts_run(False, offset, period)
    reference = _status_posts_run(True, offset, period)
    assert any(change.startswith("+node.kubernetes.io/unreachable") for _, _, change in incremental["taints"])
    for key in ("changes", "taints", "events", "healths", "zones", "nodes"):
        assert incremental[key] == reference[key], key
    assert incremental["visits"] < reference["visits"] / 4, (
        "settled nodes posting their status are not visited"
    )


_NODE: JSON = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "a", "resourceVersion": "1", "labels": {"x": "y"}},
    "spec": {},
    "status": {"capacity": {"cpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]},
}
_POSTED: JSON = {
    **_NODE,
    "metadata": {**_NODE["metadata"], "resourceVersion": "2"},
    "status": {**_NODE["status"], "conditions": [{"type": "Ready", "status": "False"}]},
}


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        pytest.param(_POSTED, True, id="conditions and resourceVersion changed"),
        pytest.param(
            {**_POSTED, "status": {**_POSTED["status"], "capacity": {"cpu": "1"}}},
            True,
            id="an equal copy of another status field",
        ),
        pytest.param(
            {**_POSTED, "status": {**_POSTED["status"], "capacity": {"cpu": "2"}}},
            False,
            id="another status field changed",
        ),
        pytest.param({**_POSTED, "spec": {"taints": []}}, False, id="the spec changed"),
        pytest.param(
            {**_POSTED, "metadata": {**_POSTED["metadata"], "labels": {}}}, False, id="the labels changed"
        ),
        pytest.param(
            {**_POSTED, "metadata": {**_POSTED["metadata"], "labels": None}}, False, id="the labels emptied"
        ),
        pytest.param({**_POSTED, "extra": None}, False, id="a field added"),
        pytest.param(
            {**_POSTED, "status": {"capacity": {"cpu": "1"}, "phase": "Running"}},
            False,
            id="the conditions gone and another status field in their place",
        ),
        pytest.param(
            {**_POSTED, "metadata": {"name": "a", "labels": {"x": "y"}, "uid": "u"}},
            False,
            id="the resourceVersion gone and another metadata field in its place",
        ),
    ],
)
def test_a_status_post_is_a_change_of_the_conditions_alone(new: JSON, expected: bool) -> None:
    assert status_post_only(_NODE, new) is expected
