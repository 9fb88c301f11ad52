"""How long a hollow container runs, and the pod status when it exits (the simulated runtime).

kubemark's hollow runtime starts containers at once and never stops them. kubetaint keeps that
for pods whose `restartPolicy` is `Always` (the default: Deployments, DaemonSets, StatefulSets),
and lets the containers of a run-to-completion pod (`restartPolicy` `Never` or `OnFailure`: Jobs,
CronJobs' Jobs, `kubectl run --restart=Never`) exit, so that Jobs complete:

- they exit `kubetaint.io/run-seconds` after they start (the pod annotation, a number of seconds;
  absent: 0, they exit as soon as they start), on the cluster clock (virtual in the simulator and
  in `up --clock virtual`, the wall clock otherwise);
- with exit code `kubetaint.io/exit-code` (an integer; absent: 0).

Exit code 0 makes the pod `Succeeded` (container reason `Completed`). Another exit code makes a
`Never` pod `Failed` (container reason `Error`); an `OnFailure` pod's containers restart in place
(`restartCount` + 1) after the kubelet's crash-loop back-off (10 s doubling up to 300 s,
`CrashLoopBackOff` while waiting) and run again. Mirrors pkg/kubelet/kubelet_pods.go getPhase and
the container restart back-off of pkg/kubelet/kuberuntime (MaxContainerBackOff 300 s).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kubetaint.clock.base import format_time, parse_time

JSON = dict[str, Any]
RUN_SECONDS_ANNOTATION = "kubetaint.io/run-seconds"
EXIT_CODE_ANNOTATION = "kubetaint.io/exit-code"
#: The kubelet's container restart back-off: 10 s initial, doubling, at most 300 s.
BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
#: The restartPolicy values whose containers exit.
RUN_TO_COMPLETION = ("Never", "OnFailure")


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = (pod.get("metadata") or {}).get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def runs_to_completion(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's hollow containers exit (restartPolicy Never or OnFailure)."""
    return (pod.get("spec") or {}).get("restartPolicy") in RUN_TO_COMPLETION


def run_seconds(pod: Mapping[str, Any]) -> float:
    """How long the containers run once started: the annotation when it is a finite number of
    seconds at least 0, else 0."""
    raw = _annotations(pod).get(RUN_SECONDS_ANNOTATION)
    try:
        seconds = float(raw) if raw is not None else 0.0
    except (TypeError, ValueError):
        return 0.0
    return seconds if math.isfinite(seconds) and seconds >= 0 else 0.0


def exit_code(pod: Mapping[str, Any]) -> int:
    """The containers' exit code: the annotation when it is an integer, else 0."""
    raw = _annotations(pod).get(EXIT_CODE_ANNOTATION)
    try:
        return int(str(raw).strip()) if raw is not None else 0
    except ValueError:
        return 0


def restart_count(pod: Mapping[str, Any]) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max((int(s.get("restartCount") or 0) for s in statuses if isinstance(s, dict)), default=0)


def started_at(pod: Mapping[str, Any]) -> float | None:
    """When the current run of the containers started (the first container's running startedAt)."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        running = ((status or {}).get("state") or {}).get("running") or {}
        if running.get("startedAt"):
            return float(parse_time(str(running["startedAt"])))
    return None


def exit_time(pod: Mapping[str, Any]) -> float | None:
    """When a running pod's containers exit, or None when they run until stopped."""
    if not runs_to_completion(pod):
        return None
    started = started_at(pod)
    if started is None:
        return None
    return started + run_seconds(pod)


def restart_backoff(restarts: int) -> float:
    """The back-off before restart number `restarts + 1` (10 s doubling, at most 300 s)."""
    return min(BACKOFF_INITIAL * float(1 << min(restarts, 16)), BACKOFF_MAX)


def _condition(ctype: str, status: str, stamp: str, reason: str = "") -> JSON:
    condition: JSON = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": stamp}
    if reason:
        condition["reason"] = reason
    return condition


def exited_status(pod: Mapping[str, Any], now: float) -> JSON:
    """The status once the containers exited with `exit_code(pod)`: Succeeded (exit 0), Failed
    (restartPolicy Never), or, for OnFailure, Running with the containers waiting in
    CrashLoopBackOff (restartCount + 1 when they restart: `restarted_status`)."""
    stamp = format_time(now)
    old = dict(pod.get("status") or {})
    code = exit_code(pod)
    restarts = restart_count(pod)
    started = old.get("startTime") or stamp
    for status in old.get("containerStatuses") or []:
        running = ((status or {}).get("state") or {}).get("running") or {}
        started = running.get("startedAt") or started
        break
    terminated = {
        "exitCode": code,
        "reason": "Completed" if code == 0 else "Error",
        "startedAt": started,
        "finishedAt": stamp,
    }
    restarting = code != 0 and (pod.get("spec") or {}).get("restartPolicy") == "OnFailure"
    if restarting:
        state: JSON = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {int(restart_backoff(restarts))}s restarting failed container",
            }
        }
        last: JSON = {"terminated": terminated}
        phase, reason = "Running", "ContainersNotReady"
    else:
        state, last = {"terminated": terminated}, {}
        phase, reason = ("Succeeded" if code == 0 else "Failed"), "PodCompleted" if code == 0 else "PodFailed"
    replaced = ("Ready", "ContainersReady")
    conditions = [c for c in old.get("conditions") or [] if c.get("type") not in replaced]
    conditions.append(_condition("Ready", "False", stamp, reason))
    conditions.append(_condition("ContainersReady", "False", stamp, reason))
    containers = (pod.get("spec") or {}).get("containers") or []
    old["phase"] = phase
    old["conditions"] = conditions
    old["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "state": state,
            "lastState": last,
            "ready": False,
            "restartCount": restarts,
            "image": c.get("image", ""),
            "imageID": "",
            "started": False,
        }
        for c in containers
    ]
    return old


def killed_status(pod: Mapping[str, Any], now: float) -> JSON:
    """The final status of a run-to-completion pod deleted while its containers ran: they are
    killed (exit code 137), so the pod is Failed (the kubelet's terminal phase of a deleted pod
    whose containers did not all succeed)."""
    annotations = dict(_annotations(pod))
    annotations[EXIT_CODE_ANNOTATION] = "137"
    killed = {**pod, "metadata": {**(pod.get("metadata") or {}), "annotations": annotations}}
    killed["spec"] = {**(pod.get("spec") or {}), "restartPolicy": "Never"}
    return exited_status(killed, now)


def restarted_status(pod: Mapping[str, Any], now: float) -> JSON:
    """The status once an OnFailure pod's containers restarted: running again, ready,
    restartCount + 1, the last run kept as lastState."""
    stamp = format_time(now)
    old = dict(pod.get("status") or {})
    restarts = restart_count(pod) + 1
    replaced = ("Ready", "ContainersReady")
    conditions = [c for c in old.get("conditions") or [] if c.get("type") not in replaced]
    conditions.append(_condition("Ready", "True", stamp))
    conditions.append(_condition("ContainersReady", "True", stamp))
    previous = {str(s.get("name", "")): s for s in old.get("containerStatuses") or [] if isinstance(s, dict)}
    containers = (pod.get("spec") or {}).get("containers") or []
    old["phase"] = "Running"
    old["conditions"] = conditions
    old["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "state": {"running": {"startedAt": stamp}},
            "lastState": (previous.get(str(c.get("name", ""))) or {}).get("lastState") or {},
            "ready": True,
            "restartCount": restarts,
            "image": c.get("image", ""),
            "imageID": "",
            "started": True,
        }
        for c in containers
    ]
    return old
