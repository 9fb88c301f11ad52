"""Per-kind Table columns and cells, as kube-apiserver's printers
(mirrors pkg/printers/internalversion/printers.go and apimachinery/pkg/util/duration).
Every column is always sent (the apiserver renders with Wide); kubectl hides priority-1 columns
unless `-o wide`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.clock.base import format_time, parse_time

JSON = dict[str, Any]
Cells = list[Any]
Printer = Callable[[JSON, float], Cells]

NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
NODE_LABEL_ROLE = "kubernetes.io/role"


def human_duration(seconds: float) -> str:
    """duration.HumanDuration."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def since(timestamp: Any, now: float) -> str:
    """translateTimestampSince: `<unknown>` for a zero or unparsable time."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    try:
        return human_duration(now - parse_time(timestamp))
    except ValueError:
        return "<unknown>"


def _col(
    name: str, description: str = "", *, priority: int = 0, type_: str = "string", fmt: str = ""
) -> JSON:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


NAME_COLUMN = _col("Name", "Name must be unique within a namespace.", fmt="name")
AGE_COLUMN = _col(
    "Age", "CreationTimestamp is a timestamp representing the server time when this object was created."
)


def _meta(obj: JSON) -> JSON:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _age(obj: JSON, now: float) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


# pods -----------------------------------------------------------------------------------

POD_COLUMNS = [
    NAME_COLUMN,
    _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", "The aggregate status of the containers in this pod."),
    _col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    AGE_COLUMN,
    _col("IP", "IP address allocated to the pod. Routable at least within the cluster.", priority=1),
    _col("Node", "NodeName indicates in which node this pod is scheduled.", priority=1),
    _col(
        "Nominated Node",
        "nominatedNodeName is set when this pod preempts other pods on the node.",
        priority=1,
    ),
    _col(
        "Readiness Gates",
        "If specified, all readiness gates will be evaluated for pod readiness.",
        priority=1,
    ),
]


def _restartable_init(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _terminated_reason(term: JSON, prefix: str) -> str:
    if term.get("reason"):
        return f"{prefix}{term['reason']}"
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def _last_termination(status: JSON) -> float | None:
    finished = _dict(_dict(status.get("lastState")).get("terminated")).get("finishedAt")
    try:
        return parse_time(finished) if isinstance(finished, str) and finished else None
    except ValueError:
        return None


def _condition_true(conditions: list[Any], kind: str) -> bool:
    return any(_dict(c).get("type") == kind and _dict(c).get("status") == "True" for c in conditions)


def print_pod(pod: JSON, now: float) -> Cells:
    spec, status = _dict(pod.get("spec")), _dict(pod.get("status"))
    conditions = _list(status.get("conditions"))
    init_specs = {_dict(c).get("name"): c for c in _list(spec.get("initContainers"))}
    total = len(_list(spec.get("containers"))) + sum(1 for c in init_specs.values() if _restartable_init(c))
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for cond in conditions:
        if _dict(cond).get("type") == "PodScheduled" and _dict(cond).get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    ready = restarts = sidecar_restarts = 0
    last_restart: float | None = None
    sidecar_last: float | None = None
    initializing = False
    init_statuses = _list(status.get("initContainerStatuses"))
    for i, cs in enumerate(map(_dict, init_statuses)):
        restarts += int(cs.get("restartCount") or 0)
        finished = _last_termination(cs)
        if finished is not None and (last_restart is None or finished > last_restart):
            last_restart = finished
        sidecar = _restartable_init(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += int(cs.get("restartCount") or 0)
            if finished is not None and (sidecar_last is None or finished > sidecar_last):
                sidecar_last = finished
        state = _dict(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if isinstance(term, dict):
            reason = _terminated_reason(term, "Init:")
        elif isinstance(waiting, dict) and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(conditions, "Initialized"):
        restarts, last_restart = sidecar_restarts, sidecar_last
        has_running = False
        for cs in map(_dict, reversed(_list(status.get("containerStatuses")))):
            restarts += int(cs.get("restartCount") or 0)
            finished = _last_termination(cs)
            if finished is not None and (last_restart is None or finished > last_restart):
                last_restart = finished
            state = _dict(cs.get("state"))
            waiting, term = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif isinstance(term, dict):
                reason = _terminated_reason(term, "")
            elif cs.get("ready") and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if any(_dict(c).get("type") == "Ready" for c in conditions) else "NotReady"
    deleting = _meta(pod).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    pod_ips = _list(status.get("podIPs"))
    pod_ip = str(_dict(pod_ips[0]).get("ip") or "") if pod_ips else ""
    gates = _list(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true_count = 0
        for gate in map(_dict, gates):
            for cond in map(_dict, conditions):
                if cond.get("type") == gate.get("conditionType"):
                    true_count += 1 if cond.get("status") == "True" else 0
                    break
        gates_text = f"{true_count}/{len(gates)}"
    return [
        _meta(pod).get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _age(pod, now),
        pod_ip or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]


# nodes ----------------------------------------------------------------------------------

NODE_COLUMNS = [
    NAME_COLUMN,
    _col("Status", "The status of the node"),
    _col("Roles", "The roles of the node"),
    AGE_COLUMN,
    _col("Version", "Kubelet Version reported by the node."),
    _col(
        "Internal-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        priority=1,
    ),
    _col(
        "External-IP",
        "List of addresses reachable to the node. Queried from cloud provider, if available.",
        priority=1,
    ),
    _col(
        "OS-Image",
        "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
        priority=1,
    ),
    _col(
        "Kernel-Version",
        "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
        priority=1,
    ),
    _col(
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
    for addr in map(_dict, _list(status.get("addresses"))):
        if addr.get("type") == kind:
            return str(addr.get("address") or "")
    return "<none>"


def print_node(node: JSON, now: float) -> Cells:
    spec, status = _dict(node.get("spec")), _dict(node.get("status"))
    words: list[str] = []
    for cond in map(_dict, _list(status.get("conditions"))):
        if cond.get("type") == "Ready":
            words = ["Ready" if cond.get("status") == "True" else "NotReady"]
    if not words:
        words = ["Unknown"]
    if spec.get("unschedulable"):
        words.append("SchedulingDisabled")
    info = _dict(status.get("nodeInfo"))
    roles = ",".join(node_roles(_dict(_meta(node).get("labels")))) or "<none>"
    return [
        _meta(node).get("name", ""),
        ",".join(words),
        roles,
        _age(node, now),
        info.get("kubeletVersion", ""),
        _node_address(status, "InternalIP"),
        _node_address(status, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


# namespaces, leases, events, PDBs, priority classes, default -----------------------------

NAMESPACE_COLUMNS = [NAME_COLUMN, _col("Status", "The status of the namespace"), AGE_COLUMN]


def print_namespace(ns: JSON, now: float) -> Cells:
    return [_meta(ns).get("name", ""), _dict(ns.get("status")).get("phase", ""), _age(ns, now)]


LEASE_COLUMNS = [NAME_COLUMN, _col("Holder", "The holder of the lease."), AGE_COLUMN]


def print_lease(lease: JSON, now: float) -> Cells:
    return [
        _meta(lease).get("name", ""),
        _dict(lease.get("spec")).get("holderIdentity") or "",
        _age(lease, now),
    ]


EVENT_COLUMNS = [
    _col("Last Seen", "The time since the last event was seen."),
    _col("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
    _col("Reason", "The reason for the event."),
    _col("Object", "The object this event is about."),
    _col("Subobject", "The subobject this event is about.", priority=1),
    _col("Source", "The component reporting this event.", priority=1),
    _col("Message", "A human-readable description of the status of this operation."),
    _col("First Seen", "The time since the first event was seen.", priority=1),
    _col("Count", "The number of times this event has occurred.", priority=1),
    _col("Name", "Name must be unique within a namespace.", priority=1, fmt="name"),
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
    involved = _dict(event.get("involvedObject"))
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = _dict(event.get("source"))
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
        _meta(event).get("name", ""),
    ]


PDB_COLUMNS = [
    NAME_COLUMN,
    _col("Min Available", "The minimum number of pods that must be available."),
    _col("Max Unavailable", "The maximum number of pods that may be unavailable."),
    _col(
        "Allowed Disruptions",
        "Calculated number of pods that may be disrupted at this time.",
        type_="integer",
    ),
    AGE_COLUMN,
]


def print_pdb(pdb: JSON, now: float) -> Cells:
    spec = _dict(pdb.get("spec"))
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [
        _meta(pdb).get("name", ""),
        "N/A" if min_available is None else str(min_available),
        "N/A" if max_unavailable is None else str(max_unavailable),
        int(_dict(pdb.get("status")).get("disruptionsAllowed") or 0),
        _age(pdb, now),
    ]


PRIORITY_CLASS_COLUMNS = [
    NAME_COLUMN,
    _col("Value", "The value of this priority class.", type_="integer"),
    _col(
        "Global-Default",
        "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
        type_="boolean",
    ),
    AGE_COLUMN,
    _col("PreemptionPolicy", "PreemptionPolicy is the Policy for preempting pods with lower priority."),
]


def print_priority_class(pc: JSON, now: float) -> Cells:
    return [
        _meta(pc).get("name", ""),
        int(pc.get("value") or 0),
        bool(pc.get("globalDefault")),
        _age(pc, now),
        pc.get("preemptionPolicy") or "PreemptLowerPriority",
    ]


DEFAULT_COLUMNS = [
    NAME_COLUMN,
    _col(
        "Created At",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
        type_="date",
    ),
]


def print_default(obj: JSON, now: float) -> Cells:
    created = _meta(obj).get("creationTimestamp")
    if isinstance(created, (int, float)):
        created = format_time(created)
    return [_meta(obj).get("name", ""), created]


PRINTERS: dict[str, tuple[list[JSON], Printer]] = {
    "pods": (POD_COLUMNS, print_pod),
    "nodes": (NODE_COLUMNS, print_node),
    "namespaces": (NAMESPACE_COLUMNS, print_namespace),
    "leases.coordination.k8s.io": (LEASE_COLUMNS, print_lease),
    "events": (EVENT_COLUMNS, print_event),
    "poddisruptionbudgets.policy": (PDB_COLUMNS, print_pdb),
    "priorityclasses.scheduling.k8s.io": (PRIORITY_CLASS_COLUMNS, print_priority_class),
}


def printer_for(store_resource: str) -> tuple[list[JSON], Printer]:
    return PRINTERS.get(store_resource, (DEFAULT_COLUMNS, print_default))
