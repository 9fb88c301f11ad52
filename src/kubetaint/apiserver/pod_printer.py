"""The pod Table row: READY, STATUS (init progress, container reasons, Terminating), RESTARTS
with the last restart's age, and the wide columns (mirrors printPod in
pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

from typing import Any

from kubetaint.api.jsonview import as_list, meta_of
from kubetaint.apiserver.printing import (
    AGE_COLUMN,
    JSON,
    NAME_COLUMN,
    Cells,
    age_of,
    as_dict,
    col,
    human_duration,
    swagger_doc,
)
from kubetaint.clock.base import parse_time

# pods -----------------------------------------------------------------------------------

POD_COLUMNS = [
    NAME_COLUMN,
    col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "The aggregate status of the containers in this pod."),
    col(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last "
        "container in this pod has restarted.",
    ),
    AGE_COLUMN,
    col("IP", swagger_doc("io.k8s.api.core.v1.PodStatus", "podIP"), priority=1),
    col("Node", swagger_doc("io.k8s.api.core.v1.PodSpec", "nodeName"), priority=1),
    col("Nominated Node", swagger_doc("io.k8s.api.core.v1.PodStatus", "nominatedNodeName"), priority=1),
    col("Readiness Gates", swagger_doc("io.k8s.api.core.v1.PodSpec", "readinessGates"), priority=1),
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
    finished = as_dict(as_dict(status.get("lastState")).get("terminated")).get("finishedAt")
    try:
        return parse_time(finished) if isinstance(finished, str) and finished else None
    except ValueError:
        return None


def _condition_true(conditions: list[Any], kind: str) -> bool:
    return any(as_dict(c).get("type") == kind and as_dict(c).get("status") == "True" for c in conditions)


def print_pod(pod: JSON, now: float) -> Cells:
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    conditions = as_list(status.get("conditions"))
    init_specs = {as_dict(c).get("name"): c for c in as_list(spec.get("initContainers"))}
    total = len(as_list(spec.get("containers"))) + sum(1 for c in init_specs.values() if _restartable_init(c))
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for cond in conditions:
        if as_dict(cond).get("type") == "PodScheduled" and as_dict(cond).get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    ready = restarts = sidecar_restarts = 0
    last_restart: float | None = None
    sidecar_last: float | None = None
    initializing = False
    init_statuses = as_list(status.get("initContainerStatuses"))
    for i, cs in enumerate(map(as_dict, init_statuses)):
        restarts += int(cs.get("restartCount") or 0)
        finished = _last_termination(cs)
        if finished is not None and (last_restart is None or finished > last_restart):
            last_restart = finished
        sidecar = _restartable_init(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += int(cs.get("restartCount") or 0)
            if finished is not None and (sidecar_last is None or finished > sidecar_last):
                sidecar_last = finished
        state = as_dict(cs.get("state"))
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
        for cs in map(as_dict, reversed(as_list(status.get("containerStatuses")))):
            restarts += int(cs.get("restartCount") or 0)
            finished = _last_termination(cs)
            if finished is not None and (last_restart is None or finished > last_restart):
                last_restart = finished
            state = as_dict(cs.get("state"))
            waiting, term = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif isinstance(term, dict):
                reason = _terminated_reason(term, "")
            elif cs.get("ready") and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if any(as_dict(c).get("type") == "Ready" for c in conditions) else "NotReady"
    deleting = meta_of(pod).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration(now - last_restart)} ago)"
    pod_ips = as_list(status.get("podIPs"))
    pod_ip = str(as_dict(pod_ips[0]).get("ip") or "") if pod_ips else ""
    gates = as_list(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true_count = 0
        for gate in map(as_dict, gates):
            for cond in map(as_dict, conditions):
                if cond.get("type") == gate.get("conditionType"):
                    true_count += 1 if cond.get("status") == "True" else 0
                    break
        gates_text = f"{true_count}/{len(gates)}"
    return [
        meta_of(pod).get("name", ""),
        f"{ready}/{total}",
        reason,
        restarts_text,
        age_of(pod, now),
        pod_ip or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_text,
    ]
