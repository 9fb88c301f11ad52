"""The Node object a hollow kubelet registers and the conditions it posts.

Mirrors pkg/kubelet/nodestatus/setters.go (ReadyCondition, MemoryPressureCondition,
DiskPressureCondition, PIDPressureCondition: reasons, messages, transition-time rules) and
kubelet_node_status.go (initialNode labels; updateDefaultLabels and updateDefaultResources, which
reconcile a Node that already exists at registration). NetworkUnavailable is owned upstream by the route
controller or the CNI; a hollow node reports it with the route controller's reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import is_
from typing import Any

from kubetaint.api.version import KUBERNETES_VERSION
from kubetaint.clock.base import format_time
from kubetaint.speed.memo import Memo

JSON = dict[str, Any]

#: (type, status) -> (reason, message), as the kubelet's setters write them.
CONDITION_TEXT: dict[tuple[str, str], tuple[str, str]] = {
    ("Ready", "True"): ("KubeletReady", "kubelet is posting ready status"),
    ("Ready", "False"): ("KubeletNotReady", "container runtime is down"),
    ("MemoryPressure", "False"): ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("MemoryPressure", "True"): ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    ("DiskPressure", "False"): ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("DiskPressure", "True"): ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    ("PIDPressure", "False"): ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("PIDPressure", "True"): ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
    ("NetworkUnavailable", "False"): ("RouteCreated", "RouteController created a route"),
    ("NetworkUnavailable", "True"): ("NoRouteCreated", "RouteController failed to create a route"),
}

#: Node events the kubelet records when a condition changes (recordNodeStatusEvent).
CONDITION_EVENTS: dict[tuple[str, str], str] = {
    ("Ready", "True"): "NodeReady",
    ("Ready", "False"): "NodeNotReady",
    ("MemoryPressure", "False"): "NodeHasSufficientMemory",
    ("MemoryPressure", "True"): "NodeHasInsufficientMemory",
    ("DiskPressure", "False"): "NodeHasNoDiskPressure",
    ("DiskPressure", "True"): "NodeHasDiskPressure",
    ("PIDPressure", "False"): "NodeHasSufficientPID",
    ("PIDPressure", "True"): "NodeHasInsufficientPID",
}

#: The order conditions appear in a kubelet-registered node.
CONDITION_ORDER = ("NetworkUnavailable", "MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
#: the field a status post sets (a `kubetaint.store.interface.FieldPath`)
NODE_CONDITIONS = ("status", "conditions")
PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")

DEFAULT_CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}


@dataclass
class NodeConfig:
    """What a hollow node looks like (the kubelet's flags and machine info)."""

    name: str
    capacity: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CAPACITY))
    allocatable: dict[str, str] | None = None  # None: same as capacity
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    register_with_taints: list[JSON] = field(default_factory=list)
    zone: str = ""
    region: str = ""
    os: str = "linux"
    arch: str = "amd64"
    internal_ip: str = ""
    pod_cidr: str = ""
    report_network_condition: bool = True
    kubelet_version: str = KUBERNETES_VERSION


def node_labels(config: NodeConfig) -> dict[str, str]:
    """initialNode's well-known labels, then the configured ones (which win)."""
    labels = {
        "kubernetes.io/hostname": config.name,
        "kubernetes.io/os": config.os,
        "kubernetes.io/arch": config.arch,
        "beta.kubernetes.io/os": config.os,
        "beta.kubernetes.io/arch": config.arch,
    }
    if config.zone:
        labels["topology.kubernetes.io/zone"] = config.zone
    if config.region:
        labels["topology.kubernetes.io/region"] = config.region
    labels.update(config.labels)
    return labels


def desired_condition_status(
    ready: bool, pressures: Mapping[str, bool], network_unavailable: bool, report_network: bool
) -> dict[str, str]:
    """The status of every condition the hollow kubelet owns."""
    statuses = {name: "True" if pressures.get(name) else "False" for name in PRESSURE_CONDITIONS}
    statuses["Ready"] = "True" if ready else "False"
    if report_network or network_unavailable:
        statuses["NetworkUnavailable"] = "True" if network_unavailable else "False"
    return statuses


def merge_conditions(
    existing: list[JSON], desired: Mapping[str, str], now: float
) -> tuple[list[JSON], list[tuple[str, str]]]:
    """Conditions after a status post, and the (type, status) pairs that changed.

    Heartbeats move to `now`; lastTransitionTime moves only when the status changes (setters.go).
    Conditions the kubelet does not own are kept as they are.

    The last merge is remembered (`_LAST_MERGE`): the kubelets of a status round post at one
    instant over the very condition objects they shared last time (`_POSTED`), so each after
    the first gets copies of the first one's lists, which the merge would have built equal."""
    last = _LAST_MERGE.get(now)
    if (
        last is not None
        and len(existing) == len(last[2])
        and all(map(is_, existing, last[2]))
        and last[1] == desired
    ):
        return list(last[3]), list(last[4])
    result, changed = _merged(existing, desired, now)
    _LAST_MERGE.put(now, (now, dict(desired), tuple(existing), result, changed))
    return list(result), list(changed)


#: now -> (now, desired, existing conditions, result, changed) of the last merge_conditions call
#: (its own copies: the caller gets copies of the lists; the existing conditions are held so that
#: their identities cannot be taken by other objects).
_LAST_MERGE: Memo[
    float, tuple[float, dict[str, str], tuple[JSON, ...], list[JSON], list[tuple[str, str]]]
] = Memo("kubelet.node_status.last_merge", limit=1)


def _merged(
    existing: list[JSON], desired: Mapping[str, str], now: float
) -> tuple[list[JSON], list[tuple[str, str]]]:
    """merge_conditions, computed."""
    stamp = format_time(now)
    by_type = {c.get("type"): c for c in existing}
    changed: list[tuple[str, str]] = []
    result: list[JSON] = []
    posted = _POSTED
    for ctype in CONDITION_ORDER:
        status = desired.get(ctype)
        if status is None:
            continue
        old = by_type.get(ctype)
        transition = stamp
        if old is not None and old.get("status") == status:
            transition = old.get("lastTransitionTime") or stamp
        else:
            changed.append((ctype, status))
        key = (ctype, status, stamp, transition)
        condition = posted.get(key) if type(transition) is str else None
        if condition is None:
            reason, message = CONDITION_TEXT[(ctype, status)]
            condition = {
                "type": ctype,
                "status": status,
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": transition,
                "reason": reason,
                "message": message,
            }
            if type(transition) is str:
                posted.put(key, condition)
        result.append(condition)
    result.extend(c for c in existing if c.get("type") not in desired)
    return result, changed


#: (type, status, lastHeartbeatTime, lastTransitionTime) → the condition a post with them writes
#: (reason and message follow from type and status). The kubelets of a heartbeat round post equal
#: conditions at one instant: they share them (stored objects are read-only), which saves thousands
#: of dicts a round.
_POSTED: Memo[tuple[str, str, str, str], JSON] = Memo("kubelet.node_status.posted_conditions", limit=1024)


def conditions_differ(existing: list[JSON], desired: Mapping[str, str]) -> bool:
    """Whether posting now would change any owned condition's status (or add a missing one)."""
    by_type = {c.get("type"): c.get("status") for c in existing}
    return any(by_type.get(ctype) != status for ctype, status in desired.items())


def initial_node(config: NodeConfig) -> JSON:
    """The Node a kubelet registers (status conditions are filled in by the first status post)."""
    capacity = dict(config.capacity)
    allocatable = dict(config.allocatable if config.allocatable is not None else capacity)
    spec: JSON = {}
    if config.pod_cidr:
        spec["podCIDR"] = config.pod_cidr
        spec["podCIDRs"] = [config.pod_cidr]
    if config.register_with_taints:
        spec["taints"] = [dict(t) for t in config.register_with_taints]
    metadata: JSON = {"name": config.name, "labels": node_labels(config)}
    annotations = {"node.alpha.kubernetes.io/ttl": "0", **config.annotations}
    metadata["annotations"] = annotations
    addresses = [{"type": "Hostname", "address": config.name}]
    if config.internal_ip:
        addresses.insert(0, {"type": "InternalIP", "address": config.internal_ip})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [],
            "addresses": addresses,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": config.arch,
                "operatingSystem": config.os,
                "kubeletVersion": config.kubelet_version,
                "containerRuntimeVersion": "fake://hollow",
                "osImage": "hollow",
                "kernelVersion": "",
                "kubeProxyVersion": "",  # deprecated but never omitted (no omitempty upstream)
                "bootID": "",
                "machineID": "",
                "systemUUID": "",
            },
        },
    }


#: The labels a kubelet keeps at its own value on a Node that already exists (updateDefaultLabels).
DEFAULT_LABELS = (
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "node.kubernetes.io/windows-build",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
)


def reconcile_existing_node(initial: Mapping[str, Any], existing: JSON) -> JSON | None:
    """The existing Node as a registering kubelet leaves it (None when nothing changes):
    default labels set to the kubelet's values (an empty value removes the label), and capacity,
    allocatable, nodeInfo and daemonEndpoints taken from the kubelet when the Node has none (the
    last two are what its first status sync's VersionInfo and DaemonEndpoints setters write; a
    hollow kubelet's later posts carry only the conditions)."""
    initial_labels: Mapping[str, str] = (initial.get("metadata") or {}).get("labels") or {}
    meta = existing.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    for label in DEFAULT_LABELS:
        if label not in initial_labels:
            continue
        if labels.get(label, "") != initial_labels[label]:
            labels[label] = initial_labels[label]
        if labels.get(label) == "":
            del labels[label]
    status = dict(existing.get("status") or {})
    initial_status = initial.get("status") or {}
    for key in ("capacity", "allocatable", "nodeInfo", "daemonEndpoints"):
        if not status.get(key) and initial_status.get(key):
            status[key] = dict(initial_status[key])
    if labels == (meta.get("labels") or {}) and status == (existing.get("status") or {}):
        return None
    return {**existing, "metadata": {**meta, "labels": labels}, "status": status}
