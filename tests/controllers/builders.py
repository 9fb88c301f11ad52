"""Builders for the controller tests: nodes, pods, taints, tolerations, leases, and a harness
that wires a MemoryStore to a VirtualClock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetaint.clock import VirtualClock, format_micro_time, format_time
from kubetaint.store.interface import WatchEvent
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]


def taint(key: str, value: str = "", effect: str = "NoExecute", time_added: str | None = None) -> JSON:
    result: JSON = {"key": key, "effect": effect}
    if value:
        result["value"] = value
    if time_added is not None:
        result["timeAdded"] = time_added
    return result


def upstream_taint(index: int, time_added: str | None = None) -> JSON:
    """Upstream's createNoExecuteTaint(i): testTaint<i>=test<i>:NoExecute."""
    return taint(f"testTaint{index}", f"test{index}", "NoExecute", time_added)


def toleration(
    key: str = "",
    value: str = "",
    effect: str = "NoExecute",
    seconds: int | None = None,
    operator: str | None = None,
) -> JSON:
    result: JSON = {}
    if key:
        result["key"] = key
    if operator:
        result["operator"] = operator
    if value:
        result["value"] = value
    if effect:
        result["effect"] = effect
    if seconds is not None:
        result["tolerationSeconds"] = seconds
    return result


def upstream_toleration(index: int, seconds: int | None) -> JSON:
    """Upstream's addToleration(pod, i, d): tolerates testTaint<i>; d < 0 (None here) = forever."""
    return toleration(f"testTaint{index}", f"test{index}", "NoExecute", seconds)


def node(
    name: str,
    *,
    taints: list[JSON] | None = None,
    labels: dict[str, str] | None = None,
    conditions: list[JSON] | None = None,
    unschedulable: bool = False,
    zone: str | None = None,
    region: str | None = None,
) -> JSON:
    all_labels = dict(labels or {})
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    if region is not None:
        all_labels["topology.kubernetes.io/region"] = region
    spec: JSON = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    result: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "spec": spec,
        "status": {},
    }
    if conditions is not None:
        result["status"]["conditions"] = conditions
    return result


def condition(kind: str, status: str, heartbeat: str, transition: str | None = None, **extra: str) -> JSON:
    return {
        "type": kind,
        "status": status,
        "lastHeartbeatTime": heartbeat,
        "lastTransitionTime": transition or heartbeat,
        **extra,
    }


def pod(
    name: str,
    node_name: str = "",
    *,
    namespace: str = "default",
    tolerations: list[JSON] | None = None,
    ready: bool | None = None,
) -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = tolerations
    status: JSON = {}
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def lease(node_name: str, renew_time: float) -> JSON:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": node_name, "namespace": "kube-node-lease"},
        "spec": {
            "holderIdentity": node_name,
            "leaseDurationSeconds": 40,
            "renewTime": format_micro_time(renew_time),
        },
    }


@dataclass
class Cluster:
    """A MemoryStore on a VirtualClock with helpers to read and write objects."""

    clock: VirtualClock = field(default_factory=VirtualClock)
    store: MemoryStore = field(init=False)

    changes: list[tuple[float, str, str, str]] = field(default_factory=list)
    last_state: dict[tuple[str, str], JSON] = field(default_factory=dict)

    def __post_init__(self) -> None:
        counter = iter(range(10**9))
        self.store = MemoryStore(self.clock, uid_factory=lambda: f"uid-{next(counter)}")
        self.store.subscribe(self._record)

    def _record(self, event: WatchEvent) -> None:
        meta = event.object.get("metadata") or {}
        if event.type == "DELETED":
            self.last_state[(event.resource, meta.get("name", ""))] = event.object
        self.changes.append((round(self.t, 6), event.type, event.resource, meta.get("name", "")))

    def pod_changes(self, name: str) -> list[tuple[float, str]]:
        """(seconds since start, change type) of one pod."""
        return [(t, kind) for t, kind, res, obj in self.changes if res == "pods" and obj == name]

    def deletions(self, resource: str = "pods") -> list[tuple[float, str]]:
        """(seconds since start, name) of every deletion of `resource`."""
        return [(t, name) for t, kind, res, name in self.changes if kind == "DELETED" and res == resource]

    @property
    def t(self) -> float:
        """Seconds since the start of the run."""
        return self.clock.elapsed()

    def at(self, seconds: float) -> float:
        """Absolute time of `seconds` after the start."""
        return self.clock.start + seconds

    def stamp(self, seconds: float) -> str:
        return format_time(self.at(seconds))

    def run_until(self, seconds: float) -> None:
        self.clock.run_until(self.at(seconds))

    def create(self, resource: str, obj: JSON) -> JSON:
        return self.store.create(resource, obj)

    def get(self, resource: str, name: str, namespace: str = "") -> JSON | None:
        try:
            return self.store.get(resource, namespace, name)
        except Exception:
            return None

    def pod(self, name: str, namespace: str = "default") -> JSON | None:
        return self.get("pods", name, namespace)

    def node(self, name: str) -> JSON:
        found = self.get("nodes", name)
        assert found is not None
        return found

    def set_node_taints(self, name: str, taints: list[JSON]) -> None:
        current = self.node(name)
        self.store.update("nodes", {**current, "spec": {**current.get("spec", {}), "taints": taints}})

    def update_pod(self, name: str, **spec: Any) -> None:
        current = self.pod(name)
        assert current is not None
        self.store.update("pods", {**current, "spec": {**current["spec"], **spec}})

    def delete_node(self, name: str) -> None:
        self.store.delete("nodes", "", name)

    def events(self, reason: str | None = None) -> list[JSON]:
        items = self.store.list("events").items
        found = [e for e in items if reason is None or e["reason"] == reason]
        return sorted(found, key=lambda e: int(e["metadata"]["resourceVersion"]))

    def event_log(self, reason: str | None = None) -> list[tuple[str, str]]:
        """(lastTimestamp, message) of events, in the order they were recorded."""
        return [(e["lastTimestamp"], e["message"]) for e in self.events(reason)]
