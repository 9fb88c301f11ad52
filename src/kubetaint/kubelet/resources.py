"""Pod resource requests and QoS class, as the kubelet computes them.

Mirrors component-helpers resource.PodRequests (containers summed, init containers as a max,
plus overhead) and pkg/apis/core/v1/helper/qos.GetPodQOS. The QoS function is a local copy of
the shared one being written elsewhere (`kubetaint.core.qos.pod_qos_class`); dedupe on merge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubetaint.api.quantity import QuantityError, milli_value, value

JSON = dict[str, Any]
_QOS_RESOURCES = ("cpu", "memory")


def _amount(resource: str, raw: object) -> int:
    """cpu in millicores, everything else in whole units (bytes for memory)."""
    try:
        return milli_value(str(raw)) if resource == "cpu" else value(str(raw))
    except QuantityError:
        return 0


def _container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    # The API server defaults missing requests to the limits.
    for name, raw in (resources.get("limits") or {}).items():
        requests.setdefault(name, raw)
    return {name: _amount(name, raw) for name, raw in requests.items()}


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """Total requests of a pod: sum over containers, max with each init container, plus overhead."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        for name, amount in _container_requests(container).items():
            total[name] = total.get(name, 0) + amount
    for container in spec.get("initContainers") or []:
        for name, amount in _container_requests(container).items():
            total[name] = max(total.get(name, 0), amount)
    for name, raw in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + _amount(name, raw)
    return total


def memory_request(pod: Mapping[str, Any]) -> int:
    return pod_requests(pod).get("memory", 0)


def _all_containers(pod: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    spec = pod.get("spec") or {}
    yield from spec.get("initContainers") or []
    yield from spec.get("containers") or []


def pod_qos_class(pod: Mapping[str, Any]) -> str:
    """GetPodQOS: Guaranteed, Burstable or BestEffort (cpu and memory only)."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    limits_complete = True
    for container in _all_containers(pod):
        resources = container.get("resources") or {}
        for name, raw in (resources.get("requests") or {}).items():
            if name in _QOS_RESOURCES and _amount(name, raw) > 0:
                requests[name] = requests.get(name, 0) + _amount(name, raw)
        seen_limits = set()
        for name, raw in (resources.get("limits") or {}).items():
            if name in _QOS_RESOURCES and _amount(name, raw) > 0:
                seen_limits.add(name)
                limits[name] = limits.get(name, 0) + _amount(name, raw)
        if not seen_limits.issuperset(_QOS_RESOURCES):
            limits_complete = False
    if not requests and not limits:
        return "BestEffort"
    if limits_complete and all(requests.get(name, limits[name]) == limits[name] for name in limits):
        return "Guaranteed"
    return "Burstable"


def pod_priority(pod: Mapping[str, Any]) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    priority = (pod.get("spec") or {}).get("priority")
    return int(priority) if isinstance(priority, int) else 0
