"""Per-kind Table columns and cells, as kube-apiserver's printers
(mirrors pkg/printers/internalversion/printers.go and apimachinery/pkg/util/duration).
Every column is always sent (the apiserver renders with Wide); kubectl hides priority-1 columns
unless `-o wide`.
"""

from __future__ import annotations

from kubetaint.api.jsonview import as_list, meta_of
from kubetaint.apiserver.app_printers import APP_PRINTERS
from kubetaint.apiserver.pod_printer import POD_COLUMNS, print_pod
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    Printer,
    age_of,
    as_dict,
    col,
    human_duration,
    since,
    swagger_doc,
)
from kubetaint.apiserver.storage_printers import STORAGE_PRINTERS
from kubetaint.apiserver.workload_printers import (
    DAEMON_SET_COLUMNS,
    DEPLOYMENT_COLUMNS,
    REPLICA_SET_COLUMNS,
    RUNTIME_CLASS_COLUMNS,
    print_daemon_set,
    print_deployment,
    print_replica_set,
    print_runtime_class,
)
from kubetaint.clock.base import format_time

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_LABEL_ROLE = "kubernetes.io/role"

__all__ = ["PRINTERS", "human_duration", "print_event", "print_node", "print_pod", "printer_for"]

# nodes ----------------------------------------------------------------------------------

_CORE = "io.k8s.api.core.v1."
_NODE_INFO = _CORE + "NodeSystemInfo"
NODE_COLUMNS = [
    NAME_COLUMN,
    col("Status", "The status of the node"),
    col("Roles", "The roles of the node"),
    AGE_COLUMN,
    col("Version", swagger_doc(_NODE_INFO, "kubeletVersion")),
    col("Internal-IP", swagger_doc(_CORE + "NodeStatus", "addresses"), priority=1),
    col("External-IP", swagger_doc(_CORE + "NodeStatus", "addresses"), priority=1),
    col("OS-Image", swagger_doc(_NODE_INFO, "osImage"), priority=1),
    col("Kernel-Version", swagger_doc(_NODE_INFO, "kernelVersion"), priority=1),
    col("Container-Runtime", swagger_doc(_NODE_INFO, "containerRuntimeVersion"), priority=1),
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


LEASE_COLUMNS = [
    NAME_COLUMN,
    col("Holder", swagger_doc("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity")),
    AGE_COLUMN,
]


def print_lease(lease: JSON, now: float) -> Cells:
    return [
        meta_of(lease).get("name", ""),
        as_dict(lease.get("spec")).get("holderIdentity") or "",
        age_of(lease, now),
    ]


_EVENT = _CORE + "Event"
EVENT_COLUMNS = [
    col("Last Seen", swagger_doc(_EVENT, "lastTimestamp")),
    col("Type", swagger_doc(_EVENT, "type")),
    col("Reason", swagger_doc(_EVENT, "reason")),
    col("Object", swagger_doc(_EVENT, "involvedObject")),
    col("Subobject", swagger_doc(_CORE + "ObjectReference", "fieldPath"), priority=1),
    col("Source", swagger_doc(_EVENT, "source"), priority=1),
    col("Message", swagger_doc(_EVENT, "message")),
    col("First Seen", swagger_doc(_EVENT, "firstTimestamp"), priority=1),
    col("Count", swagger_doc(_EVENT, "count"), priority=1),
    col("Name", NAME_COLUMN["description"], priority=1, fmt="name"),
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


_PRIORITY_CLASS = "io.k8s.api.scheduling.v1.PriorityClass"
PRIORITY_CLASS_COLUMNS = [
    NAME_COLUMN,
    col("Value", swagger_doc(_PRIORITY_CLASS, "value"), type_="integer"),
    col("Global-Default", swagger_doc(_PRIORITY_CLASS, "globalDefault"), type_="boolean"),
    AGE_COLUMN,
    col("PreemptionPolicy", swagger_doc(_PRIORITY_CLASS, "preemptionPolicy")),
]


def print_priority_class(pc: JSON, now: float) -> Cells:
    return [
        meta_of(pc).get("name", ""),
        int(pc.get("value") or 0),
        bool(pc.get("globalDefault")),
        age_of(pc, now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


def _binding_columns(kind: str) -> list[JSON]:
    return [
        NAME_COLUMN,
        col("Role", swagger_doc(f"io.k8s.api.rbac.v1.{kind}", "roleRef")),
        AGE_COLUMN,
        col("Users", f"Users in the {kind[0].lower()}{kind[1:]}", priority=1),
        col("Groups", f"Groups in the {kind[0].lower()}{kind[1:]}", priority=1),
        col("ServiceAccounts", f"ServiceAccounts in the {kind[0].lower()}{kind[1:]}", priority=1),
    ]


ROLE_BINDING_COLUMNS = _binding_columns("RoleBinding")
CLUSTER_ROLE_BINDING_COLUMNS = _binding_columns("ClusterRoleBinding")


def print_binding(binding: JSON, now: float) -> Cells:
    """printRoleBinding / printClusterRoleBinding: ROLE is kind/name; the subjects by kind
    (rbacv1helpers.SubjectsStrings: service accounts as namespace/name)."""
    ref = as_dict(binding.get("roleRef"))
    users, groups, accounts = [], [], []
    for subject in map(as_dict, as_list(binding.get("subjects"))):
        kind, name = subject.get("kind"), str(subject.get("name") or "")
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace') or ''}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [
        meta_of(binding).get("name", ""),
        f"{ref.get('kind') or ''}/{ref.get('name') or ''}",
        age_of(binding, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


DEFAULT_COLUMNS = [
    NAME_COLUMN,
    col("Created At", AGE_COLUMN["description"], type_="date"),
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
    "runtimeclasses.node.k8s.io": (RUNTIME_CLASS_COLUMNS, print_runtime_class),
    "deployments.apps": (DEPLOYMENT_COLUMNS, print_deployment),
    "replicasets.apps": (REPLICA_SET_COLUMNS, print_replica_set),
    "daemonsets.apps": (DAEMON_SET_COLUMNS, print_daemon_set),
    "rolebindings.rbac.authorization.k8s.io": (ROLE_BINDING_COLUMNS, print_binding),
    "clusterrolebindings.rbac.authorization.k8s.io": (CLUSTER_ROLE_BINDING_COLUMNS, print_binding),
    **APP_PRINTERS,
    **STORAGE_PRINTERS,
}


def printer_for(store_resource: str) -> tuple[list[JSON], Printer]:
    return PRINTERS.get(store_resource, (DEFAULT_COLUMNS, print_default))
