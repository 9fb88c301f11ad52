"""Pod resource requests as the kubelet computes them (QoS lives in kubetaint.core.qos).

Mirrors component-helpers resource.PodRequests (containers summed, init containers as a max,
plus overhead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.api.quantity import QuantityError, milli_value, value
from kubetaint.speed.memo import Memo


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


class StoredPodRequests:
    """pod_requests of stored pods, remembered by the identity of what they are summed from (the
    containers, the init containers and the overhead).

    Stored objects are read-only (the store contract), so those always sum to the same requests:
    a kubelet admitting a pod sums every running pod on its node, and those are the same stored
    objects admission after admission; pods stamped from one template share them outright. Only
    objects read from a store may be passed: the parts are held so their ids cannot be reused
    while remembered."""

    def __init__(self, limit: int = 1024) -> None:
        self._entries: Memo[tuple[int, int, int], tuple[tuple[Any, Any, Any], dict[str, int]]] = Memo(
            "kubelet.resources.stored_pod_requests", limit
        )

    def __call__(self, pod: Mapping[str, Any]) -> dict[str, int]:
        spec = pod.get("spec") or {}
        parts = (spec.get("containers"), spec.get("initContainers"), spec.get("overhead"))
        key = (id(parts[0]), id(parts[1]), id(parts[2]))
        entry = self._entries.get(key)
        if entry is not None:
            held = entry[0]
            if held[0] is parts[0] and held[1] is parts[1] and held[2] is parts[2]:
                return entry[1]
        totals = pod_requests(pod)
        self._entries.put(key, (parts, totals))
        return totals


#: How admission sums a pod's requests (`pod_requests`, or a `StoredPodRequests`).
RequestsOf = Callable[[Mapping[str, Any]], dict[str, int]]


def pod_priority(pod: Mapping[str, Any]) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    priority = (pod.get("spec") or {}).get("priority")
    return int(priority) if isinstance(priority, int) else 0
