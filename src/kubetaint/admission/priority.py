"""Priority (mirrors plugin/pkg/admission/priority/admission.go).

Pods (CREATE): `priorityClassName` is resolved to `spec.priority` and `spec.preemptionPolicy`; without
a class the global default class is used (the lowest value if several claim it), or priority 0 and
PreemptLowerPriority when none exists. A pod that sets its own different priority or preemption
policy, or names an unknown class, is rejected. Pods (UPDATE) keep the old priority and policy.
PriorityClasses (CREATE/UPDATE): a second global default is rejected.

kube-apiserver creates the built-in `system-cluster-critical` (2000000000) and `system-node-critical`
(2000001000) classes at start-up; they resolve here even when the store does not hold them.
The value check for user classes (above 1000000000) belongs to PriorityClass validation upstream
(pkg/apis/scheduling/validation); it is applied here too, with validation's 422 message, so that a
host without that validation still refuses such a class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.errors import forbidden, invalid
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin, pod_spec, with_spec_fields

JSONDict = dict[str, Any]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
#: The GroupResource of PriorityClasses (what admission attributes name).
PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"

SYSTEM_PRIORITY_CLASSES: dict[str, JSONDict] = {
    name: {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "preemptionPolicy": PREEMPT_LOWER_PRIORITY,
        "description": description,
    }
    for name, value, description in (
        (
            "system-node-critical",
            SYSTEM_CRITICAL_PRIORITY + 1000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            SYSTEM_CRITICAL_PRIORITY,
            "Used for system critical pods that must run in the cluster, but can be moved to another node "
            "if necessary.",
        ),
    )
}


def _preemption_policy(pc: Mapping[str, Any]) -> str:
    # Stored PriorityClasses are defaulted to PreemptLowerPriority by the v1 API.
    return str(pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY)


class Priority(AdmissionPlugin):
    name: ClassVar[str] = "Priority"
    looks_up = frozenset({"priorityclasses"})
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE, DELETE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods", PRIORITY_CLASSES})
    validating: ClassVar[bool] = True

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        pod = attrs.object
        if attrs.subresource or attrs.resource != "pods" or not isinstance(pod, Mapping):
            return pod
        if attrs.operation == UPDATE:
            return self._keep_old_priority(pod, attrs.old_object or {})
        if attrs.operation != CREATE:
            return pod
        spec = pod_spec(pod)
        class_name = str(spec.get("priorityClassName") or "")
        changes: JSONDict = {}
        if not class_name:
            default = self.default_priority_class(lookup)
            if default is None:
                priority, policy = DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS, PREEMPT_LOWER_PRIORITY
            else:
                priority, policy = int(default.get("value") or 0), _preemption_policy(default)
                changes["priorityClassName"] = default["metadata"]["name"]
        else:
            pc = self.priority_class(lookup, class_name)
            if pc is None:
                raise forbidden(attrs, f"no PriorityClass with name {class_name} was found")
            priority, policy = int(pc.get("value") or 0), _preemption_policy(pc)
        own = spec.get("priority")
        if own is not None and own != priority:
            raise forbidden(
                attrs,
                f"the integer value of priority ({own}) must not be provided in pod spec; priority admission "
                f"controller computed {priority} from the given PriorityClass name",
            )
        own_policy = spec.get("preemptionPolicy")
        if own_policy is not None and own_policy != policy:
            raise forbidden(
                attrs,
                f"the string value of PreemptionPolicy ({own_policy}) must not be provided in pod spec; "
                f"priority admission controller computed {policy} from the given PriorityClass name",
            )
        return with_spec_fields(pod, **changes, priority=priority, preemptionPolicy=policy)

    @staticmethod
    def _keep_old_priority(pod: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any]:
        """Priority is set on create; an update that drops it gets the stored value back."""
        spec, old_spec = pod_spec(pod), pod_spec(old)
        kept = {
            field: old_spec[field]
            for field in ("priority", "preemptionPolicy")
            if spec.get(field) is None and old_spec.get(field) is not None
        }
        return with_spec_fields(pod, **kept) if kept else pod

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        pc = attrs.object
        if attrs.subresource or attrs.resource != PRIORITY_CLASSES or not isinstance(pc, Mapping):
            return
        if attrs.operation not in (CREATE, UPDATE):
            return
        name = str((pc.get("metadata") or {}).get("name") or attrs.name)
        value = pc.get("value")
        if (
            not name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX)
            and isinstance(value, int)
            and value > HIGHEST_USER_DEFINABLE_PRIORITY
        ):
            limit = HIGHEST_USER_DEFINABLE_PRIORITY
            message = f"Forbidden: maximum allowed value of a user defined priority is {limit}"
            raise invalid(
                "PriorityClass", "priorityclasses", name,
                [{"reason": "FieldValueForbidden", "message": message, "field": "value"}],
            )  # fmt: skip
        if not pc.get("globalDefault"):
            return
        current = self.default_priority_class(lookup)
        if current is None:
            return
        current_name = current["metadata"]["name"]
        if attrs.operation == CREATE or current_name != name:
            raise forbidden(
                attrs,
                f"PriorityClass {current_name} is already marked as default. Only one default can exist",
            )

    @staticmethod
    def priority_class(lookup: ObjectLookup, name: str) -> Mapping[str, Any] | None:
        """The stored class, or the built-in system class of that name."""
        return lookup.get("priorityclasses", "", name) or SYSTEM_PRIORITY_CLASSES.get(name)

    @staticmethod
    def default_priority_class(lookup: ObjectLookup) -> Mapping[str, Any] | None:
        """getDefaultPriorityClass: among global defaults, the one with the lowest value."""
        best: Mapping[str, Any] | None = None
        for pc in lookup.list("priorityclasses"):
            if pc.get("globalDefault") and (
                best is None or int(best.get("value") or 0) > int(pc.get("value") or 0)
            ):
                best = pc
        return best
