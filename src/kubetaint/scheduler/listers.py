"""What the pod-aware plugins read of the cluster besides nodes and pods (upstream's informer
listers of a framework.Handle: namespaces for InterPodAffinity; services, replica sets and
stateful sets for PodTopologySpread's default selector. ReplicationControllers are not served, so
no lister holds them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kubetaint.api.selectors import LabelSelector

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import Cache


class ClusterListers(Protocol):
    cache: Cache

    def namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        """GetNamespaceLabelsSnapshot: the namespace's labels, None when it is not known."""
        ...

    def namespaces_selected(self, selector: LabelSelector) -> frozenset[str]:
        """nsLister.List(selector): the names of the known namespaces the selector selects."""
        ...

    def replica_set(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """rsLister.ReplicaSets(namespace).Get(name), None when it is not known."""
        ...

    def stateful_set(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """ssLister.StatefulSets(namespace).Get(name), None when it is not known."""
        ...

    def services(self, namespace: str) -> Iterable[Mapping[str, Any]]:
        """sl.Services(namespace).List(labels.Everything()): the known services of the namespace."""
        ...

    def selectors_version(self) -> int:
        """A number that changes whenever a Service, ReplicaSet or StatefulSet comes, goes or may
        select otherwise (what helper.DefaultSelector reads of them)."""
        ...


class Listers:
    """Namespaces, services, replica sets and stateful sets as a Scheduler's informers deliver them."""

    def __init__(self) -> None:
        self.namespaces: dict[str, Mapping[str, str]] = {}
        self.replica_sets: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.stateful_sets: dict[tuple[str, str], Mapping[str, Any]] = {}
        #: services by namespace, then name
        self.services: dict[str, dict[str, Mapping[str, Any]]] = {}
        #: Bumped whenever a service, replica set or stateful set is added or removed, or one's
        #: selector may have changed (a workload's status write keeps it: no bump).
        self.selectors_version = 0

    def add_namespace(self, ns: Mapping[str, Any]) -> None:
        meta = ns.get("metadata") or {}
        self.namespaces[str(meta.get("name") or "")] = dict(meta.get("labels") or {})

    def remove_namespace(self, ns: Mapping[str, Any]) -> None:
        self.namespaces.pop(str((ns.get("metadata") or {}).get("name") or ""), None)

    def add_replica_set(self, rs: Mapping[str, Any]) -> None:
        meta = rs.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        self._workload_set(self.replica_sets, key, rs)

    def remove_replica_set(self, rs: Mapping[str, Any]) -> None:
        meta = rs.get("metadata") or {}
        self.replica_sets.pop((str(meta.get("namespace") or "default"), str(meta.get("name") or "")), None)
        self.selectors_version += 1

    def add_stateful_set(self, ss: Mapping[str, Any]) -> None:
        self._workload_set(self.stateful_sets, _key(ss), ss)

    def remove_stateful_set(self, ss: Mapping[str, Any]) -> None:
        self.stateful_sets.pop(_key(ss), None)
        self.selectors_version += 1

    def _workload_set(
        self, known: dict[tuple[str, str], Mapping[str, Any]], key: tuple[str, str], obj: Mapping[str, Any]
    ) -> None:
        """Hold `obj` under `key`, bumping `selectors_version` unless it replaces an object with
        the same spec object or an equal spec.selector."""
        old = known.get(key)
        known[key] = obj
        if old is not None:
            old_spec, spec = old.get("spec"), obj.get("spec")
            if old_spec is spec or (
                type(old_spec) is dict
                and type(spec) is dict
                and old_spec.get("selector") == spec.get("selector")
            ):
                return
        self.selectors_version += 1

    def add_service(self, svc: Mapping[str, Any]) -> None:
        namespace, name = _key(svc)
        self.services.setdefault(namespace, {})[name] = svc
        self.selectors_version += 1

    def remove_service(self, svc: Mapping[str, Any]) -> None:
        namespace, name = _key(svc)
        known = self.services.get(namespace)
        if known is not None:
            known.pop(name, None)
            if not known:
                del self.services[namespace]
        self.selectors_version += 1


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")
