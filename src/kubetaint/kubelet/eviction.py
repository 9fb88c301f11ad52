"""Node-pressure eviction: ranking and messages of the kubelet's eviction manager.

Mirrors pkg/kubelet/eviction/helpers.go (rankMemoryPressure = orderedBy(exceedMemoryRequests,
priority, memory); evictionMessage) and eviction_manager.go (one pod per housekeeping pass,
critical pods never evicted, DisruptionTarget condition with reason TerminationByKubelet).

Hollow pods have no real usage. Their memory working set is the annotation
`kubetaint.dev/memory-usage` when present, else their memory request, else (no request at all)
`HOLLOW_UNREQUESTED_USAGE`: a running container always uses some memory, so a pod without a
memory request exceeds it, as upstream's BestEffort pods always do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cmp_to_key
from typing import Any

from kubetaint.api.quantity import QuantityError, value
from kubetaint.kubelet.resources import pod_priority

USAGE_ANNOTATION = "kubetaint.dev/memory-usage"
HOLLOW_UNREQUESTED_USAGE = 1024 * 1024  # 1Mi
#: Default evictionHard memory.available threshold on Linux.
MEMORY_THRESHOLD = "100Mi"
NODE_LOW_MESSAGE = "The node was low on resource: {}. "
THRESHOLD_MET_MESSAGE = "Threshold quantity: {}, available: {}. "
CONTAINER_MESSAGE = "Container {} was using {}, request is {}, has larger consumption of {}. "
_BINARY_SUFFIXES = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_binary(amount: int) -> str:
    """resource.Quantity String() for a BinarySI quantity (exact multiples only take a suffix)."""
    if amount == 0:
        return "0"
    for suffix, size in _BINARY_SUFFIXES:
        if amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount)


def _memory(raw: object) -> int:
    try:
        return value(str(raw))
    except QuantityError:
        return 0


def container_memory(container: Mapping[str, Any]) -> tuple[int, int, str]:
    """(hollow usage, request, request as written) of one container."""
    resources = container.get("resources") or {}
    raw_request = (resources.get("requests") or {}).get("memory")
    if raw_request is None:
        raw_request = (resources.get("limits") or {}).get("memory")
    request = _memory(raw_request) if raw_request is not None else 0
    usage = request if request > 0 else HOLLOW_UNREQUESTED_USAGE
    return usage, request, str(raw_request) if raw_request is not None else "0"


def pod_memory(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(hollow working set, memory request) of a pod."""
    containers = (pod.get("spec") or {}).get("containers") or []
    usage = request = 0
    for container in containers:
        c_usage, c_request, _ = container_memory(container)
        usage += c_usage
        request += c_request
    annotated = ((pod.get("metadata") or {}).get("annotations") or {}).get(USAGE_ANNOTATION)
    if annotated is not None:
        usage = _memory(annotated)
    return usage, request


def _cmp_bool(a: bool, b: bool) -> int:
    """cmpBool: true sorts first."""
    if a == b:
        return 0
    return -1 if a else 1


def _compare(p1: Mapping[str, Any], p2: Mapping[str, Any]) -> int:
    u1, r1 = pod_memory(p1)
    u2, r2 = pod_memory(p2)
    exceeds = _cmp_bool(u1 > r1, u2 > r2)
    if exceeds:
        return exceeds
    pr1, pr2 = pod_priority(p1), pod_priority(p2)
    if pr1 != pr2:
        return -1 if pr1 < pr2 else 1
    above1, above2 = u1 - r1, u2 - r2
    return (above2 > above1) - (above2 < above1)


def rank_memory_pressure(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Pods in eviction order under memory pressure (stable for ties: the input order)."""
    return sorted(pods, key=cmp_to_key(_compare))


def memory_eviction_message(pod: Mapping[str, Any], available: str) -> str:
    """evictionMessage for memory with the hard threshold met at `available`."""
    message = NODE_LOW_MESSAGE.format("memory") + THRESHOLD_MET_MESSAGE.format(MEMORY_THRESHOLD, available)
    annotated = ((pod.get("metadata") or {}).get("annotations") or {}).get(USAGE_ANNOTATION)
    containers = (pod.get("spec") or {}).get("containers") or []
    for container in containers:
        usage, request, raw_request = container_memory(container)
        if annotated is not None and len(containers) == 1:
            usage = _memory(annotated)
        if usage > request:
            message += CONTAINER_MESSAGE.format(
                container.get("name", ""), format_binary(usage), raw_request, "memory"
            )
    return message
