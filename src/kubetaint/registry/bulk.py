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

A DaemonSet's pods differ besides in their node-name affinity (ReplaceDaemonSetPodNodeNameNodeAffinity:
the required node affinity is exactly one term holding exactly `metadata.name In [node]`). No
admission plugin reads or writes spec.affinity, and validation reads of that value only what
upstream's validateNodeFieldSelectorRequirement does: ValidateNodeName (a DNS subdomain; the
requirement's key, operator and value count are in the key). So that value is masked in keys as
nodeName is, when it is a string; a pod found by such a key is taken over only when its own value
is a valid node name (else it is admitted and validated afresh), and gets its own affinity object.

The look-ups are made again for each pod, except inside `Registry.bulk_creates`, where the
store's resourceVersion shows that nothing but these pod creates was written since (a scenario
being loaded): entries are trusted by the store's resourceVersion, never by object identity.
Object validation still runs on every pod; rejections are never remembered (each
rejected pod goes through admission afresh, so its message names it). In reference mode
(`kubetaint.speed.reference`) nothing is remembered: every pod is admitted afresh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.admission.lookup import ObjectLookup
from kubetaint.api.validation.names import name_is_dns_subdomain
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode
from kubetaint.store.interface import JSON, Store

#: Entries kept before the memo starts afresh (distinct pod templates).
LIMIT = 1 << 12
#: Stands for every nodeName value in a key (never read by admission, see the module docstring).
_ANY_NODE = "\x00node"

Rest = tuple[tuple[str | tuple[str], str | tuple[str]], ...]
Key = tuple[str, str, Rest]
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


def _rest(obj: Mapping[str, Any]) -> Rest:
    """A pod's top-level fields but metadata and spec, in their order: each key and value as it
    is when a string, else as its repr in a 1-tuple (never equal to a string). Equal for two pods
    only when the repr of those fields is (a dict of them, as keys compared before)."""
    return tuple(
        [
            (k if type(k) is str else (repr(k),), v if type(v) is str else (repr(v),))
            for k, v in obj.items()
            if k not in _NOT_REST
        ]
    )


_NOT_REST = frozenset({"metadata", "spec"})


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_NODE_FIELD_KEYS = ["key", "operator", "values"]


def affinity_node(spec: Mapping[str, Any]) -> str | None:
    """The node of `spec`'s node-name affinity: its required node affinity is exactly one term
    holding exactly one field requirement `metadata.name In [node]`, node a string (what the
    DaemonSet controller gives each of its pods); else None. Plain JSON only."""
    affinity = spec.get("affinity")
    if type(affinity) is not dict:
        return None
    node_affinity = affinity.get("nodeAffinity")
    if type(node_affinity) is not dict:
        return None
    required = node_affinity.get(_REQUIRED)
    if type(required) is not dict:
        return None
    terms = required.get("nodeSelectorTerms")
    if type(terms) is not list or len(terms) != 1:
        return None
    term = terms[0]
    if type(term) is not dict or len(term) != 1:
        return None
    fields = term.get("matchFields")
    if type(fields) is not list or len(fields) != 1:
        return None
    req = fields[0]
    if type(req) is not dict or list(req) != _NODE_FIELD_KEYS:
        return None
    values = req["values"]
    if req["key"] != "metadata.name" or req["operator"] != "In" or type(values) is not list:
        return None
    if len(values) != 1 or type(values[0]) is not str:
        return None
    return values[0]


def _masked_affinity(affinity: JSON) -> JSON:
    """`affinity` (of a spec affinity_node reads) with the node as _ANY_NODE, every other key
    kept in place."""
    node_affinity = affinity["nodeAffinity"]
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [_ANY_NODE]}]}
    required = {**node_affinity[_REQUIRED], "nodeSelectorTerms": [term]}
    return {**affinity, "nodeAffinity": {**node_affinity, _REQUIRED: required}}


def pod_key(obj: Mapping[str, Any]) -> Key | None:
    """What pod admission reads of `obj` (a create request after defaulting), or None when the
    pod is not plain JSON (then it takes the full path)."""
    if not _plain(obj):
        return None
    return str(obj["metadata"].get("namespace") or ""), _spec_text(obj["spec"]), _rest(obj)


def _spec_text(spec: JSON) -> str:
    """The repr of `spec` with nodeName's value, and a node-name affinity's node, masked."""
    masked = spec
    if "nodeName" in spec:
        masked = spec.copy()
        masked["nodeName"] = _ANY_NODE  # keeps its position: key order shows in the stored pod
    if "affinity" in spec and affinity_node(spec) is not None:
        masked = masked.copy() if masked is not spec else spec.copy()
        masked["affinity"] = _masked_affinity(spec["affinity"])
    return repr(masked)


def _same_but_node_name(spec: JSON, other: JSON) -> bool:
    """Whether `spec` holds the very same values as `other` under the same keys in the same
    order, but for nodeName's value (which _spec_text masks): their texts are the same."""
    if len(spec) != len(other):
        return False
    for (key, value), (other_key, other_value) in zip(spec.items(), other.items()):  # noqa: B905
        if key != other_key or (value is not other_value and key != "nodeName"):
            return False
    return True


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
    admission looked up for it, the validator that accepted it, and whether its key masks a
    node-name affinity (each pod then keeps its own)."""

    __slots__ = ("calls", "changed", "own_affinity", "spec", "validator")

    def __init__(
        self, spec: JSON, changed: bool, calls: tuple[Call, ...], validator: object, own_affinity: bool
    ) -> None:
        self.spec = spec
        self.changed = changed
        self.calls = calls
        self.validator = validator
        self.own_affinity = own_affinity


class PodAdmissionMemo:
    """Pod admission results by `pod_key`, valid while the look-ups they made answer the same
    (in bulk: while the store's resourceVersion shows no other write)."""

    def __init__(self, store: Store, lookup: ObjectLookup, limit: int = LIMIT) -> None:
        self._store = store
        self._lookup = lookup
        self._entries: Memo[Key, _Admitted] = Memo("registry.bulk.pod_admissions", limit=limit)
        #: In bulk: the store's resourceVersion after the last write seen (else None).
        self._bulk_resource_version: int | None = None
        #: reference mode (read when the memo is made): nothing is remembered
        self._reference = reference_mode()
        #: the spec last keyed and its _spec_text (read-only: a request handed over, then stored)
        self._last_spec: tuple[JSON, str] | None = None

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
        self._last_spec = None

    def admitted(self, obj: JSON, validator: object) -> JSON | None:
        """`obj` as admission would return it, when a pod of its key was admitted, with equal
        look-up results, and accepted by `validator`; else None (always in reference mode)."""
        if not _plain(obj) or self._reference:
            return None
        entry = self._entries.get(self._key(obj))
        if entry is None or entry.validator is not validator:
            return None
        if entry.own_affinity:
            node = affinity_node(obj["spec"])
            if node is None or name_is_dns_subdomain(node):  # the one check that reads it failed
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
        if entry.own_affinity:
            spec["affinity"] = obj["spec"]["affinity"]
        return {**obj, "spec": spec}

    def remember(self, obj: JSON, admitted: JSON, calls: Sequence[Call], validator: object) -> None:
        """Record admission's result for `obj` (just computed with the look-ups `calls`), when it
        has the shape `admitted` reproduces: only the spec replaced, nodeName kept."""
        if not _plain(obj):
            return
        key = self._key(obj)
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
        own_affinity = "affinity" in spec and affinity_node(spec) is not None
        if own_affinity and admitted_spec.get("affinity") is not spec["affinity"]:
            return
        entry = _Admitted(admitted_spec, admitted_spec is not spec, tuple(calls), validator, own_affinity)
        self._entries.put(key, entry)

    def _key(self, obj: JSON) -> Key:
        """pod_key(obj) of a plain pod (the caller checked). In bulk, the spec's text is taken
        from the last spec keyed when `obj`'s spec holds the very same values but for nodeName's
        (a scenario's pods of one template share their spec parts: `sim.sharing`)."""
        spec = obj["spec"]
        last = self._last_spec
        if last is not None and _same_but_node_name(spec, last[0]):
            text = last[1]
        else:
            text = _spec_text(spec)
            # only in bulk, where the pods are the scenario's own: outside, a Python API caller
            # may change its own lists between creates
            self._last_spec = (spec, text) if self._bulk_resource_version is not None else None
        return str(obj["metadata"].get("namespace") or ""), text, _rest(obj)

    def stored(self, created: Mapping[str, Any]) -> None:
        """A pod create was committed as `created`. In bulk, the entries stay when it was the
        only write since the last one seen (its resourceVersion is the next one)."""
        if self._bulk_resource_version is None:
            return
        resource_version = _resource_version(created)
        if resource_version != self._bulk_resource_version + 1:
            self._clear()
        self._bulk_resource_version = resource_version

    def stored_run(self, created: Sequence[Mapping[str, Any]]) -> None:
        """`stored` of each pod of `created`, the results of one store commit of pod creates in
        order (each write of a commit takes the next resourceVersion): the run was the only write
        since the last one seen when its first pod's resourceVersion is that one's plus one and
        its last pod's that one's plus the run's length; otherwise each pod is looked at."""
        if self._bulk_resource_version is None or not created:
            return
        expected = self._bulk_resource_version + len(created)
        if _resource_version(created[0]) == self._bulk_resource_version + 1 and (
            _resource_version(created[-1]) == expected
        ):
            self._bulk_resource_version = expected
            return
        for pod in created:
            self.stored(pod)

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


def _resource_version(created: Mapping[str, Any]) -> int:
    """A stored object's resourceVersion as a number (-1 when it has none)."""
    try:
        return int(created["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return -1
