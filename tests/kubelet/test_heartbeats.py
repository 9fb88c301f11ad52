"""Hollow kubelet registration, Lease renewals every 10 s, status posts and the stop/recover faults."""

from __future__ import annotations

import pytest

from kubelet.builders import condition, events, make_pool, node_config
from kubetaint.clock import parse_time
from kubetaint.kubelet import HollowNodePool, KubeletSettings
from kubetaint.store.changes import each_event

LEASES = "leases.coordination.k8s.io"


def renew_offset(store, clock, name: str) -> float:
    lease = store.get(LEASES, "kube-node-lease", name)
    return parse_time(lease["spec"]["renewTime"]) - clock.start


def test_registration_creates_node_with_upstream_conditions_and_labels() -> None:
    _clock, store, pool = make_pool(["n1"])
    pool.start()
    node = store.get("nodes", "", "n1")
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "n1"
    assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"] == "amd64"
    assert labels["topology.kubernetes.io/zone"] == "zone-a"
    assert node["status"]["allocatable"] == node["status"]["capacity"]
    texts = {c["type"]: (c["status"], c["reason"], c["message"]) for c in node["status"]["conditions"]}
    assert texts == {
        "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
        "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        "NetworkUnavailable": ("False", "RouteCreated", "RouteController created a route"),
    }
    lease = store.get(LEASES, "kube-node-lease", "n1")
    assert lease["spec"] == {
        "holderIdentity": "n1",
        "leaseDurationSeconds": 40,
        "renewTime": "2026-01-01T00:00:00.000000Z",
    }
    assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"


def test_lease_renews_every_ten_seconds_for_every_node() -> None:
    clock, store, pool = make_pool([f"n{i}" for i in range(5)])
    pool.start()
    for step in range(1, 7):
        clock.advance(10)
        assert {renew_offset(store, clock, f"n{i}") for i in range(5)} == {10.0 * step}
    clock.advance(9.5)
    assert renew_offset(store, clock, "n0") == 60.0


def test_status_is_reported_every_five_minutes_when_nothing_changes() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    clock.advance(290)
    ready = condition(store.get("nodes", "", "n1"), "Ready")
    assert ready is not None and ready["lastHeartbeatTime"] == "2026-01-01T00:00:00Z"
    clock.advance(10)
    ready = condition(store.get("nodes", "", "n1"), "Ready")
    assert ready is not None and ready["lastHeartbeatTime"] == "2026-01-01T00:05:00Z"
    assert ready["lastTransitionTime"] == "2026-01-01T00:00:00Z"


def test_stopped_kubelet_stops_renewing_and_recover_resumes_on_its_own_phase() -> None:
    clock, store, pool = make_pool(["n1", "n2"])
    pool.start()
    clock.advance(20)
    pool.fault(["n1"], "stop")
    clock.advance(100)
    assert renew_offset(store, clock, "n1") == 20.0
    assert renew_offset(store, clock, "n2") == 120.0
    clock.advance(5)
    pool.fault(["n1"], "recover")
    assert renew_offset(store, clock, "n1") == 125.0
    clock.advance(10)
    assert renew_offset(store, clock, "n1") == 135.0
    assert renew_offset(store, clock, "n2") == 130.0


def test_stopped_kubelet_does_not_post_status_even_when_a_fault_changes_it() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    pool.fault(["n1"], "stop")
    pool.fault(["n1"], "not-ready")
    clock.advance(600)
    ready = condition(store.get("nodes", "", "n1"), "Ready")
    assert ready is not None and ready["status"] == "True"
    assert ready["lastHeartbeatTime"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("fault", "ctype", "status", "reason", "message", "event"),
    [
        pytest.param(
            "not-ready",
            "Ready",
            "False",
            "KubeletNotReady",
            "container runtime is down",
            "NodeNotReady",
            id="not-ready posts Ready=False with KubeletNotReady at once",
        ),
        pytest.param(
            "memory-pressure",
            "MemoryPressure",
            "True",
            "KubeletHasInsufficientMemory",
            "kubelet has insufficient memory available",
            "NodeHasInsufficientMemory",
            id="memory-pressure posts MemoryPressure=True",
        ),
        pytest.param(
            "disk-pressure",
            "DiskPressure",
            "True",
            "KubeletHasDiskPressure",
            "kubelet has disk pressure",
            "NodeHasDiskPressure",
            id="disk-pressure posts DiskPressure=True",
        ),
        pytest.param(
            "pid-pressure",
            "PIDPressure",
            "True",
            "KubeletHasInsufficientPID",
            "kubelet has insufficient PID available",
            "NodeHasInsufficientPID",
            id="pid-pressure posts PIDPressure=True",
        ),
        pytest.param(
            "network-unavailable",
            "NetworkUnavailable",
            "True",
            "NoRouteCreated",
            "RouteController failed to create a route",
            None,
            id="network-unavailable posts NetworkUnavailable=True",
        ),
    ],
)
def test_condition_faults_are_posted_immediately(fault, ctype, status, reason, message, event) -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    clock.advance(33)
    pool.fault(["n1"], fault)
    cond = condition(store.get("nodes", "", "n1"), ctype)
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (status, reason, message)
    assert cond["lastTransitionTime"] == "2026-01-01T00:00:33Z"
    if event is not None:
        [recorded] = events(store, event)
        assert recorded["message"] == f"Node n1 status is now: {event}"
        assert recorded["source"] == {"component": "kubelet", "host": "n1"}


def test_relieve_clears_pressure_after_the_transition_period_and_network_at_once() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    pool.fault(["n1"], "disk-pressure")
    pool.fault(["n1"], "network-unavailable")
    clock.advance(60)
    pool.fault(["n1"], "relieve")
    assert condition(store.get("nodes", "", "n1"), "NetworkUnavailable")["status"] == "False"
    clock.advance(299)
    assert condition(store.get("nodes", "", "n1"), "DiskPressure")["status"] == "True"
    clock.advance(1)
    disk = condition(store.get("nodes", "", "n1"), "DiskPressure")
    assert disk["status"] == "False" and disk["lastTransitionTime"] == "2026-01-01T00:06:00Z"


def test_recover_restores_ready_after_not_ready() -> None:
    clock, store, pool = make_pool(["n1"])
    pool.start()
    pool.fault(["n1"], "not-ready")
    clock.advance(15)
    pool.fault(["n1"], "recover")
    ready = condition(store.get("nodes", "", "n1"), "Ready")
    assert ready["status"] == "True" and ready["lastTransitionTime"] == "2026-01-01T00:00:15Z"


def test_unknown_fault_is_a_clear_error() -> None:
    _, _, pool = make_pool(["n1"])
    with pytest.raises(ValueError, match='unknown fault "explode"'):
        pool.fault(["n1"], "explode")


def test_existing_node_is_adopted_and_keeps_its_taints() -> None:
    _clock, store, pool = make_pool([])
    store.create(
        "nodes",
        {
            "metadata": {"name": "n9"},
            "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
            "status": {},
        },
    )
    from kubelet.builders import node_config

    pool.add_node(node_config("n9"))
    pool.start()
    node = store.get("nodes", "", "n9")
    assert node["spec"]["taints"] == [{"key": "a", "effect": "NoSchedule"}]
    assert condition(node, "Ready")["status"] == "True"


def test_status_frequency_setting_is_honoured() -> None:
    clock, store, pool = make_pool(["n1"], KubeletSettings(node_status_report_frequency=60))
    pool.start()
    clock.advance(60)
    assert condition(store.get("nodes", "", "n1"), "Ready")["lastHeartbeatTime"] == "2026-01-01T00:01:00Z"


class _OneHeartbeatAfterAnother(HollowNodePool):
    """Runs each member's heartbeat() in turn (no batching)."""

    def _beat(self, phase: float) -> None:
        group = self._groups.get(phase)
        if group is None:
            return
        group.handle = self.clock.call_later(self.settings.lease_renew_interval, lambda: self._beat(phase))
        for kubelet in list(group.members.values()):
            kubelet.heartbeat()


def _heartbeat_history(pool_class: type[HollowNodePool]) -> list[tuple[int, str, str, str]]:
    clock, store, _ = make_pool([])
    pool = pool_class(store, clock, [node_config(f"n{i}") for i in range(6)])
    changes: list[tuple[int, str, str, str]] = []
    store.subscribe(
        each_event(
            lambda e: changes.append((e.resource_version, e.type, e.resource, e.object["metadata"]["name"]))
        )
    )
    pool.start()
    clock.advance(25)
    pool.fault(["n2"], "not-ready")
    store.delete(LEASES, "kube-node-lease", "n4")  # its renewal fails: read again and created
    clock.advance(320)  # past the status report frequency: every node posts in its heartbeat
    pool.fault(["n1"], "stop")
    pool.fault(["n1"], "recover")
    clock.advance(40)
    return changes


def test_batched_lease_renewals_make_the_writes_of_one_heartbeat_after_another() -> None:
    batched, sequential = _heartbeat_history(HollowNodePool), _heartbeat_history(_OneHeartbeatAfterAnother)
    heartbeat_posts = [c for c in batched if c[2] == "nodes" and c[0] > 100]
    assert len(heartbeat_posts) >= 6, "status posts between the renewals of one heartbeat"
    assert ("DELETED" in {kind for _, kind, _, _ in batched}) and len(batched) > 200
    assert batched == sequential
