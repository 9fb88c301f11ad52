"""Pod admission results shared by pods stamped from one template (bookkeeping only: the pods
stored, their order, resourceVersions and uids are those of admitting each afresh).

A scenario's pods and a ReplicaSet's replicas differ only in metadata (names, labels, owners) and
`spec.nodeName`. The pod admission plugins (Priority, DefaultTolerationSeconds,
PodTolerationRestriction, ExtendedResourceToleration, RuntimeClass) read from a pod only its
spec without nodeName, its status (PodTolerationRestriction's QoS class honours
`status.qosClass`) and the request's namespace, plus what they look up (Namespaces,
PriorityClasses, RuntimeClasses); they write only the spec, never nodeName, and they are
deterministic. So a pod whose namespace, top-level fields other than metadata, and spec apart
from nodeName's value equal (by repr, which tells every JSON value and type apart) those of a pod
admitted before, while every look-up that admission made then returns an equal result now, is
admitted exactly like it: its spec becomes that pod's admitted spec with its own nodeName.

The look-ups are made again for each pod, except inside `Registry.bulk_creates`, where the
store's resourceVersion shows that nothing but these pod creates was written since (a scenario
being loaded). Object validation still runs on every pod; rejections are never remembered (each
rejected pod goes through admission afresh, so its message names it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.admission.lookup import ObjectLookup
from kubetaint.store.interface import JSON, Store

#: Entries kept before the memo starts afresh (distinct pod templates).
LIMIT = 1 << 12
#: Stands for every nodeName value in a key (never read by admission, see the module docstring).
_ANY_NODE = "\x00node"

Key = tuple[str, str, str]
IdentityKey = tuple[str, tuple[tuple[str, int], ...], str]
#: A look-up admission made: ("get", (resource, namespace, name), result) or ("list", (resource,), result).
Call = tuple[str, tuple[str, ...], Any]


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
    """The repr of a pod's top-level fields but metadata and spec (in their order)."""
    rest = dict(obj)
    rest.pop("metadata", None)
    rest.pop("spec", None)
    return repr(rest)


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


class RecordingLookup:
    """An ObjectLookup that records every look-up and its result."""

    def __init__(self, inner: ObjectLookup) -> None:
        self._inner = inner
        self.calls: list[Call] = []

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        found = self._inner.get(resource, namespace, name)
        self.calls.append(("get", (resource, namespace, name), found))
        return found

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        found = self._inner.list(resource)
        self.calls.append(("list", (resource,), list(found)))
        return found


def _same_results(lookup: ObjectLookup, calls: Sequence[Call]) -> bool:
    """Whether every recorded look-up returns an equal result now."""
    for method, args, result in calls:
        if method == "get":
            now: Any = lookup.get(*args)
        else:
            now = list(lookup.list(*args))
        if now != result:
            return False
    return True


class _Admitted:
    """The admitted spec of the first pod of a key, whether admission replaced it, what
    admission looked up for it, and the validator that accepted it."""

    __slots__ = ("calls", "changed", "spec", "validator")

    def __init__(self, spec: JSON, changed: bool, calls: tuple[Call, ...], validator: object) -> None:
        self.spec = spec
        self.changed = changed
        self.calls = calls
        self.validator = validator


class PodAdmissionMemo:
    """Pod admission results by `pod_key`.

    In bulk, where the objects given do not change meanwhile (a scenario's own copy being
    loaded), entries are also found by the identities of a remembered pod's spec values, held
    with the entry so that no other object can take their ids."""

    def __init__(self, store: Store, lookup: ObjectLookup, limit: int = LIMIT) -> None:
        self._store = store
        self._lookup = lookup
        self._limit = limit
        self._entries: dict[Key, _Admitted] = {}
        self._by_identity: dict[IdentityKey, tuple[tuple[Any, ...], _Admitted]] = {}
        #: In bulk: the store's resourceVersion after the last write seen (else None).
        self._bulk_resource_version: int | None = None

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def in_bulk(self) -> bool:
        return self._bulk_resource_version is not None

    def start_bulk(self) -> None:
        """Pods are about to be created with (as a rule) no other write in between: entries are
        kept only while the store's resourceVersion shows none, and are not looked up again."""
        self._clear()
        self._bulk_resource_version = self._store.current_resource_version()

    def end_bulk(self) -> None:
        self._bulk_resource_version = None
        self._by_identity.clear()  # only a bulk's objects are known not to change meanwhile

    def admitted(self, obj: JSON, validator: object) -> JSON | None:
        """`obj` as admission would return it, when a pod of its key was admitted, with equal
        look-up results, and accepted by `validator`; else None."""
        if not _plain(obj):
            return None
        held = self._by_identity.get(_identity_key(obj)) if self._bulk_resource_version is not None else None
        if held is not None:
            entry: _Admitted | None = held[1]
        else:
            key = pod_key(obj)
            entry = self._entries.get(key) if key is not None else None
        if entry is None or entry.validator is not validator:
            return None
        if self._bulk_resource_version is not None:
            if not self._in_sync():
                return None
        elif not _same_results(self._lookup, entry.calls):
            return None
        if not entry.changed:
            return dict(obj)
        spec = entry.spec.copy()
        if "nodeName" in spec:
            spec["nodeName"] = obj["spec"]["nodeName"]
        return {**obj, "spec": spec}

    def remember(self, obj: JSON, admitted: JSON, calls: Sequence[Call], validator: object) -> None:
        """Record admission's result for `obj` (just computed with the look-ups `calls`), when it
        has the shape `admitted` reproduces: only the spec replaced, nodeName kept."""
        key = pod_key(obj)
        if key is None:
            return
        if self._bulk_resource_version is not None:
            self._in_sync()  # the entry describes the store as it is now
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
        entry = _Admitted(admitted_spec, admitted_spec is not spec, tuple(calls), validator)
        self._entries[key] = entry
        if self._bulk_resource_version is not None:
            self._by_identity[_identity_key(obj)] = (tuple(spec.values()), entry)

    def stored(self, created: Mapping[str, Any]) -> None:
        """A pod create was committed as `created`. In bulk, the entries stay when it was the
        only write since the last one seen (its resourceVersion is the next one)."""
        if self._bulk_resource_version is None:
            return
        try:
            resource_version = int(created["metadata"]["resourceVersion"])
        except (KeyError, TypeError, ValueError):
            resource_version = -1
        if resource_version != self._bulk_resource_version + 1:
            self._clear()
        self._bulk_resource_version = resource_version

    def _in_sync(self) -> bool:
        """In bulk: whether the store took no write since the last one seen; when it did, the
        entries are dropped (a Namespace, PriorityClass or RuntimeClass may have changed) and
        the memo starts afresh from the store as it is now."""
        current = self._store.current_resource_version()
        if current == self._bulk_resource_version:
            return True
        self._clear()
        self._bulk_resource_version = current
        return False

    def _clear(self) -> None:
        self._entries.clear()
        self._by_identity.clear()
