"""An in-process component writing through `ManagerWrites` leaves the managedFields entries
kube-apiserver's field manager records for its requests: creates own everything but a status
subresource's status, updates are main-resource and/or status writes by what they change, field
writes on fields the manager already owns pass through, and untracked objects stay untracked."""

from __future__ import annotations

import random

from kubetaint.admission import AdmissionChain
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.registry.managedfields import ManagerWrites
from kubetaint.store.interface import SetField
from kubetaint.store.memory import MemoryStore


def writes(manager: str = "kube-controller-manager") -> tuple[ManagerWrites, VirtualClock]:
    clock = VirtualClock(start=1_700_000_000)
    store = MemoryStore(clock)
    for name in ("default", "kube-node-lease"):
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    registry = Registry(store, admission=AdmissionChain(), rng=random.Random(1), clock=clock)
    return ManagerWrites(registry, manager, clock), clock


def pod(name: str = "web") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def node(name: str = "node-1") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def entries(obj: dict) -> list[tuple[str, str, str, str]]:
    return [
        (e["manager"], e["operation"], e.get("subresource", ""), e["time"])
        for e in obj["metadata"].get("managedFields", [])
    ]


def fields(obj: dict, manager: str, subresource: str = "") -> dict:
    return next(
        e["fieldsV1"]
        for e in obj["metadata"]["managedFields"]
        if e["manager"] == manager and e.get("subresource", "") == subresource
    )


def test_a_create_records_the_manager_as_an_update_of_everything_it_sent() -> None:
    view, _ = writes()
    created = view.create("pods", pod())
    assert entries(created) == [("kube-controller-manager", "Update", "", "2023-11-14T22:13:20Z")]
    owned = fields(created, "kube-controller-manager")
    assert owned["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert 'k:{"name":"c"}' in owned["f:spec"]["f:containers"]


def test_a_create_does_not_own_the_status_of_a_kind_with_a_status_subresource() -> None:
    view, _ = writes("kubelet")
    created = view.create("nodes", node())
    assert created["status"]["conditions"][0]["type"] == "Ready"
    assert "f:status" not in fields(created, "kubelet")


def test_a_status_only_update_is_a_status_subresource_write() -> None:
    view, clock = writes()
    created = view.create("pods", pod())
    clock.advance(5)
    kubelet = ManagerWrites(view.registry, "kubelet", clock)
    updated = kubelet.update("pods", {**created, "status": {"phase": "Running"}})
    assert entries(updated) == [
        ("kube-controller-manager", "Update", "", "2023-11-14T22:13:20Z"),
        ("kubelet", "Update", "status", "2023-11-14T22:13:25Z"),
    ]
    assert fields(updated, "kubelet", "status") == {"f:status": {"f:phase": {}}}


def test_an_update_changing_spec_and_status_is_a_main_write_then_a_status_write() -> None:
    view, clock = writes("kube-controller-manager")
    created = ManagerWrites(view.registry, "kubelet", clock).create("nodes", node())
    clock.advance(1)
    changed = {
        **created,
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]},
    }
    updated = view.update("nodes", changed)
    assert [e[:3] for e in entries(updated)] == [
        ("kubelet", "Update", ""),
        ("kube-controller-manager", "Update", ""),
        ("kube-controller-manager", "Update", "status"),
    ]
    assert fields(updated, "kube-controller-manager") == {"f:spec": {"f:taints": {}}}
    status = fields(updated, "kube-controller-manager", "status")["f:status"]
    assert status == {"f:conditions": {'k:{"type":"Ready"}': {"f:status": {}}}}


def test_update_status_records_only_the_status() -> None:
    view, clock = writes("kube-scheduler")
    created = ManagerWrites(view.registry, "kube-controller-manager", clock).create("pods", pod())
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    updated = view.update_status("pods", {**created, "status": {"conditions": [condition]}})
    assert entries(updated)[-1][:3] == ("kube-scheduler", "Update", "status")
    owned = fields(updated, "kube-scheduler", "status")["f:status"]["f:conditions"]
    assert set(owned['k:{"type":"PodScheduled"}']) == {".", "f:reason", "f:status", "f:type"}


def test_an_object_created_without_managed_fields_stays_untracked() -> None:
    view, _ = writes()
    created = view.registry.create("pods", pod())
    updated = view.update("pods", {**created, "metadata": {**created["metadata"], "labels": {"a": "b"}}})
    assert "managedFields" not in updated["metadata"]


def test_the_stored_entries_are_recorded_over_not_a_components_older_copy() -> None:
    view, clock = writes()
    created = view.create("pods", pod())
    stale = {**created, "metadata": {**created["metadata"], "managedFields": []}}
    clock.advance(1)
    updated = view.update("pods", {**stale, "metadata": {**stale["metadata"], "labels": {"app": "api"}}})
    assert [e[0] for e in entries(updated)] == ["kube-controller-manager"]


def test_a_field_write_on_fields_the_manager_owns_passes_through() -> None:
    view, clock = writes("kubelet")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "node-1", "renewTime": "2023-11-14T22:13:20.000000Z"},
    }
    created = view.create("leases.coordination.k8s.io", lease)
    clock.advance(10)
    (renewed,) = view.commit(
        (
            SetField(
                "leases.coordination.k8s.io", [created], ("spec", "renewTime"), "2023-11-14T22:13:30.000000Z"
            ),
        )
    )
    assert isinstance(renewed, dict)
    assert renewed["spec"]["renewTime"] == "2023-11-14T22:13:30.000000Z"
    assert entries(renewed) == entries(created)


def test_a_field_write_the_manager_does_not_own_yet_is_recorded() -> None:
    view, clock = writes("kubelet")
    created = ManagerWrites(view.registry, "kube-controller-manager", clock).create("nodes", node())
    clock.advance(10)
    conditions = [{"type": "Ready", "status": "False"}]
    (posted,) = view.commit((SetField("nodes", [created], ("status", "conditions"), conditions),))
    assert isinstance(posted, dict)
    assert [e[:3] for e in entries(posted)] == [
        ("kube-controller-manager", "Update", ""),
        ("kubelet", "Update", "status"),
    ]


def test_deletes_and_the_simulators_registry_record_nothing() -> None:
    view, _ = writes()
    created = view.registry.create("pods", pod("plain"))
    assert "managedFields" not in created["metadata"]
    view.create("pods", pod())
    assert view.delete("pods", "default", "web")["metadata"]["name"] == "web"


def test_a_field_write_on_an_untracked_object_leaves_it_untracked() -> None:
    view, clock = writes("kubelet")
    created = view.registry.create("nodes", node())  # e.g. stored before managedFields were recorded
    clock.advance(10)
    conditions = [{"type": "Ready", "status": "False"}]
    (posted,) = view.commit((SetField("nodes", [created], ("status", "conditions"), conditions),))
    assert isinstance(posted, dict)
    assert posted["status"]["conditions"] == conditions
    assert "managedFields" not in posted["metadata"]
