"""Builders for the controller tests: nodes, pods, taints, tolerations, leases, and a harness
that wires a MemoryStore to a VirtualClock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubetaint.clock import VirtualClock, format_micro_time, format_time
from kubetaint.store.changes import each_event
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
    taint_log: list[tuple[float, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        counter = iter(range(10**9))
        self.store = MemoryStore(self.clock, uid_factory=lambda: f"uid-{next(counter)}")
        self.store.subscribe(each_event(self._record))

    def _record(self, event: WatchEvent) -> None:
        meta = event.object.get("metadata") or {}
        if event.type == "DELETED":
            self.last_state[(event.resource, meta.get("name", ""))] = event.object
        if event.resource == "nodes":
            self._record_taints(event)
        self.changes.append((round(self.t, 6), event.type, event.resource, meta.get("name", "")))

    def _record_taints(self, event: WatchEvent) -> None:
        def strings(obj: JSON | None) -> set[str]:
            taints = ((obj or {}).get("spec") or {}).get("taints") or []
            return {f"{t['key']}:{t['effect']}" for t in taints}

        before = strings(event.old_object) if event.type != "ADDED" else set()
        after = strings(event.object) if event.type != "DELETED" else set()
        name = event.object["metadata"]["name"]
        for added in sorted(after - before):
            self.taint_log.append((round(self.t, 6), name, "+" + added))
        for removed in sorted(before - after):
            self.taint_log.append((round(self.t, 6), name, "-" + removed))

    def taints_of(self, name: str, effect: str | None = None) -> list[tuple[float, str]]:
        """(time, +key:effect / -key:effect) for one node, in order."""
        return [
            (t, change)
            for t, node_name, change in self.taint_log
            if node_name == name and (effect is None or change.endswith(effect))
        ]

    def no_execute_added(self) -> list[tuple[float, str]]:
        """(time, node) of every NoExecute taint addition."""
        return [
            (t, n)
            for t, n, change in self.taint_log
            if change.startswith("+") and change.endswith(":NoExecute")
        ]

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


DEFAULT_TOLERATIONS = [
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
]


class Kubelets:
    """Stands in for kubelets: a Ready node with a Lease renewed every `period` seconds from
    `offset`, until `stop(name)`; status changes are written on request."""

    def __init__(self, cluster: Cluster, *, period: float = 10.0, offset: float = 2.0) -> None:
        self.cluster = cluster
        self.period = period
        self.offset = offset
        self.alive: set[str] = set()

    def add_node(self, name: str, zone: str | None = "z1", region: str | None = None, **extra: Any) -> None:
        c = self.cluster
        now = c.stamp(c.t)
        c.create(
            "nodes",
            node(name, zone=zone, region=region, conditions=[condition("Ready", "True", now)], **extra),
        )
        c.create("leases.coordination.k8s.io", lease(name, c.clock.now()))
        self.alive.add(name)
        self._schedule(name)

    def _schedule(self, name: str) -> None:
        c = self.cluster
        k = int((c.t - self.offset) // self.period) + 1
        c.clock.call_at(c.at(self.offset + k * self.period), lambda: self._renew(name))

    def _renew(self, name: str) -> None:
        if name not in self.alive:
            return
        c = self.cluster
        current = c.store.get("leases.coordination.k8s.io", "kube-node-lease", name)
        spec = {**current["spec"], "renewTime": format_micro_time(c.clock.now())}
        c.store.update("leases.coordination.k8s.io", {**current, "spec": spec})
        self._schedule(name)

    def stop(self, *names: str) -> None:
        """Heartbeats stop (the kubelet dies or the network is cut)."""
        self.alive.difference_update(names)

    def restart(self, *names: str) -> None:
        for name in names:
            if name not in self.alive:
                self.alive.add(name)
                self._renew(name)
                self.set_condition(name, "Ready", "True")

    def set_condition(self, name: str, kind: str, status: str) -> None:
        """Post a condition as the kubelet would (heartbeat now, transition now when it changes)."""
        c = self.cluster
        current = c.node(name)
        now = c.stamp(c.t)
        conditions = [dict(x) for x in current["status"].get("conditions", [])]
        for existing in conditions:
            if existing["type"] == kind:
                if existing["status"] != status:
                    existing["lastTransitionTime"] = now
                existing.update(status=status, lastHeartbeatTime=now)
                break
        else:
            conditions.append(condition(kind, status, now))
        c.store.update("nodes", {**current, "status": {**current["status"], "conditions": conditions}})
