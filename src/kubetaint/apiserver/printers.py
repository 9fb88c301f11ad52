"""Per-kind Table columns and cells, as kube-apiserver's printers
(mirrors pkg/printers/internalversion/printers.go and apimachinery/pkg/util/duration).
Every column is always sent (the apiserver renders with Wide); kubectl hides priority-1 columns
unless `-o wide`.
"""

from __future__ import annotations

from kubetaint.apiserver.pod_printer import POD_COLUMNS, print_pod
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    Printer,
    age_of,
    as_dict,
    as_list,
    col,
    human_duration,
    meta_of,
    since,
)
from kubetaint.apiserver.workload_printers import (
    DAEMONSET_COLUMNS,
    DEPLOYMENT_COLUMNS,
    REPLICASET_COLUMNS,
    print_daemonset,
    print_deployment,
    print_replicaset,
)
from kubetaint.clock.base import format_time

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_LABEL_ROLE = "kubernetes.io/role"

__all__ = ["PRINTERS", "human_duration", "print_event", "print_node", "print_pod", "printer_for"]

# nodes ----------------------------------------------------------------------------------

NODE_COLUMNS = [
    NAME_COLUMN,
    col("Status", "The status of the node"),
    col("Roles", "The roles of the node"),
    AGE_COLUMN,
    col("Version", "Kubelet Version reported by the node."),
    col(
        "Internal-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        priority=1,
    ),
    col(
        "External-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        priority=1,
    ),
    col(
        "OS-Image",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        priority=1,
    ),
    col(
        "Kernel-Version",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        priority=1,
    ),
    col(
        "Container-Runtime",
        "Container runtime version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
        priority=1,
    ),
]


def node_roles(labels: JSON) -> list[str]:
    """findNodeRoles: suffixes of node-role.kubernetes.io/<role> plus a kubernetes.io/role value."""
    roles: set[str] = set()
    for key, value in labels.items():
        if key.startswith(NODE_ROLE_PREFIX) and key[len(NODE_ROLE_PREFIX) :]:
            roles.add(key[len(NODE_ROLE_PREFIX) :])
        elif key == NODE_LABEL_ROLE and value:
            roles.add(str(value))
    return sorted(roles)


def _node_address(status: JSON, kind: str) -> str:
    for addr in map(as_dict, as_list(status.get("addresses"))):
        if addr.get("type") == kind:
            return str(addr.get("address") or "")
    return "<none>"


def print_node(node: JSON, now: float) -> Cells:
    spec, status = as_dict(node.get("spec")), as_dict(node.get("status"))
    words: list[str] = []
    for cond in map(as_dict, as_list(status.get("conditions"))):
        if cond.get("type") == "Ready":
            words = ["Ready" if cond.get("status") == "True" else "NotReady"]
    if not words:
        words = ["Unknown"]
    if spec.get("unschedulable"):
        words.append("SchedulingDisabled")
    info = as_dict(status.get("nodeInfo"))
    roles = ",".join(node_roles(as_dict(meta_of(node).get("labels")))) or "<none>"
    return [
        meta_of(node).get("name", ""),
        ",".join(words),
        roles,
        age_of(node, now),
        info.get("kubeletVersion", ""),
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# namespaces, leases, events, PDBs, priority classes, default -----------------------------

NAMESPACE_COLUMNS = [NAME_COLUMN, col("Status", "The status of the namespace"), AGE_COLUMN]


def print_namespace(ns: JSON, now: float) -> Cells:
    return [meta_of(ns).get("name", ""), as_dict(ns.get("status")).get("phase", ""), age_of(ns, now)]


LEASE_COLUMNS = [NAME_COLUMN, col("Holder", "The holder of the lease."), AGE_COLUMN]


def print_lease(lease: JSON, now: float) -> Cells:
    return [
        meta_of(lease).get("name", ""),
        as_dict(lease.get("spec")).get("holderIdentity") or "",
        age_of(lease, now),
    ]


EVENT_COLUMNS = [
    col("Last Seen", "The time since the last event was seen."),
    col("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
    col("Reason", "The reason for the event."),
    col("Object", "The object this event is about."),
    col("Subobject", "The subobject this event is about.", priority=1),
    col("Source", "The component reporting this event.", priority=1),
    col("Message", "A human-readable description of the status of this operation."),
    col("First Seen", "The time since the first event was seen.", priority=1),
    col("Count", "The number of times this event has occurred.", priority=1),
    col("Name", "Name must be unique within a namespace.", priority=1, fmt="name"),
]


def print_event(event: JSON, now: float) -> Cells:
    first = since(event.get("firstTimestamp"), now)
    if not event.get("firstTimestamp"):
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = event.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif not count:
        count = 1
    involved = as_dict(event.get("involvedObject"))
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = as_dict(event.get("source"))
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(event.get("message") or "").strip(),
        first,
        int(count),
        meta_of(event).get("name", ""),
    ]


PDB_COLUMNS = [
    NAME_COLUMN,
    col("Min Available", "The minimum number of pods that must be available."),
    col("Max Unavailable", "The maximum number of pods that may be unavailable."),
    col(
        "Allowed Disruptions",
        "Calculated number of pods that may be disrupted at this time.",
        type_="integer",
    ),
    AGE_COLUMN,
]


def print_pdb(pdb: JSON, now: float) -> Cells:
    spec = as_dict(pdb.get("spec"))
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [
        meta_of(pdb).get("name", ""),
        "N/A" if min_available is None else str(min_available),
        "N/A" if max_unavailable is None else str(max_unavailable),
        int(as_dict(pdb.get("status")).get("disruptionsAllowed") or 0),
        age_of(pdb, now),
    ]


PRIORITY_CLASS_COLUMNS = [
    NAME_COLUMN,
    col("Value", "The value of this priority class.", type_="integer"),
    col(
        "Global-Default",
        "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
        type_="boolean",
    ),
    AGE_COLUMN,
    col("PreemptionPolicy", "PreemptionPolicy is the Policy for preempting pods with lower priority."),
]


def print_priority_class(pc: JSON, now: float) -> Cells:
    return [
        meta_of(pc).get("name", ""),
        int(pc.get("value") or 0),
        bool(pc.get("globalDefault")),
        age_of(pc, now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


DEFAULT_COLUMNS = [
    NAME_COLUMN,
    col(
        "Created At",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
        type_="date",
    ),
]


def print_default(obj: JSON, now: float) -> Cells:
    created = meta_of(obj).get("creationTimestamp")
    if isinstance(created, (int, float)):
        created = format_time(created)
    return [meta_of(obj).get("name", ""), created]


PRINTERS: dict[str, tuple[list[JSON], Printer]] = {
    "pods": (POD_COLUMNS, print_pod),
    "nodes": (NODE_COLUMNS, print_node),
    "namespaces": (NAMESPACE_COLUMNS, print_namespace),
    "leases.coordination.k8s.io": (LEASE_COLUMNS, print_lease),
    "events": (EVENT_COLUMNS, print_event),
    "poddisruptionbudgets.policy": (PDB_COLUMNS, print_pdb),
    "priorityclasses.scheduling.k8s.io": (PRIORITY_CLASS_COLUMNS, print_priority_class),
    "deployments.apps": (DEPLOYMENT_COLUMNS, print_deployment),
    "replicasets.apps": (REPLICASET_COLUMNS, print_replicaset),
    "daemonsets.apps": (DAEMONSET_COLUMNS, print_daemonset),
}


def printer_for(store_resource: str) -> tuple[list[JSON], Printer]:
    return PRINTERS.get(store_resource, (DEFAULT_COLUMNS, print_default))
