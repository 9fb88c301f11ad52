"""Kubelet pod admission: the eviction manager's admit handler, then the predicate admit handler.

Mirrors pkg/kubelet/eviction/eviction_manager.go (Admit) and pkg/kubelet/lifecycle/predicate.go
(generalFilter: scheduler.AdmissionCheck — resources, node affinity/selector, node name, host
ports — then untolerated NoExecute taints for non-static pods; only the first reason is reported).
NoSchedule taints are ignored by the kubelet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.api.quantity import QuantityError, milli_value, value
from kubetaint.core.matching import NO_EXECUTE, NO_SCHEDULE, find_matching_untolerated_taint
from kubetaint.core.matching import tolerations_tolerate_taint as _tolerate
from kubetaint.core.nodeaffinity import required_node_affinity_matches
from kubetaint.core.qos import pod_qos_class
from kubetaint.kubelet.resources import RequestsOf, pod_priority, pod_requests

#: kubelettypes.IsCriticalPodBasedOnPriority: scheduling.SystemCriticalPriority.
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
EVICTED_REASON = "Evicted"
NODE_CONDITION_MESSAGE = "The node had condition: {}. "
TAINT_PREDICATE = "TaintToleration"
TAINT_PREDICATE_DESC = "node(s) had taints that the pod didn't tolerate"
_FIT_REASONS = {"cpu": "OutOfcpu", "memory": "OutOfmemory", "ephemeral-storage": "OutOfephemeral-storage"}


@dataclass(frozen=True)
class AdmitResult:
    admit: bool
    reason: str = ""
    message: str = ""


ADMIT = AdmitResult(True)


@dataclass(frozen=True)
class PodUsage:
    """What admission needs of a node's admitted pods: how many, and their summed requests
    (a kubelet keeping a running tally passes this instead of the pods themselves)."""

    count: int
    used: Mapping[str, int]


#: The admitted pods other than the one being admitted: the pods, or their `PodUsage`.
Others = Sequence[Mapping[str, Any]] | PodUsage


def _summed_requests(others: Sequence[Mapping[str, Any]], requests_of: RequestsOf) -> dict[str, int]:
    used: dict[str, int] = {}
    for other in others:
        for name, amount in requests_of(other).items():
            used[name] = used.get(name, 0) + amount
    return used


def is_static_pod(pod: Mapping[str, Any]) -> bool:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get("kubernetes.io/config.source", "api")) != "api"


def is_critical_pod(pod: Mapping[str, Any]) -> bool:
    """kubelettypes.IsCriticalPod: static, mirror, or priority at or above system-critical."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if is_static_pod(pod) or "kubernetes.io/config.mirror" in annotations:
        return True
    return pod_priority(pod) >= SYSTEM_CRITICAL_PRIORITY


def eviction_admit(pod: Mapping[str, Any], pressure_conditions: Sequence[str]) -> AdmitResult:
    """Eviction manager Admit: under MemoryPressure alone only BestEffort pods that do not tolerate
    the memory-pressure taint are refused; any other pressure refuses every non-critical pod."""
    if not pressure_conditions or is_critical_pod(pod):
        return ADMIT
    if list(pressure_conditions) == ["MemoryPressure"]:
        if pod_qos_class(pod) != "BestEffort":
            return ADMIT
        taint = {"key": "node.kubernetes.io/memory-pressure", "effect": NO_SCHEDULE}
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        if _tolerate(tolerations, taint, False)[0]:
            return ADMIT
    message = NODE_CONDITION_MESSAGE.format("[" + " ".join(pressure_conditions) + "]")
    return AdmitResult(False, EVICTED_REASON, message)


def _allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    status = node.get("status") or {}
    raw = status.get("allocatable") or status.get("capacity") or {}
    result: dict[str, int] = {}
    for name, quantity in raw.items():
        try:
            result[name] = milli_value(str(quantity)) if name == "cpu" else value(str(quantity))
        except QuantityError:
            continue
    return result


def _insufficient(name: str, requested: int, used: int, capacity: int) -> AdmitResult:
    reason = _FIT_REASONS.get(name, "OutOf" + name)
    message = (
        f"Node didn't have enough resource: {name}, "
        f"requested: {requested}, used: {used}, capacity: {capacity}"
    )
    return AdmitResult(False, reason, message)


def _fits_resources(
    pod: Mapping[str, Any],
    node: Mapping[str, Any],
    others: Others,
    requests_of: RequestsOf = pod_requests,
) -> AdmitResult:
    """noderesources.Fits with all failures; the first (pods, cpu, memory, storage, scalars) wins."""
    allocatable = _allocatable(node)
    allowed_pods = allocatable.get("pods", 0)
    count = others.count if isinstance(others, PodUsage) else len(others)
    if count + 1 > allowed_pods:
        return _insufficient("pods", 1, count, allowed_pods)
    request = requests_of(pod)
    if not any(request.values()):
        return ADMIT
    used = others.used if isinstance(others, PodUsage) else _summed_requests(others, requests_of)
    ordered = ["cpu", "memory", "ephemeral-storage"]
    ordered += sorted(name for name in request if name not in ordered and name != "pods")
    for name in ordered:
        amount = request.get(name, 0)
        if amount <= 0:
            continue
        if name not in ordered[:3] and name not in allocatable:
            continue  # removeMissingExtendedResources: unknown extended resources are ignored
        capacity = allocatable.get(name, 0)
        if amount > capacity - used.get(name, 0):
            return _insufficient(name, amount, used.get(name, 0), capacity)
    return ADMIT


def _predicate_failure(name: str, desc: str) -> AdmitResult:
    return AdmitResult(False, name, f"Predicate {name} failed: {desc}")


def predicate_admit(
    pod: Mapping[str, Any],
    node: Mapping[str, Any],
    others: Others,
    *,
    enable_comparison: bool = False,
    requests_of: RequestsOf = pod_requests,
) -> AdmitResult:
    """predicateAdmitHandler.Admit for a pod bound to `node` with the node's admitted `others`
    (`requests_of` sums a pod's requests: a kubelet passes a memo of its stored pods')."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    pod_os = ((pod.get("metadata") or {}).get("labels") or {}).get("kubernetes.io/os")
    if pod_os is not None and pod_os != labels.get("kubernetes.io/os", "linux"):
        return AdmitResult(
            False,
            "PodOSSelectorNodeLabelDoesNotMatch",
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
        )
    spec = pod.get("spec") or {}
    os_name = (spec.get("os") or {}).get("name")
    if os_name is not None and os_name != labels.get("kubernetes.io/os", "linux"):
        return AdmitResult(
            False, "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS"
        )
    fit = _fits_resources(pod, node, others, requests_of)
    if not fit.admit:
        return fit
    if not required_node_affinity_matches(pod, node):
        return _predicate_failure("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")
    node_name = str((node.get("metadata") or {}).get("name") or "")
    if spec.get("nodeName") and spec.get("nodeName") != node_name:
        return _predicate_failure("NodeName", "node(s) didn't match the requested node name")
    if not is_static_pod(pod):
        taints = (node.get("spec") or {}).get("taints") or []
        tolerations = spec.get("tolerations") or []
        found, error = find_matching_untolerated_taint(
            taints, tolerations, lambda t: t.get("effect") == NO_EXECUTE, enable_comparison
        )
        if found is not None or error is not None:
            return _predicate_failure(TAINT_PREDICATE, TAINT_PREDICATE_DESC)
    return ADMIT


def admit(
    pod: Mapping[str, Any],
    node: Mapping[str, Any],
    others: Others,
    pressure_conditions: Sequence[str] = (),
    *,
    enable_comparison: bool = False,
    requests_of: RequestsOf = pod_requests,
) -> AdmitResult:
    """The kubelet's admit handlers in registration order: eviction manager, then predicates."""
    result = eviction_admit(pod, pressure_conditions)
    if not result.admit:
        return result
    return predicate_admit(pod, node, others, enable_comparison=enable_comparison, requests_of=requests_of)
