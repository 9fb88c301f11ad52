"""The node lifecycle pass keeps its node list from informer events and classifies only nodes that
changed; these runs check it against the reference mode, which reads the whole informer on every
pass, through node additions, deletions, zone relabels and
outages, and that the remembered taint facts of quiet unhealthy nodes re-queue them as
markNodeForTainting does."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.controllers.nodelifecycle import NodeLifecycleController
from kubetaint.controllers.nodelifecycle.zones import get_zone_key
from kubetaint.controllers.tainteviction import TaintEvictionController

from .builders import DEFAULT_TOLERATIONS, Cluster, Kubelets, pod
from .reference import in_reference_mode

JSON = dict[str, Any]
ZONE_LABEL = "topology.kubernetes.io/zone"


def _classified_by_scanning(
    controller: NodeLifecycleController, names: list[str], listed: dict[str, JSON]
) -> tuple[list[JSON], list[JSON], list[JSON]]:
    """classifyNodes as upstream writes it: every listed node looked at."""
    known, states = controller.known_nodes, controller.zone_states
    added = [listed[n] for n in names if n not in known]
    new_zone = [listed[n] for n in names if n in known and get_zone_key(listed[n]) not in states]
    deleted = [node for name, node in sorted(known.items()) if name not in listed]
    return added, deleted, new_zone


def _relabel(c: Cluster, name: str, zone: str) -> None:
    node = c.node(name)
    labels = {**node["metadata"].get("labels", {}), ZONE_LABEL: zone}
    c.store.update("nodes", {**node, "metadata": {**node["metadata"], "labels": labels}})


def membership_run(reference: bool) -> tuple[Cluster, NodeLifecycleController]:
    c = Cluster()
    kubelets = Kubelets(c)
    for zone, count in (("a", 12), ("b", 4)):
        for i in range(count):
            kubelets.add_node(f"{zone}-{i:02d}", zone=zone)
    for i in range(4):
        c.create("pods", pod(f"web-{i}", f"a-{i:02d}", tolerations=DEFAULT_TOLERATIONS, ready=True))
    with in_reference_mode(reference):
        controller = NodeLifecycleController(c.store, c.clock)
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
    return membership_run(False), membership_run(True)


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
    names = sorted(str(n["metadata"]["name"]) for n in controller.nodes.items())
    listed = {name: node for name in names if (node := controller.nodes.get("", name)) is not None}
    expected = _classified_by_scanning(controller, names, listed)
    assert controller.classify_nodes(names, listed, controller.work.changed_nodes) == expected


def test_queued_unhealthy_nodes_keep_markNodeForTainting_order_with_the_shortcut() -> None:
    """Quiet unreachable nodes not yet tainted are removed and re-added every pass (their queue
    time moves to the pass), as the full health update does."""

    def run(reference: bool) -> tuple[list[tuple[float, str]], list[Any]]:
        c = Cluster()
        kubelets = Kubelets(c)
        for i in range(30):
            kubelets.add_node(f"a-{i:02d}", zone="a")
        kubelets.add_node("b-00", zone="b")
        with in_reference_mode(reference):
            controller = NodeLifecycleController(c.store, c.clock)
        controller.start()
        c.run_until(12)
        kubelets.stop(*[f"a-{i:02d}" for i in range(0, 30, 3)])
        c.run_until(75)
        queue = controller.zone_no_execute_tainter[get_zone_key(c.node("a-00"))].queue
        heap = [(v.value, v.added_at, v.process_at) for v in queue.heap]
        c.run_until(200)
        return c.no_execute_added(), heap

    shortcut, full = run(False), run(True)
    assert len(shortcut[1]) > 2  # still queued (rate limited) when the heap is compared
    assert shortcut == full
