"""The shared control plane: wiring, start/stop, restart adoption and settings errors."""

from __future__ import annotations

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.controlplane import ControlPlane, ControlPlaneError, parse_settings
from kubetaint.store.memory import MemoryStore

from .builders import node, plane, pod


def _node_of(cp: ControlPlane, name: str) -> str:
    return str(cp.store.get("pods", "default", name)["spec"].get("nodeName") or "")


def test_a_pod_lands_on_the_only_node_without_an_untolerated_taint() -> None:
    cp = plane()
    cp.ensure_system_namespaces()
    cp.fleet.add(node("tainted", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]))
    cp.fleet.add(node("plain"))
    cp.start()
    cp.registry.create("pods", pod("web"))
    assert isinstance(cp.clock, VirtualClock)
    cp.clock.advance(1)
    assert _node_of(cp, "web") == "plain"


def test_a_no_execute_taint_evicts_a_tolerating_pod_after_its_toleration_seconds() -> None:
    cp = plane()
    cp.ensure_system_namespaces()
    cp.fleet.add(node("n1"))
    cp.start()
    toleration = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}
    cp.registry.create("pods", pod("p", tolerations=[toleration]))
    clock = cp.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(1)
    current = cp.store.get("nodes", "", "n1")
    cp.registry.update("nodes", {**current, "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]}})
    clock.advance(3590)
    assert cp.store.get("pods", "default", "p")
    clock.advance(20)
    with pytest.raises(StatusError):
        cp.store.get("pods", "default", "p")


def test_admission_runs_on_writes_through_the_registry() -> None:
    cp = plane()
    cp.ensure_system_namespaces()
    created = cp.registry.create("pods", pod("p"))
    keys = sorted(t["key"] for t in created["spec"]["tolerations"])
    assert keys == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]


def test_validation_rejects_a_bad_taint_effect_with_a_422() -> None:
    cp = plane()
    with pytest.raises(StatusError) as err:
        cp.registry.create("nodes", node("n", taints=[{"key": "k", "effect": "Sometimes"}]))
    assert err.value.code == 422
    assert 'Unsupported value: "Sometimes"' in err.value.message


def test_a_restarted_plane_adopts_the_stored_nodes_without_recreating_them() -> None:
    clock = VirtualClock()
    store = MemoryStore(clock)
    first = ControlPlane(store, clock, seed=1)
    first.fleet.add(node("n1", zone="a"))
    first.start()
    uid = store.get("nodes", "", "n1")["metadata"]["uid"]
    first.stop()
    second = ControlPlane(store, clock, seed=2)
    for stored in store.list("nodes").items:
        second.fleet.adopt(stored)
    second.start()
    clock.advance(30)
    assert store.get("nodes", "", "n1")["metadata"]["uid"] == uid
    assert second.fleet.nodes_in_zone("a") == ["n1"]


def test_stop_cancels_the_heartbeats() -> None:
    cp = plane()
    cp.fleet.add(node("n1"))
    cp.start()
    cp.stop()
    clock = cp.clock
    assert isinstance(clock, VirtualClock)
    lease = cp.store.get("leases.coordination.k8s.io", "kube-node-lease", "n1")
    clock.advance(120)
    assert cp.store.get("leases.coordination.k8s.io", "kube-node-lease", "n1") == lease


@pytest.mark.parametrize(
    ("raw", "key_path", "fragment"),
    [
        pytest.param(
            {"nodeEvictionRate": 0.1, "unhealthyZoneThreshold": 2},
            True,
            "unhealthyZoneThreshold",
            id="an out-of-range node lifecycle flag is named by key when the controllers start",
        ),
        pytest.param(
            {"schedulerConfiguration": {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}},
            False,
            "",
            id="a scheduler configuration with a duplicate profile is rejected when the plane is built",
        ),
    ],
)
def test_settings_a_component_rejects_are_control_plane_errors(
    raw: dict[str, object], key_path: bool, fragment: str
) -> None:
    with pytest.raises(ControlPlaneError) as err:
        cp = plane(parse_settings(raw))
        cp.start()
    assert err.value.key_path is key_path
    assert fragment in str(err.value)


def test_system_namespaces_are_active_as_kube_apiserver_leaves_them() -> None:
    cp = plane()
    cp.ensure_system_namespaces()
    default = cp.store.get("namespaces", "", "default")
    assert default["status"] == {"phase": "Active"}
    assert default["spec"] == {"finalizers": ["kubernetes"]}
    assert default["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}
    names = {n["metadata"]["name"] for n in cp.store.list("namespaces").items}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
