"""DefaultTolerationSeconds (mirrors plugin/pkg/admission/defaulttolerationseconds/admission.go).

Pods that do not already tolerate `node.kubernetes.io/not-ready` or `node.kubernetes.io/unreachable`
NoExecute get an Exists toleration for it with `tolerationSeconds` from the settings (300 by default).
"Already tolerate" is upstream's loose test: the key matches (or is empty) and the effect is NoExecute
(or empty); operator, value and seconds are not looked at.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kubetaint.admission.attributes import CREATE, UPDATE, Attributes
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin, is_pod_request, pod_spec, with_spec_fields

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_SECONDS = 300


def _tolerates(tolerations: list[Mapping[str, Any]], key: str) -> bool:
    return any(
        (t.get("key") or "") in (key, "") and (t.get("effect") or "") in ("NoExecute", "")
        for t in tolerations
    )


class DefaultTolerationSeconds(AdmissionPlugin):
    name: ClassVar[str] = "DefaultTolerationSeconds"
    looks_up = frozenset()
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods"})

    def __init__(
        self,
        not_ready_seconds: int = DEFAULT_SECONDS,
        unreachable_seconds: int = DEFAULT_SECONDS,
    ) -> None:
        self.not_ready_seconds = not_ready_seconds
        self.unreachable_seconds = unreachable_seconds

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        if not is_pod_request(attrs):
            return attrs.object
        pod = attrs.object
        assert pod is not None
        tolerations = list(pod_spec(pod).get("tolerations") or [])
        added = []
        for key, seconds in ((NOT_READY, self.not_ready_seconds), (UNREACHABLE, self.unreachable_seconds)):
            if not _tolerates(tolerations, key):
                added.append(
                    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
                )
        if not added:
            return pod
        return with_spec_fields(pod, tolerations=[*tolerations, *added])
