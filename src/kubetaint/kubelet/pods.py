"""Pod status documents a hollow kubelet writes: Running after admission, Failed after a
rejection or an eviction (mirrors kubelet_pods.go generateAPIPodStatus and kubelet.go rejectPod,
with instantly-started fake containers as kubemark's hollow runtime has).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import format_time
from kubetaint.core.qos import pod_qos_class

JSON = dict[str, Any]
_OWN_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")


def _condition(ctype: str, status: str, stamp: str, reason: str = "", message: str = "") -> JSON:
    condition: JSON = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": stamp}
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _kept_conditions(status: Mapping[str, Any], replaced: tuple[str, ...]) -> list[JSON]:
    return [c for c in status.get("conditions") or [] if c.get("type") not in replaced]


def running_status(pod: Mapping[str, Any], host_ip: str, pod_ip: str, now: float) -> JSON:
    """Status of an admitted pod whose hollow containers started at once."""
    stamp = format_time(now)
    old = pod.get("status") or {}
    conditions = [_condition(ctype, "True", stamp) for ctype in _OWN_CONDITIONS]
    kept = _kept_conditions(old, _OWN_CONDITIONS)
    if not any(c.get("type") == "PodScheduled" for c in kept):
        kept.append(_condition("PodScheduled", "True", stamp))
    containers = (pod.get("spec") or {}).get("containers") or []
    status: JSON = {
        **{k: v for k, v in old.items() if k in ("nominatedNodeName",)},
        "phase": "Running",
        "conditions": conditions + kept,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}] if host_ip else [],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}] if pod_ip else [],
        "startTime": stamp,
        "containerStatuses": [
            {
                "name": c.get("name", ""),
                "state": {"running": {"startedAt": stamp}},
                "lastState": {},
                "ready": True,
                "restartCount": 0,
                "image": c.get("image", ""),
                "imageID": "",
                "started": True,
            }
            for c in containers
        ],
        "qosClass": pod_qos_class(pod),
    }
    return status


def rejected_status(pod: Mapping[str, Any], reason: str, message: str) -> JSON:
    """rejectPod: phase Failed, the admit reason, "Pod was rejected: " + message."""
    return {
        "phase": "Failed",
        "reason": reason,
        "message": "Pod was rejected: " + message,
        "qosClass": pod_qos_class(pod),
    }


def evicted_status(pod: Mapping[str, Any], message: str, now: float) -> JSON:
    """A pod the eviction manager killed: Failed/Evicted with DisruptionTarget TerminationByKubelet."""
    stamp = format_time(now)
    old = pod.get("status") or {}
    replaced = ("DisruptionTarget", "Ready", "ContainersReady")
    conditions = _kept_conditions(old, replaced)
    conditions.append(_condition("DisruptionTarget", "True", stamp, "TerminationByKubelet", message))
    conditions.append(_condition("Ready", "False", stamp, "PodFailed"))
    conditions.append(_condition("ContainersReady", "False", stamp, "PodFailed"))
    containers = (pod.get("spec") or {}).get("containers") or []
    started = stamp
    for cs in old.get("containerStatuses") or []:
        started = ((cs.get("state") or {}).get("running") or {}).get("startedAt", started)
    return {
        **old,
        "phase": "Failed",
        "reason": "Evicted",
        "message": message,
        "conditions": conditions,
        "containerStatuses": [
            _terminated(c, 137, "ContainerStatusUnknown", started, stamp) for c in containers
        ],
    }


def stopped_status(pod: Mapping[str, Any], now: float) -> JSON:
    """The final status of a deleted pod whose hollow containers stopped (generateAPIPodStatus of a
    terminal pod): every container terminated with exit code 0 (the fake runtime's), so the phase
    is Succeeded (getPhase), Ready and ContainersReady False with reason PodCompleted; the other
    conditions (DisruptionTarget among them) are kept."""
    stamp = format_time(now)
    old = pod.get("status") or {}
    if old.get("phase") in ("Succeeded", "Failed"):
        return dict(old)
    replaced = ("Ready", "ContainersReady")
    conditions = _kept_conditions(old, replaced)
    conditions.append(_condition("Ready", "False", stamp, "PodCompleted"))
    conditions.append(_condition("ContainersReady", "False", stamp, "PodCompleted"))
    started: dict[str, str] = {}
    for cs in old.get("containerStatuses") or []:
        running = (cs.get("state") or {}).get("running") or {}
        started[str(cs.get("name", ""))] = str(running.get("startedAt") or stamp)
    containers = (pod.get("spec") or {}).get("containers") or []
    return {
        **old,
        "phase": "Succeeded",
        "conditions": conditions,
        "containerStatuses": [
            _terminated(c, 0, "Completed", started.get(str(c.get("name", "")), stamp), stamp)
            for c in containers
        ],
    }


def _terminated(container: Mapping[str, Any], exit_code: int, reason: str, started: str, stamp: str) -> JSON:
    """The status of a hollow container that terminated at `stamp` (never restarted)."""
    return {
        "name": container.get("name", ""),
        "state": {
            "terminated": {
                "exitCode": exit_code,
                "reason": reason,
                "startedAt": started,
                "finishedAt": stamp,
            }
        },
        "lastState": {},
        "ready": False,
        "restartCount": 0,
        "image": container.get("image", ""),
        "imageID": "",
        "started": False,
    }
