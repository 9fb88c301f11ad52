"""Pod QoS class, as upstream computes it (mirrors pkg/apis/core/helper/qos/qos.go).

`pod_qos_class` is GetPodQOS: the persisted `status.qosClass` when set, otherwise `compute_pod_qos`.
Only cpu and memory count. Each container (init and regular) is classified on its own and the pod
is Guaranteed or BestEffort only when every container is; pod-level `spec.resources`, when the
PodLevelResources gate is on (beta, default on), replace the containers entirely.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

from kubetaint.api.features import FeatureGates
from kubetaint.api.quantity import parse_quantity

QOSClass = Literal["Guaranteed", "Burstable", "BestEffort"]
GUARANTEED: QOSClass = "Guaranteed"
BURSTABLE: QOSClass = "Burstable"
BEST_EFFORT: QOSClass = "BestEffort"

#: Resources that decide the QoS class (supportedQoSComputeResources).
QOS_RESOURCES = ("cpu", "memory")

#: PodLevelResources is beta and on by default since 1.34.
POD_LEVEL_RESOURCES_DEFAULT = True


def _amount(resources: Mapping[str, Any] | None, name: str) -> Fraction:
    if not resources:
        return Fraction(0)
    raw = resources.get(name)
    return Fraction(0) if raw is None else parse_quantity(raw)


def _resource_qos(requirements: Mapping[str, Any], name: str) -> QOSClass:
    """resourceQOS: Burstable when request != limit, BestEffort when both are zero, else Guaranteed."""
    request = _amount(requirements.get("requests"), name)
    limit = _amount(requirements.get("limits"), name)
    if request != limit:
        return BURSTABLE
    return BEST_EFFORT if request == 0 else GUARANTEED


def requirements_qos(requirements: Mapping[str, Any] | None) -> QOSClass:
    """requirementsQOS: the class of one set of resource requirements."""
    if not requirements or (not requirements.get("requests") and not requirements.get("limits")):
        return BEST_EFFORT
    seen: QOSClass | None = None
    for name in QOS_RESOURCES:
        qos = _resource_qos(requirements, name)
        if qos == BURSTABLE:
            return BURSTABLE
        if seen is None:
            seen = qos
        elif seen != qos:
            # Some but not all QoS resources are set, so the requirements are burstable.
            return BURSTABLE
    return seen or BEST_EFFORT


def _pod_level_resources_enabled(feature_gates: FeatureGates | None) -> bool:
    if not feature_gates:
        return POD_LEVEL_RESOURCES_DEFAULT
    return bool(feature_gates.get("PodLevelResources", POD_LEVEL_RESOURCES_DEFAULT))


def compute_pod_qos(pod: Mapping[str, Any], *, feature_gates: FeatureGates | None = None) -> QOSClass:
    """ComputePodQOS: the class from the pod's requests and limits, ignoring `status.qosClass`."""
    spec = pod.get("spec") or {}
    pod_resources = spec.get("resources")
    if pod_resources is not None and _pod_level_resources_enabled(feature_gates):
        return requirements_qos(pod_resources)
    pod_qos: QOSClass | None = None
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or ():
            qos = requirements_qos(container.get("resources"))
            if qos == BURSTABLE:
                return BURSTABLE
            if pod_qos is None:
                pod_qos = qos
            elif pod_qos != qos:
                # One BestEffort and one Guaranteed container make a Burstable pod.
                return BURSTABLE
    return pod_qos or BEST_EFFORT


def pod_qos_class(pod: Mapping[str, Any], *, feature_gates: FeatureGates | None = None) -> QOSClass:
    """GetPodQOS: `status.qosClass` when the pod carries one, otherwise `compute_pod_qos`."""
    persisted = (pod.get("status") or {}).get("qosClass")
    if persisted in (GUARANTEED, BURSTABLE, BEST_EFFORT):
        return persisted  # type: ignore[no-any-return]
    return compute_pod_qos(pod, feature_gates=feature_gates)
