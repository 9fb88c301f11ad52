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
IdentityKey = tuple[str, tuple[tuple[str, int], ...], str]


def _plain(obj: Mapping[str, Any]) -> bool:
    """A plain dict pod with plain dict metadata, spec and (if any) status."""
    status = obj.get("status")
    return (
        type(obj) is dict
        and type(obj.get("spec")) is dict
        and type(obj.get("metadata")) is dict
        and (status is None or type(status) is dict)
    )


def _rest(obj: Mapping[str, Any]) -> str:
    return repr({k: v for k, v in obj.items() if k not in ("metadata", "spec")})


def pod_key(obj: Mapping[str, Any]) -> Key | None:
    """What pod admission reads of `obj` (a create request after defaulting), or None when the
    pod is not plain JSON (then it takes the full path)."""
    if not _plain(obj):
        return None
    spec = obj["spec"]
    masked = spec
    if "nodeName" in spec:
        masked = spec.copy()
        masked["nodeName"] = _ANY_NODE  # keeps its position: key order shows in the stored pod
    return str(obj["metadata"].get("namespace") or ""), repr(masked), _rest(obj)


def _identity_key(obj: JSON) -> IdentityKey:
    """pod_key with the spec's values (nodeName's aside) by identity: pods stamped from one
    template carry the very same objects, which cost nothing to compare."""
    spec = obj["spec"]
    values = tuple([(k, 0 if k == "nodeName" else id(v)) for k, v in spec.items()])
    return str(obj["metadata"].get("namespace") or ""), values, _rest(obj)


class _Admitted:
    """The admitted spec of the first pod of a key, and whether admission replaced it."""

    __slots__ = ("changed", "spec")

    def __init__(self, spec: JSON, changed: bool) -> None:
        self.spec = spec
        self.changed = changed


class BulkCreateMemo:
    """Pod admission results by `pod_key`, valid while the store takes no other write.

    The objects given meanwhile must not change (as stored objects, which they become parts of):
    entries are also found by the identities of a remembered pod's spec values, held with the
    entry so that no other object can take their ids."""

    def __init__(self, store: Store, limit: int = LIMIT) -> None:
        self._store = store
        self._limit = limit
        self._entries: dict[Key, _Admitted] = {}
        self._by_identity: dict[IdentityKey, tuple[tuple[Any, ...], _Admitted]] = {}
        self._resource_version = store.current_resource_version()

    def __len__(self) -> int:
        return len(self._entries)

    def admitted(self, obj: JSON) -> JSON | None:
        """`obj` as admission would return it, when a pod of its key was admitted since the last
        write that was not one of these creates; else None."""
        if not _plain(obj) or not self._current():
            return None
        held = self._by_identity.get(_identity_key(obj))
        if held is not None:
            entry: _Admitted | None = held[1]
        else:
            key = pod_key(obj)
            entry = self._entries.get(key) if key is not None else None
        if entry is None:
            return None
        if not entry.changed:
            return dict(obj)
        spec = entry.spec.copy()
        if "nodeName" in spec:
            spec["nodeName"] = obj["spec"]["nodeName"]
        return {**obj, "spec": spec}

    def remember(self, obj: JSON, admitted: JSON) -> None:
        """Record admission's result for `obj` (just computed, with the store as it is now),
        when it has the shape `admitted` reproduces: only the spec replaced, nodeName kept."""
        key = pod_key(obj)
        if key is None or not self._current():
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
            self._clear()
        entry = self._entries[key] = _Admitted(admitted_spec, admitted_spec is not spec)
        self._by_identity[_identity_key(obj)] = (tuple(spec.values()), entry)

    def stored(self, created: Mapping[str, Any]) -> None:
        """A pod create was committed as `created`. The entries stay valid when it was the only
        write since the last one seen (its resourceVersion is the next one)."""
        try:
            resource_version = int(created["metadata"]["resourceVersion"])
        except (KeyError, TypeError, ValueError):
            resource_version = -1
        if resource_version != self._resource_version + 1:
            self._clear()
        self._resource_version = resource_version

    def _current(self) -> bool:
        """Whether the entries still hold: no write since the last one seen. When not, they are
        dropped (a Namespace, PriorityClass or RuntimeClass may have changed) and the memo
        starts afresh from the store as it is now."""
        current = self._store.current_resource_version()
        if current == self._resource_version:
            return True
        self._clear()
        self._resource_version = current
        return False

    def _clear(self) -> None:
        self._entries.clear()
        self._by_identity.clear()
