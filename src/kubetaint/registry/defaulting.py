"""The defaulting step of the write path: what kube-apiserver's decoder applies to a request's
object before admission (the SetDefaults_* functions of each kind's API group), and the Job
strategy's generated selector on create. `Registry.create` and `Registry.update` run it for
every write, so an HTTP request and an in-process write (the simulator, the controllers) store
the same object.

The kinds are declared in `DEFAULTERS` (by API group and kind). Pods are defaulted by the
registry's own pod path (`core.defaults.default_pod_requests`, which returns the pod itself when
nothing changes); Services are defaulted with their allocation (apiserver.rest), Secrets and
CustomResourceDefinitions by their strategies (apiserver.rest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.core.defaults import RBAC_GROUP, default_role_binding
from kubetaint.core.workload_defaults import DEFAULTERS as WORKLOAD_DEFAULTERS
from kubetaint.core.workload_defaults import with_generated_selector

JSON = dict[str, Any]

#: SetDefaults_* by (API group, kind): the workload, endpoint and storage kinds' and RBAC
#: bindings'.
DEFAULTERS: dict[tuple[str, str], Callable[[JSON], JSON]] = {
    **WORKLOAD_DEFAULTERS,
    (RBAC_GROUP, "RoleBinding"): default_role_binding,
    (RBAC_GROUP, "ClusterRoleBinding"): default_role_binding,
}

#: The kinds whose strategies' PrepareForCreate starts the status empty (phase Pending by default).
_EMPTY_STATUS_ON_CREATE = frozenset({("", "PersistentVolume"), ("", "PersistentVolumeClaim")})


def _group_kind(obj: JSON) -> tuple[str, str]:
    return str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind") or "")


def defaulted(obj: JSON) -> JSON:
    """`obj` (typed: apiVersion and kind set) with its kind's defaults; `obj` itself for a kind
    not declared."""
    defaulter = DEFAULTERS.get(_group_kind(obj))
    return defaulter(obj) if defaulter is not None else obj


def defaulted_for_create(obj: JSON) -> JSON:
    """`defaulted`, after the create strategies' status reset (PersistentVolume and claim), and
    for a Job carrying its uid (the generic store's, drawn by its creator) without
    `manualSelector`, the selector and template labels generated from it (generateSelector)."""
    group_kind = _group_kind(obj)
    if group_kind in _EMPTY_STATUS_ON_CREATE:
        obj = {**obj, "status": {}}
    defaulter = DEFAULTERS.get(group_kind)
    if defaulter is None:
        return obj
    obj = defaulter(obj)
    if group_kind == ("batch", "Job") and ((obj.get("metadata") or {}).get("uid")):
        obj = with_generated_selector(obj)
    return obj
