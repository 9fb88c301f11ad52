"""TaintNodesByCondition (mirrors plugin/pkg/admission/nodetaint/admission.go).

A Node being created gets `node.kubernetes.io/not-ready:NoSchedule` unless it already has a taint
with that key and effect (the value is ignored), so nothing schedules there before the node
lifecycle controller has seen it Ready.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, Attributes
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin

NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


class TaintNodesByCondition(AdmissionPlugin):
    name: ClassVar[str] = "TaintNodesByCondition"
    looks_up = frozenset()
    operations: ClassVar[frozenset[str]] = frozenset({CREATE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"nodes"})

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        node = attrs.object
        if attrs.resource != "nodes" or attrs.subresource or not isinstance(node, Mapping):
            return node
        spec = node.get("spec") or {}
        taints = list(spec.get("taints") or [])
        for taint in taints:
            if (
                taint.get("key") == NOT_READY_TAINT["key"]
                and taint.get("effect") == NOT_READY_TAINT["effect"]
            ):
                return node
        return {**node, "spec": {**spec, "taints": [*taints, dict(NOT_READY_TAINT)]}}
