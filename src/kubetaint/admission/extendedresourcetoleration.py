"""ExtendedResourceToleration (mirrors plugin/pkg/admission/extendedresourcetoleration/admission.go).

For every extended resource requested by a container or init container (sorted by name), the pod
gets `{key: <resource>, operator: Exists, effect: NoSchedule}` through AddOrUpdateTolerationInPod,
so nodes tainted with the resource name accept exactly the pods that use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, UPDATE, Attributes
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin, is_pod_request, pod_spec, with_spec_fields
from kubetaint.api.validation.quantities import is_native_resource
from kubetaint.core.matching import add_or_update_toleration

REQUESTS_PREFIX = "requests."
_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName without messages: optional DNS subdomain prefix, `/`, a name."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and _NAME.fullmatch(name) is not None


def is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: not native, not `requests.`-prefixed, and valid as a quota name."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return is_qualified_name(REQUESTS_PREFIX + name)


def requested_extended_resources(spec: Mapping[str, Any]) -> list[str]:
    names: set[str] = set()
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or ():
            requests = (container.get("resources") or {}).get("requests") or {}
            names.update(name for name in requests if is_extended_resource_name(name))
    return sorted(names)


class ExtendedResourceToleration(AdmissionPlugin):
    name: ClassVar[str] = "ExtendedResourceToleration"
    looks_up = frozenset()
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods"})

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        if not is_pod_request(attrs):
            return attrs.object
        pod = attrs.object
        assert pod is not None
        spec = pod_spec(pod)
        resources = requested_extended_resources(spec)
        if not resources:
            return pod
        tolerations = list(spec.get("tolerations") or [])
        for resource in resources:
            tolerations = add_or_update_toleration(
                tolerations, {"key": resource, "operator": "Exists", "effect": "NoSchedule"}
            )
        return with_spec_fields(pod, tolerations=tolerations)
