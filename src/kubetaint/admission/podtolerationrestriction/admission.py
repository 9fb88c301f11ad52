"""PodTolerationRestriction (mirrors plugin/pkg/admission/podtolerationrestriction/admission.go).

Admit (CREATE and UPDATE of pods):
- on CREATE, the namespace's `scheduler.alpha.kubernetes.io/defaultTolerations` (or, when the
  annotation is absent, the cluster `default`) are merged into the pod's tolerations;
- any pod that is not BestEffort also gets `node.kubernetes.io/memory-pressure:NoSchedule` (Exists);
- merging uses MergeTolerations, so tolerations already covered by a superset are dropped.
Validate: the resulting tolerations must each be covered by the namespace's
`scheduler.alpha.kubernetes.io/tolerationsWhitelist` (or, when absent, the cluster `whitelist`).
An annotation that is present but empty overrides the cluster setting with an empty list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, UPDATE, Attributes
from kubetaint.admission.errors import forbidden, not_found
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin, is_pod_request, pod_spec, with_spec_fields
from kubetaint.admission.podtolerationrestriction.config import Configuration
from kubetaint.admission.podtolerationrestriction.decode import DecodeError, parse_tolerations_json
from kubetaint.api.features import FeatureGates
from kubetaint.core.qos import BEST_EFFORT, pod_qos_class
from kubetaint.core.tolerations import merge_tolerations, verify_against_whitelist

JSONDict = dict[str, Any]

NS_DEFAULT_TOLERATIONS = "scheduler.alpha.kubernetes.io/defaultTolerations"
NS_WL_TOLERATIONS = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
MEMORY_PRESSURE_TOLERATION: JSONDict = {
    "key": "node.kubernetes.io/memory-pressure",
    "operator": "Exists",
    "effect": "NoSchedule",
}


class PodTolerationRestriction(AdmissionPlugin):
    name: ClassVar[str] = "PodTolerationRestriction"
    looks_up = frozenset({"namespaces"})
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods"})
    validating: ClassVar[bool] = True

    def __init__(
        self, config: Configuration | None = None, feature_gates: FeatureGates | None = None
    ) -> None:
        self.config = config or Configuration()
        self.feature_gates = feature_gates

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        if not is_pod_request(attrs):
            return attrs.object
        pod = attrs.object
        assert pod is not None
        extra: list[JSONDict] = []
        if attrs.operation == CREATE:
            defaults = self._namespace_tolerations(attrs, lookup, NS_DEFAULT_TOLERATIONS)
            extra = list(self.config.default if defaults is None else defaults)
        if pod_qos_class(pod, feature_gates=self.feature_gates) != BEST_EFFORT:
            extra.append(dict(MEMORY_PRESSURE_TOLERATION))
        if extra:
            merged = merge_tolerations(list(pod_spec(pod).get("tolerations") or []), extra)
            pod = with_spec_fields(pod, tolerations=merged)
        self.validate(attrs.with_object(pod), lookup)
        return pod

    def validate(self, attrs: Attributes, lookup: ObjectLookup) -> None:
        if not is_pod_request(attrs):
            return
        assert attrs.object is not None
        tolerations = pod_spec(attrs.object).get("tolerations") or []
        if not tolerations:
            return
        whitelist = self._namespace_tolerations(attrs, lookup, NS_WL_TOLERATIONS)
        scope = "namespace"
        if whitelist is None:
            whitelist, scope = self.config.whitelist, "cluster"
        if whitelist and not verify_against_whitelist(tolerations, whitelist):
            raise forbidden(
                attrs,
                "pod tolerations (possibly merged with namespace default tolerations) conflict with its "
                f"{scope} whitelist",
            )

    def _namespace_tolerations(
        self, attrs: Attributes, lookup: ObjectLookup, key: str
    ) -> list[JSONDict] | None:
        """extractNSTolerations: None when the annotation is absent, [] when it is empty."""
        namespace = lookup.get("namespaces", "", attrs.namespace)
        if namespace is None:
            raise not_found("namespaces", attrs.namespace)
        annotations = (namespace.get("metadata") or {}).get("annotations") or {}
        if key not in annotations:
            return None
        text = annotations[key]
        if not text:
            return []
        try:
            return parse_tolerations_json(str(text))
        except DecodeError as error:
            raise forbidden(attrs, str(error)) from None
