"""RuntimeClass (mirrors plugin/pkg/admission/runtimeclass/admission.go).

For a pod created with `spec.runtimeClassName`:
- Admit sets `spec.overhead` to the RuntimeClass `overhead.podFixed` (rejecting a pod that already
  sets a different overhead), merges `scheduling.nodeSelector` into the pod's node selector
  (rejecting a conflicting value) and merges `scheduling.tolerations` with MergeTolerations;
- Validate rejects a pod whose overhead differs from the RuntimeClass, or that sets an overhead
  without a RuntimeClass defining one.
Overheads compare as upstream's Semantic.DeepEqual: quantities by value, nil equal to empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, Attributes
from kubetaint.admission.errors import AdmissionError, forbidden
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin, is_pod_request, pod_spec, with_spec_fields
from kubetaint.api.quantity import QuantityError, parse_quantity
from kubetaint.core.tolerations import merge_tolerations

JSONDict = dict[str, Any]

OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"


def _same_resources(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    a, b = a or {}, b or {}
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(a[name]) == parse_quantity(b[name]) for name in a)
    except QuantityError:
        return all(str(a[name]) == str(b[name]) for name in a)


class RuntimeClass(AdmissionPlugin):
    name: ClassVar[str] = "RuntimeClass"
    looks_up = frozenset({"runtimeclasses"})
    operations: ClassVar[frozenset[str]] = frozenset({CREATE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods"})
    validating: ClassVar[bool] = True

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        if not is_pod_request(attrs):
            return attrs.object
        pod = attrs.object
        assert pod is not None
        runtime_class = self._runtime_class(attrs, lookup)
        if runtime_class is None:
            return pod
        changes: JSONDict = {}
        changes.update(self._overhead(attrs, pod, runtime_class))
        changes.update(self._scheduling(attrs, pod, runtime_class))
        return with_spec_fields(pod, **changes) if changes else pod

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        if not is_pod_request(attrs):
            return
        assert attrs.object is not None
        runtime_class = self._runtime_class(attrs, lookup)
        pod_overhead = pod_spec(attrs.object).get("overhead")
        overhead = (runtime_class or {}).get("overhead")
        if overhead is not None:
            if not _same_resources(overhead.get("podFixed"), pod_overhead):
                raise forbidden(attrs, OVERHEAD_MISMATCH)
        elif pod_overhead is not None:
            raise forbidden(attrs, OVERHEAD_WITHOUT_CLASS)

    @staticmethod
    def _runtime_class(attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        assert attrs.object is not None
        name = pod_spec(attrs.object).get("runtimeClassName")
        if name is None:
            return None
        runtime_class = lookup.get("runtimeclasses", "", str(name))
        if runtime_class is None:
            raise forbidden(attrs, f'pod rejected: RuntimeClass "{name}" not found')
        return runtime_class

    @staticmethod
    def _overhead(attrs: Attributes, pod: Mapping[str, Any], runtime_class: Mapping[str, Any]) -> JSONDict:
        """setOverhead."""
        overhead = runtime_class.get("overhead")
        if overhead is None:
            return {}
        pod_fixed = overhead.get("podFixed")
        current = pod_spec(pod).get("overhead")
        if current is not None and not _same_resources(pod_fixed, current):
            raise forbidden(attrs, OVERHEAD_MISMATCH)
        return {"overhead": dict(pod_fixed) if pod_fixed is not None else None}

    @staticmethod
    def _scheduling(attrs: Attributes, pod: Mapping[str, Any], runtime_class: Mapping[str, Any]) -> JSONDict:
        """setScheduling."""
        scheduling = runtime_class.get("scheduling")
        if scheduling is None:
            return {}
        spec = pod_spec(pod)
        class_selector: Mapping[str, str] = scheduling.get("nodeSelector") or {}
        pod_selector = spec.get("nodeSelector")
        selector: Mapping[str, str] | None
        if pod_selector is None:
            selector = scheduling.get("nodeSelector")
        else:
            merged = dict(pod_selector)
            for key in sorted(class_selector):
                class_value = class_selector[key]
                if key in merged and merged[key] != class_value:
                    raise _conflict(attrs, key, class_value, merged[key])
                merged[key] = class_value
            selector = merged
        tolerations = merge_tolerations(spec.get("tolerations") or [], scheduling.get("tolerations") or [])
        return {"nodeSelector": selector, "tolerations": tolerations or None}


def _conflict(attrs: Attributes, key: str, class_value: str, pod_value: str) -> AdmissionError:
    return forbidden(
        attrs,
        f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {class_value}; "
        f"pod.spec.nodeSelector[{key}] = {pod_value}",
    )
