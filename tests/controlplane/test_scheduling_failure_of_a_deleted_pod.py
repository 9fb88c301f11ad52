"""kube-scheduler's handleSchedulingFailure records FailedScheduling whether or not the pod is
still there when its cycle ends; only the status update needs the pod."""

from __future__ import annotations

from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

from .builders import pod


def test_a_pod_deleted_during_its_cycle_still_gets_its_failed_scheduling_event() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    plane = ControlPlane(store, clock, seed=1)
    plane.ensure_system_namespaces()
    plane.start()
    plane.registry.create("pods", pod("web"))
    result = plane.scheduler_host.scheduler.schedule_one()  # the cycle the host's run would start
    assert result is not None and result.node is None and result.reason == "FailedScheduling"
    plane.registry.delete("pods", "default", "web")
    plane.scheduler_host.apply(result)  # the cycle ends after the pod has gone
    failed = [
        e
        for e in store.list("events", namespace="default").items
        if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "web"
    ]
    assert len(failed) == 1
    assert failed[0]["message"] == "no nodes available to schedule pods"  # ErrNoNodesAvailable
