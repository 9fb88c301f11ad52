"""The node lifecycle pass keeps its node list from informer events and classifies only nodes that
changed; these runs check it against a controller that reads the whole informer on every pass
(classifyNodes as upstream writes it), through node additions, deletions, zone relabels and
outages, and that the remembered taint facts of quiet unhealthy nodes re-queue them as
markNodeForTainting does."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.nodelifecycle.zones import get_zone_key
from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, pod

JSON = dict[str, Any]
ZONE_LABEL = "topology.kubernetes.io/zone"


class ScanningLifecycle(NodeLifecycleController):
    """Lists every node from the informer and classifies all of them on every pass."""

    def _named_nodes(self) -> list[tuple[str, JSON]]:
        named = [(str(n["metadata"]["name"]), n) for n in self.nodes.items()]
        return sorted(named, key=lambda pair: pair[0])

    def _classify_nodes(self, named: list[tuple[str, JSON]]) -> tuple[list[JSON], list[JSON], list[JSON]]:
        known, states = self.known_nodes, self.zone_states
        present = {name for name, _ in named}
        added = [n for name, n in named if name not in known]
        new_zone = [n for name, n in named if name in known and get_zone_key(n) not in states]
        deleted = [n for name, n in sorted(known.items()) if name not in present]
        return added, deleted, new_zone


def _relabel(c: Cluster, name: str, zone: str) -> None:
    node = c.node(name)
    labels = {**node["metadata"].get("labels", {}), ZONE_LABEL: zone}
    c.store.update("nodes", {**node, "metadata": {**node["metadata"], "labels": labels}})


def membership_run(
    controller_class: type[NodeLifecycleController],
) -> tuple[Cluster, NodeLifecycleController]:
    c = Cluster()
    kubelets = Kubelets(c)
    for zone, count in (("a", 12), ("b", 4)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    for i in range(4):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    controller = controller_class(c.store, c.clock)
    controller.start()
    TaintEvictionController(c.store, c.clock).start()
    c.run_until(17)
    kubelets.add_node("a-50", zone="a")  # joins between passes
    kubelets.add_node("n-00", zone="new")  # a zone nobody had
    c.run_until(33)
    kubelets.stop(*[f"a-{i:02d}" for i in range(8)])
    _relabel(c, "b-03", "c")  # a known node moves to a zone without state
    c.run_until(121)
    c.delete_node("a-07")
    kubelets.stop("a-07")
    _relabel(c, "b-02", "c")
    c.run_until(300)
    kubelets.restart("a-00", "a-01")
    c.delete_node("n-00")  # the zone's last node goes: the zone state is dropped
    kubelets.stop("n-00")
    c.run_until(420)
    kubelets.add_node("n-01", zone="new")  # the dropped zone comes back through a new node
    _relabel(c, "b-03", "b")
    c.run_until(900)
    return c, controller


@pytest.fixture(scope="module")
def runs() -> tuple[tuple[Cluster, NodeLifecycleController], tuple[Cluster, NodeLifecycleController]]:
    return membership_run(NodeLifecycleController), membership_run(ScanningLifecycle)


def test_tracked_nodes_give_the_writes_taints_and_events_of_a_full_scan(runs: Any) -> None:
    (tracked, _), (scanning, _) = runs
    assert len(tracked.no_execute_added()) >= 5
    assert tracked.changes == scanning.changes
    assert tracked.taint_log == scanning.taint_log
    assert tracked.event_log() == scanning.event_log()


def test_tracked_nodes_end_with_the_known_nodes_and_zone_states_of_a_full_scan(runs: Any) -> None:
    (_, tracked), (_, scanning) = runs
    assert sorted(tracked.known_nodes) == sorted(scanning.known_nodes)
    assert "a-07" not in tracked.known_nodes and "n-01" in tracked.known_nodes
    assert tracked.zone_states == scanning.zone_states
    assert {zone.rsplit(":", 1)[-1] for zone in tracked.zone_states} == {"a", "b", "c", "new"}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda c, k: _relabel(c, "x-01", "y"), id="a known node moves to a zone without state"),
        pytest.param(lambda c, k: _relabel(c, "x-01", "x"), id="a known node is updated within its zone"),
        pytest.param(lambda c, k: k.add_node("z-00", zone="z"), id="a node joins in a new zone"),
        pytest.param(lambda c, k: c.delete_node("x-00"), id="a node is deleted"),
        pytest.param(lambda c, k: None, id="nothing changes"),
    ],
)
def test_classifying_changed_nodes_gives_what_classifying_every_node_gives(change: Any) -> None:
    c = Cluster()
    kubelets = Kubelets(c)
    kubelets.add_node("x-00", zone="x")
    kubelets.add_node("x-01", zone="x")
    controller = NodeLifecycleController(c.store, c.clock)
    controller.start()
    c.run_until(6)
    change(c, kubelets)
    named = controller._named_nodes()
    assert named == ScanningLifecycle._named_nodes(controller)  # type: ignore[arg-type]
    expected = ScanningLifecycle._classify_nodes(controller, named)  # type: ignore[arg-type]
    assert controller._classify_nodes(named) == expected


def test_queued_unhealthy_nodes_keep_markNodeForTainting_order_with_the_shortcut() -> None:
    """Quiet unreachable nodes not yet tainted are removed and re-added every pass (their queue
    time moves to the pass), as the full health update does."""

    class FullPath(NodeLifecycleController):
        def _update_node(self, name: str, node: JSON, zone_conditions: Any, now: float) -> None:
            self._full_update_node(node, zone_conditions)

    def run(controller_class: type[NodeLifecycleController]) -> tuple[list[tuple[float, str]], list[Any]]:
        c = Cluster()
        kubelets = Kubelets(c)
        for i in range(30):
            kubelets.add_node(f"a-{i:02d}", zone="a")
        kubelets.add_node("b-00", zone="b")
        controller = controller_class(c.store, c.clock)
        controller.start()
        c.run_until(12)
        kubelets.stop(*[f"a-{i:02d}" for i in range(0, 30, 3)])
        c.run_until(75)
        queue = controller.tainters.queue(get_zone_key(c.node("a-00"))).queue
        heap = [(v.value, v.added_at, v.process_at) for v in queue.heap]
        c.run_until(200)
        return c.no_execute_added(), heap

    shortcut, full = run(NodeLifecycleController), run(FullPath)
    assert len(shortcut[1]) > 2  # still queued (rate limited) when the heap is compared
    assert shortcut == full
