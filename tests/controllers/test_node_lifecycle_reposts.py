"""A Ready node's status post (kubetaint.controllers.nodelifecycle.node_loop `_reposted` and
NodeHealthTracker.try_update_reposted): the visit of a quiet, Ready, untainted node whose new
object keeps its spec, labels and uid, with Ready still True under a new heartbeat, refreshes its
health record and quiet record without the general tryUpdateNodeHealth. It must leave exactly what
the full update leaves (health records, quiet records, zone counts, queues, writes, taints, events),
and must not apply to any other visit."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock.base import format_time
from kubetaint.controllers.nodelifecycle import NodeLifecycleController, NodeLifecycleSettings
from kubetaint.controllers.nodelifecycle.health import NodeHealth, NodeHealthTracker
from kubetaint.controllers.tainteviction import TaintEvictionController
from kubetaint.store.informer import Informer

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, condition, lease, node, pod, taint

JSON = dict[str, Any]
LEASES = "leases.coordination.k8s.io"
EXCLUDED = {"node.kubernetes.io/exclude-disruption": ""}


class FullUpdates(NodeLifecycleController):
    """Takes the general update for every status post."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reposts_enabled = False


class CountingReposts(NodeLifecycleController):
    """Counts the visits `_reposted` took."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reposts = 0

    def _reposted(self, *args: Any) -> bool:
        taken = super()._reposted(*args)
        self.reposts += taken
        return taken


def _relabel(c: Cluster, name: str, **labels: str) -> None:
    current = c.node(name)
    meta = {**current["metadata"], "labels": {**current["metadata"]["labels"], **labels}}
    c.store.update("nodes", {**current, "metadata": meta})


def _post_run(controller_class: type[NodeLifecycleController], resting: bool) -> dict[str, Any]:
    """Nodes posting their status every 7 s through outages, not-ready spells, relabels, taints
    and a lost lease; everything a controller leaves behind."""
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    for zone, count in (("a", 6), ("b", 5)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    kubelets.add_node("x-00", zone="a", labels=EXCLUDED)
    c.create("nodes", node("s-00", zone="b"))  # heartbeats through its status only, no lease
    kubelets.set_condition("s-00", "Ready", "True")
    for i in range(4):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    controller = controller_class(c.store, c.clock)
    controller.resting_enabled = resting
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    posting = ["a-00", "a-01", "a-03", "a-04", "b-00", "b-02", "b-03", "x-00", "s-00"]

    def status_beat() -> None:
        if c.t <= 500:
            for name in posting:
                if name in kubelets.alive or name in ("s-00", "b-03"):
                    kubelets.set_condition(name, "Ready", "True")
            c.clock.call_later(7, status_beat)

    c.clock.call_later(7, status_beat)
    c.run_until(40)
    kubelets.set_condition("b-00", "Ready", "False")  # not Ready: its next posts are no reposts
    _relabel(c, "a-03", team="red")  # a label change is a full update
    c.set_node_taints("b-02", [taint("example.com/maintenance", effect="NoSchedule")])
    c.run_until(90)
    kubelets.stop("a-00", "a-01")  # Unknown past the grace period, then tainted
    kubelets.stop("b-03")
    c.store.delete(LEASES, "kube-node-lease", "b-03")  # posts without a lease from now on
    c.run_until(200)
    kubelets.restart("a-00")  # Ready again: untainted by a full update
    _relabel(c, "a-04", **{"topology.kubernetes.io/zone": "b"})  # moves zone
    c.run_until(330)
    kubelets.set_condition("b-00", "Ready", "True")
    c.set_node_taints("b-02", [])
    c.run_until(600)
    controller.resting.settle_renewals()
    healths = {
        name: (h.probe_timestamp, h.ready_transition_timestamp, h.status, h.lease)
        for name, h in sorted(controller.health.healths.items())
    }
    quiet = {
        name: (
            q.node["metadata"]["resourceVersion"],
            q.lease,
            q.ready,
            q.status,
            q.zone,
            q.counted,
            q.no_execute_taints,
            q.wanted_taint,
            q.uid,
        )
        for name, q in sorted(controller._quiet.items())
    }
    return {
        "changes": c.changes,
        "taints": c.taint_log,
        "events": c.event_log(),
        "healths": healths,
        "quiet": quiet,
        "zones": dict(controller.zone_states),
        "retry": sorted(controller.nodes_to_retry),
        "queues": {zone: sorted(q.queue.values) for zone, q in controller.tainters.queues.items()},
        "reposts": getattr(controller, "reposts", None),
    }


@pytest.mark.parametrize(
    "resting",
    [
        pytest.param(True, id="with resting nodes"),
        pytest.param(False, id="visiting every node on every pass"),
    ],
)
def test_status_posts_taking_the_short_update_leave_what_full_updates_leave(resting: bool) -> None:
    short, full = _post_run(CountingReposts, resting), _post_run(FullUpdates, resting)
    assert short["reposts"] >= 100, "the run's status posts take the short update"
    assert len(short["taints"]) >= 4, "the run taints and untaints nodes"
    for key in ("changes", "taints", "events", "healths", "quiet", "zones", "retry", "queues"):
        assert short[key] == full[key], key


# NodeHealthTracker.try_update_reposted against try_update ----------------------------------------

GRACE = 40.0
NOW = 100.0


def _tracker(c: Cluster, grace: float = GRACE) -> NodeHealthTracker:
    settings_ = NodeLifecycleSettings(node_monitor_grace_period=grace)
    informer = Informer(c.store, LEASES)
    informer.start()
    return NodeHealthTracker(c.store, c.clock, settings_, informer)


def _status(ready: str | None, heartbeat: float, transition: float) -> JSON:
    conditions = [condition("MemoryPressure", "False", format_time(heartbeat), format_time(0.0))]
    if ready is not None:
        conditions.append(condition("Ready", ready, format_time(heartbeat), format_time(transition)))
    return {"conditions": conditions}


def _saved_lease(saved: float | None) -> JSON | None:
    return None if saved is None else lease("n", saved)


CASES = [
    pytest.param(None, 80.0, 70.0, id="a new heartbeat, the lease renewed since the saved one"),
    pytest.param(None, 80.0, 80.0, id="a new heartbeat, the lease not renewed: the record starts without"),
    pytest.param(None, 80.0, None, id="a new heartbeat, no lease saved before"),
    pytest.param(None, None, 70.0, id="a new heartbeat, the node has no lease"),
    pytest.param(95.0, 80.0, 70.0, id="a new heartbeat and a new transition time"),
]


@pytest.mark.parametrize(("transition", "renewed", "saved"), CASES)
def test_a_reposted_ready_node_gets_the_health_record_of_try_update(
    transition: float | None, renewed: float | None, saved: float | None
) -> None:
    c = Cluster()
    c.run_until(NOW)
    if renewed is not None:
        c.create(LEASES, lease("n", renewed))
    general, short = _tracker(c), _tracker(c)
    old_status = _status("True", 50.0, 10.0)
    for tracker in (general, short):
        tracker.healths["n"] = NodeHealth(50.0, 10.0, old_status, _saved_lease(saved))
    posted = node("n", conditions=_status("True", 99.0, transition or 10.0)["conditions"])
    posted["metadata"]["uid"] = "uid-n"
    current_lease = c.get(LEASES, "n", "kube-node-lease")
    result = general.try_update(posted)
    ready = short.try_update_reposted("n", posted["status"], current_lease, c.clock.now())
    assert not result.wrote
    assert ready is result.current_ready
    want, got = general.healths["n"], short.healths["n"]
    assert (got.probe_timestamp, got.ready_transition_timestamp) == (
        want.probe_timestamp,
        want.ready_transition_timestamp,
    )
    assert got.status == want.status and got.status is not posted["status"]
    assert got.lease is want.lease


def _not_reposted(c: Cluster, tracker: NodeHealthTracker, status: object, health: bool = True) -> None:
    record = NodeHealth(50.0, 10.0, _status("True", 50.0, 10.0), None)
    if health:
        tracker.healths["n"] = record
    assert tracker.try_update_reposted("n", status, None, c.clock.now()) is None
    assert tracker.healths.get("n") is (record if health else None), "nothing is changed"


@pytest.mark.parametrize(
    "status",
    [
        pytest.param(_status("False", 99.0, 99.0), id="Ready turned False"),
        pytest.param(_status("Unknown", 99.0, 99.0), id="Ready turned Unknown"),
        pytest.param(_status(None, 99.0, 99.0), id="no Ready condition"),
        pytest.param(_status("True", 50.0, 10.0), id="the same heartbeat as the saved status"),
        pytest.param(None, id="no status"),
    ],
)
def test_other_statuses_are_not_reposts(status: object) -> None:
    c = Cluster()
    c.run_until(NOW)
    _not_reposted(c, _tracker(c), status)


def test_a_node_without_health_record_is_not_a_repost() -> None:
    c = Cluster()
    c.run_until(NOW)
    _not_reposted(c, _tracker(c), _status("True", 99.0, 10.0), health=False)


def test_a_negative_grace_period_would_write_so_it_is_not_a_repost() -> None:
    c = Cluster()
    c.run_until(NOW)
    _not_reposted(c, _tracker(c, grace=-1.0), _status("True", 99.0, 10.0))


# NodeLoop._reposted: where it must not apply ------------------------------------------------------


def _settled_controller() -> tuple[Cluster, Kubelets, CountingReposts]:
    c = Cluster()
    kubelets = Kubelets(c, offset=2.0)
    kubelets.add_node("a-00", zone="a")
    kubelets.add_node("a-01", zone="a")
    controller = CountingReposts(c.store, c.clock)
    controller.start()
    c.run_until(12)
    assert set(controller._quiet) == {"a-00", "a-01"}
    return c, kubelets, controller


def test_a_plain_status_post_is_a_repost() -> None:
    c, kubelets, controller = _settled_controller()
    kubelets.set_condition("a-00", "Ready", "True")
    c.run_until(17)
    assert controller.reposts == 1
    assert controller._quiet["a-00"].node is controller.nodes.get("", "a-00")


@pytest.mark.parametrize(
    ("change", "later"),
    [
        pytest.param(lambda c, k: _relabel(c, "a-00", team="red"), 1, id="a label changed"),
        pytest.param(
            lambda c, k: c.set_node_taints("a-00", [taint("example.com/x", effect="NoSchedule")]),
            1,
            id="the spec changed",
        ),
        pytest.param(lambda c, k: k.set_condition("a-00", "Ready", "False"), 0, id="Ready turned False"),
        pytest.param(
            lambda c, k: k.set_condition("a-00", "DiskPressure", "True"), 1, id="a pressure condition"
        ),
    ],
)
def test_other_node_changes_take_the_full_update(change: Any, later: int) -> None:
    """The change itself is no repost; the plain post after it is one again when the full update
    left the node quiet, Ready and untainted (not after Ready turned False: not quiet Ready)."""
    c, kubelets, controller = _settled_controller()
    change(c, kubelets)
    c.run_until(17)
    assert controller.reposts == 0
    kubelets.set_condition("a-00", "Ready", "True")
    c.run_until(22)
    assert controller.reposts == later


def test_a_node_to_retry_takes_the_full_update() -> None:
    c, kubelets, controller = _settled_controller()
    controller.nodes_to_retry.add("a-00")
    kubelets.set_condition("a-00", "Ready", "True")
    c.run_until(17)
    assert controller.reposts == 0
    assert "a-00" not in controller.nodes_to_retry, "the full update discarded it"
