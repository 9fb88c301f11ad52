"""Pod requests and node allocatable as integer vectors (mirrors component-helpers resource.PodRequests,
pkg/scheduler/framework/types.go Resource and pkg/scheduler/util/pod_resources.go).

CPU is in millicores, every other resource in its base unit. Quantities are parsed once per pod and
node; a malformed one raises `InputError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.quantity import QuantityError, milli_value, value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: pkg/scheduler/util/pod_resources.go: requests assumed for scoring when a container sets none.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

Resources = dict[str, int]


class InputError(ValueError):
    """Bad user input in an object; `field` is the JSON path, the message names the object and field."""

    def __init__(self, obj_ref: str, field: str, message: str) -> None:
        super().__init__(f"{obj_ref}: {field}: {message}")
        self.field = field


def object_ref(obj: Mapping[str, Any]) -> str:
    """`Kind ns/name` (or `Kind name` for cluster-scoped objects) for error messages."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    name = meta.get("name", "")
    kind = obj.get("kind", "Object")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def quantity(name: str, raw: Any, obj: Mapping[str, Any], field: str) -> int:
    """A resource quantity in scheduler units (milli for cpu)."""
    try:
        return milli_value(raw) if name == CPU else value(raw)
    except (QuantityError, TypeError) as exc:
        raise InputError(object_ref(obj), field, f"{raw!r}: {exc}") from None


def _container_requests(
    pod: Mapping[str, Any], c: Mapping[str, Any], field: str, non_missing: bool
) -> Resources:
    requests = ((c.get("resources") or {}).get("requests")) or {}
    out: Resources = {}
    for name, raw in requests.items():
        out[name] = quantity(name, raw, pod, f"{field}.resources.requests.{name}")
    if non_missing:
        # Scoring pretends a container without a cpu/memory request asks for the defaults.
        if CPU not in requests:
            out[CPU] = DEFAULT_MILLI_CPU_REQUEST
        if MEMORY not in requests:
            out[MEMORY] = DEFAULT_MEMORY_REQUEST
    return out


def _add(into: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _max(into: Resources, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > into.get(name, 0):
            into[name] = amount


def pod_requests(pod: Mapping[str, Any], *, non_missing: bool = False) -> Resources:
    """resource.PodRequests: max(sum of containers + sidecars, each init container step) + overhead."""
    spec = pod.get("spec") or {}
    total: Resources = {}
    for i, c in enumerate(spec.get("containers") or ()):
        _add(total, _container_requests(pod, c, f"spec.containers[{i}]", non_missing))
    restartable: Resources = {}
    init_max: Resources = {}
    for i, c in enumerate(spec.get("initContainers") or ()):
        reqs = _container_requests(pod, c, f"spec.initContainers[{i}]", non_missing)
        if c.get("restartPolicy") == "Always":
            # A sidecar runs alongside the app containers and every later init container.
            _add(total, reqs)
            _add(restartable, reqs)
            step = dict(restartable)
        else:
            step = dict(reqs)
            _add(step, restartable)
        _max(init_max, step)
    _max(total, init_max)
    overhead = spec.get("overhead") or {}
    for name, raw in overhead.items():
        total[name] = total.get(name, 0) + quantity(name, raw, pod, f"spec.overhead.{name}")
    return {k: v for k, v in total.items() if v != 0 or k in (CPU, MEMORY)}


def allocatable_source(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """The quantities node_allocatable parses: status.allocatable, else status.capacity."""
    status = node.get("status") or {}
    source: Mapping[str, Any] = status.get("allocatable") or status.get("capacity") or {}
    return source


def node_allocatable(node: Mapping[str, Any]) -> Resources:
    """status.allocatable (kubetaint falls back to status.capacity when allocatable is absent)."""
    status = node.get("status") or {}
    source = status.get("allocatable")
    field = "status.allocatable"
    if not source:
        source = status.get("capacity") or {}
        field = "status.capacity"
    return {name: quantity(name, raw, node, f"{field}.{name}") for name, raw in source.items()}
