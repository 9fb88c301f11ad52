"""helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go): the selector of the
system default spread constraints for a pod, merged from the selectors of the Services selecting it
and of the ReplicaSet or StatefulSet controlling it. ReplicationControllers are not served: a pod
one controls is reported (unmodelled.pod_warnings), its selector is never merged in.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from kubetaint.api.selectors import LabelSelector, Requirement
from kubetaint.scheduler.affinity_terms import TermError, _selector
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.speed.memo import Memo

_EVERYTHING_EMPTY = LabelSelector()
_NO_REQUIREMENTS: tuple[Requirement, ...] = ()
#: A ReplicaSet's or StatefulSet's selector requirements by the selector's content when it holds
#: matchLabels only (its label pairs in order; a workload's status writes change its
#: resourceVersion, never its selector), else by (namespace, name, uid, resourceVersion); none
#: when the selector is nil or does not parse: the same content always parses alike.
_RS_SELECTORS: Memo[Hashable, tuple[Requirement, ...]] = Memo(
    "scheduler.default_selector.replica_set_selectors", 1 << 12
)
_SS_SELECTORS: Memo[Hashable, tuple[Requirement, ...]] = Memo(
    "scheduler.default_selector.stateful_set_selectors", 1 << 12
)
#: A Service's spec.selector as a label set by (namespace, name, uid, resourceVersion).
_SERVICE_SELECTORS: Memo[tuple[str, str, Any, Any], tuple[tuple[str, str], ...]] = Memo(
    "scheduler.default_selector.service_selectors", 1 << 12
)
_NO_SERVICE_SELECTOR: tuple[tuple[str, str], ...] = ()
#: ownerReference kinds (schema.ParseGroupVersion(apiVersion).WithKind(kind)) DefaultSelector reads
RS_KIND = ("apps", "v1", "ReplicaSet")
SS_KIND = ("apps", "v1", "StatefulSet")


def _version_key(obj: Mapping[str, Any]) -> tuple[tuple[str, str, Any, Any], Any]:
    meta = obj.get("metadata") or {}
    version = meta.get("resourceVersion")
    return (meta.get("namespace") or "default", meta.get("name") or "", meta.get("uid"), version), version


def _service_selector(svc: Mapping[str, Any]) -> tuple[tuple[str, str], ...] | None:
    """A Service's spec.selector as (key, value) pairs; None for a nil selector (it selects nothing)."""
    key, version = _version_key(svc)
    known = _SERVICE_SELECTORS.get(key) if version else None
    if known is not None:
        return known if known is not _NO_SERVICE_SELECTOR else None
    raw = (svc.get("spec") or {}).get("selector")
    pairs = (
        tuple((str(k), str(v)) for k, v in raw.items() if isinstance(v, str))
        if isinstance(raw, Mapping)
        else _NO_SERVICE_SELECTOR
    )
    if version:
        _SERVICE_SELECTORS.put(key, pairs)
    return pairs if isinstance(raw, Mapping) else None


def _selector_key(obj: Mapping[str, Any]) -> Hashable | None:
    """The memo key of a workload's spec.selector: its matchLabels pairs in order when it holds
    nothing else, else the stored version's key (None without a resourceVersion)."""
    raw = (obj.get("spec") or {}).get("selector")
    if type(raw) is dict and raw.keys() == {"matchLabels"}:
        labels = raw["matchLabels"]
        if type(labels) is dict and all(type(k) is str and type(v) is str for k, v in labels.items()):
            return tuple(labels.items())
    key, version = _version_key(obj)
    return key if version else None


def _workload_requirements(
    obj: Mapping[str, Any], memo: Memo[Hashable, tuple[Requirement, ...]]
) -> tuple[Requirement, ...]:
    """metav1.LabelSelectorAsSelector(spec.selector).Requirements(): none for a nil selector
    (labels.Nothing) or one that does not parse."""
    key = _selector_key(obj)
    known = memo.get(key) if key is not None else None
    if known is not None:
        return known
    try:
        selector = _selector((obj.get("spec") or {}).get("selector"))
    except TermError:
        selector = None
    found = selector.requirements if selector is not None else _NO_REQUIREMENTS
    return memo.put(key, found) if key is not None else found


def _controller_kind(ref: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """schema.ParseGroupVersion(ref.apiVersion).WithKind(ref.kind), None when it does not parse."""
    api_version = str(ref.get("apiVersion") or "")
    if api_version.count("/") > 1:
        return None
    group, _, version = api_version.rpartition("/")
    return group, version, str(ref.get("kind") or "")


def default_selector(pod: Mapping[str, Any], listers: ClusterListers | None) -> LabelSelector:
    """helper.DefaultSelector: the label sets of the pod's namespace's Services whose selector
    matches the pod, merged, with the selector of the pod's controller (first ownerReference with
    controller true) when it is a known ReplicaSet or StatefulSet. ReplicationControllers are not
    served, so none is ever known (unmodelled.pod_warnings reports a pod they control)."""
    if listers is None:
        return _EVERYTHING_EMPTY
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    labels = meta.get("labels") or {}
    label_set: dict[str, str] = {}
    for svc in listers.services(namespace):
        pairs = _service_selector(svc)
        if pairs is not None and all(labels.get(k) == v for k, v in pairs):
            label_set.update(pairs)
    requirements: tuple[Requirement, ...] = tuple((k, "=", (v,)) for k, v in sorted(label_set.items()))
    owner = next(
        (r for r in meta.get("ownerReferences") or () if isinstance(r, Mapping) and r.get("controller")), None
    )
    if owner is not None:
        kind = _controller_kind(owner)
        name = str(owner.get("name") or "")
        workload = None
        memo = _RS_SELECTORS
        if kind == RS_KIND:
            workload = listers.replica_set(namespace, name)
        elif kind == SS_KIND:
            workload, memo = listers.stateful_set(namespace, name), _SS_SELECTORS
        if workload is not None:
            requirements += _workload_requirements(workload, memo)
    return LabelSelector(requirements) if requirements else _EVERYTHING_EMPTY
