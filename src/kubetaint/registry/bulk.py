"""Admission results shared by pods created in bulk from one template (bookkeeping only: the pods
stored, their order, resourceVersions and uids are those of creating them one by one).

Loading a scenario creates thousands of pods that differ only in metadata (names, labels) and
`spec.nodeName`. The pod admission plugins (Priority, DefaultTolerationSeconds,
PodTolerationRestriction, ExtendedResourceToleration, RuntimeClass) read from a pod only its
spec without nodeName, its status (PodTolerationRestriction's QoS class honours
`status.qosClass`) and the request's namespace, and from the store only Namespaces,
PriorityClasses and RuntimeClasses; they write only the spec, never nodeName. So a pod whose
namespace, top-level fields other than metadata, and spec apart from nodeName's value equal
(by repr, which tells every JSON value and type apart) those of a pod admitted before, while the
store has taken no write but these pod creates since, is admitted exactly like it: its spec
becomes that pod's admitted spec with its own nodeName. Object validation still runs on every
pod; rejections are never remembered (each rejected pod goes through admission afresh, so its
message names it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.store.interface import JSON, Store

#: Entries kept before the memo starts afresh (distinct templates in one load).
LIMIT = 1 << 12
#: Stands for every nodeName value in a key (never read by admission, see the module docstring).
_ANY_NODE = "\x00node"

Key = tuple[str, str, str]


def pod_key(obj: Mapping[str, Any]) -> Key | None:
    """What pod admission reads of `obj` (a create request after defaulting), or None when the
    pod is not a plain dict with a plain dict spec and status (then it takes the full path)."""
    spec = obj.get("spec")
    status = obj.get("status")
    meta = obj.get("metadata")
    if type(obj) is not dict or type(spec) is not dict or type(meta) is not dict:
        return None
    if status is not None and type(status) is not dict:
        return None
    masked = spec
    if "nodeName" in spec:
        masked = spec.copy()
        masked["nodeName"] = _ANY_NODE  # keeps its position: key order shows in the stored pod
    rest = {k: v for k, v in obj.items() if k not in ("metadata", "spec")}
    return str(meta.get("namespace") or ""), repr(masked), repr(rest)


class _Admitted:
    """The admitted spec of the first pod of a key, and whether admission replaced it."""

    __slots__ = ("changed", "spec")

    def __init__(self, spec: JSON, changed: bool) -> None:
        self.spec = spec
        self.changed = changed


class BulkCreateMemo:
    """Pod admission results by `pod_key`, valid while the store takes no other write."""

    def __init__(self, store: Store, limit: int = LIMIT) -> None:
        self._store = store
        self._limit = limit
        self._entries: dict[Key, _Admitted] = {}
        self._resource_version = store.current_resource_version()

    def __len__(self) -> int:
        return len(self._entries)

    def admitted(self, key: Key, obj: JSON) -> JSON | None:
        """`obj` as admission would return it, when a pod of `key` was admitted since the last
        write that was not one of these creates; else None."""
        if not self._current():
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        if not entry.changed:
            return dict(obj)
        spec = entry.spec.copy()
        if "nodeName" in spec:
            spec["nodeName"] = obj["spec"]["nodeName"]
        return {**obj, "spec": spec}

    def remember(self, key: Key, obj: JSON, admitted: JSON) -> None:
        """Record admission's result for `obj` (just computed, with the store as it is now),
        when it has the shape `admitted` reproduces: only the spec replaced, nodeName kept."""
        if not self._current():
            return
        spec, admitted_spec = obj["spec"], admitted.get("spec")
        if type(admitted_spec) is not dict or list(admitted) != list(obj):
            return
        if any(admitted[k] is not v for k, v in obj.items() if k != "spec"):
            return
        if ("nodeName" in spec) != ("nodeName" in admitted_spec) or (
            admitted_spec.get("nodeName") is not spec.get("nodeName")
        ):
            return
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[key] = _Admitted(admitted_spec, admitted_spec is not spec)

    def stored(self, created: Mapping[str, Any]) -> None:
        """A pod create was committed as `created`. The entries stay valid when it was the only
        write since the last one seen (its resourceVersion is the next one)."""
        try:
            resource_version = int(created["metadata"]["resourceVersion"])
        except (KeyError, TypeError, ValueError):
            resource_version = -1
        if resource_version != self._resource_version + 1:
            self._entries.clear()
        self._resource_version = resource_version

    def _current(self) -> bool:
        """Whether the entries still hold: no write since the last one seen. When not, they are
        dropped (a Namespace, PriorityClass or RuntimeClass may have changed) and the memo
        starts afresh from the store as it is now."""
        current = self._store.current_resource_version()
        if current == self._resource_version:
            return True
        self._entries.clear()
        self._resource_version = current
        return False
