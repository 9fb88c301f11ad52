"""A pass's re-queues of resting untainted Unknown nodes made zone by zone when the zone's queue is
used (kubetaint.controllers.nodelifecycle.node_loop `_requeue_cursor`): a controller doing so must
leave exactly what one making every zone's re-queues before each visit leaves: the same queues
(heap order, positions, set), taints at the same instants, writes, events and zone states, through
a zone outage tainted one node at a time while other zones' nodes post their status, a node of the
out zone coming back, a node moved into a new zone and one out of the out zone."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue
from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import Cluster, Kubelets

JSON = dict[str, Any]


class EagerRequeues(NodeLifecycleController):
    """Makes every zone's re-queues up to a visit before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_requeues = False


class CountingLazyPasses(NodeLifecycleController):
    """Counts the passes that re-queued lazily."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_passes = 0

    def _requeue_cursor(self, next_requeue: int) -> list[int] | None:
        cursor = super()._requeue_cursor(next_requeue)
        self.lazy_passes += cursor is not None
        return cursor


def _queues(queues: dict[str, RateLimitedTimedQueue]) -> list[Any]:
    return [
        (
            zone,
            [(v.value, v.uid, v.added_at, v.process_at) for v in q.queue.heap],
            sorted(q.queue.values),
            dict(q.queue._positions),
        )
        for zone, q in queues.items()
    ]


def _relabel(c: Cluster, name: str, **labels: str) -> None:
    current = c.node(name)
    meta = {**current["metadata"], "labels": {**current["metadata"]["labels"], **labels}}
    c.store.update("nodes", {**current, "metadata": meta})


def _outage_run(controller_class: type[NodeLifecycleController], offset: float) -> dict[str, Any]:
    c = Cluster()
    kubelets = Kubelets(c, offset=offset)
    zones = (("a", 14), ("b", 5), ("c", 4))
    for zone, count in zones:
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    controller = controller_class(c.store, c.clock)
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    snapshots: list[Any] = []

    def status_beat() -> None:
        if c.t <= 400:
            for name in ("b-00", "b-02", "b-04", "c-01", "c-03", "a-13"):
                if name in kubelets.alive:
                    kubelets.set_condition(name, "Ready", "True")
            snapshots.append((c.t, _queues(controller.tainters.queues)))
            c.clock.call_later(7, status_beat)

    c.clock.call_later(7, status_beat)
    c.run_until(20)
    kubelets.stop(*[f"a-{i:02d}" for i in range(13)])  # a-13 stays: zone a is partly out
    c.run_until(110)
    kubelets.restart("a-05")  # visited mid-loop: its queue is used between re-queues
    c.run_until(150)
    _relabel(c, "b-03", **{"topology.kubernetes.io/zone": "d"})  # a new zone and its queue
    c.run_until(190)
    _relabel(c, "a-09", **{"topology.kubernetes.io/zone": "c"})  # out of the out zone
    c.run_until(420)
    return {
        "queues": _queues(controller.tainters.queues),
        "snapshots": snapshots,
        "changes": c.changes,
        "taints": c.taint_log,
        "events": c.event_log(),
        "zones": dict(controller.zone_states),
        "lazy": getattr(controller, "lazy_passes", None),
    }


@pytest.mark.parametrize(
    "offset",
    [
        pytest.param(2.0, id="leases renewed between passes"),
        pytest.param(0.0, id="leases renewed at the instants of the passes"),
    ],
)
def test_re_queues_made_zone_by_zone_leave_what_re_queues_before_each_visit_leave(offset: float) -> None:
    lazy, eager = _outage_run(CountingLazyPasses, offset), _outage_run(EagerRequeues, offset)
    assert lazy["lazy"] >= 20, "the outage's passes re-queue lazily"
    assert len(lazy["taints"]) >= 8, "the out zone is tainted one node at a time"
    for key in ("queues", "snapshots", "changes", "taints", "events", "zones"):
        assert lazy[key] == eager[key], key


def test_the_hook_is_gone_after_each_pass() -> None:
    c = Cluster()
    kubelets = Kubelets(c)
    for i in range(4):
        kubelets.add_node(f"a-{i:02d}", zone="a")
    kubelets.add_node("b-00", zone="b")
    controller = CountingLazyPasses(c.store, c.clock)
    controller.start()
    c.run_until(10)
    kubelets.stop("a-00", "a-01", "a-02")
    c.run_until(120)
    assert controller.lazy_passes > 0
    assert controller.tainters.before_use is None
