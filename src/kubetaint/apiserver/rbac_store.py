"""The RBAC policy kept current from the stored rbac.authorization.k8s.io/v1 objects (an informer
per kind, as kube-apiserver's RBAC authorizer reads its shared informers), the
clusterrole-aggregation controller (pkg/controller/clusterroleaggregation: an aggregated
ClusterRole's rules are those of the ClusterRoles its selectors match, sorted by name, without
duplicates) and the storage_rbac post-start hook that creates the bootstrap roles and bindings
that are missing, never overwriting one (pkg/registry/rbac/rest/storage_rbac.go).

`policy()` is what every request is authorized against: rebuilt only after an RBAC object
changed, so an unchanged cluster costs a dict lookup per request.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubetaint.api import errors
from kubetaint.api.selectors import selector_matches
from kubetaint.apiserver.rbac import RBAC_GROUP, Policy
from kubetaint.apiserver.rbac_bootstrap import cluster_role_bindings, cluster_roles
from kubetaint.clock.base import Clock, format_time
from kubetaint.registry.managedfields import KUBE_APISERVER, record_create
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import JSON, Store

log = logging.getLogger(__name__)
CLUSTER_ROLES = f"clusterroles.{RBAC_GROUP}"
CLUSTER_ROLE_BINDINGS = f"clusterrolebindings.{RBAC_GROUP}"
ROLES = f"roles.{RBAC_GROUP}"
ROLE_BINDINGS = f"rolebindings.{RBAC_GROUP}"
RBAC_RESOURCES = (CLUSTER_ROLES, CLUSTER_ROLE_BINDINGS, ROLES, ROLE_BINDINGS)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _selectors(role: Mapping[str, Any]) -> list[Any] | None:
    rule = role.get("aggregationRule")
    if not isinstance(rule, Mapping):
        return None
    selectors = rule.get("clusterRoleSelectors")
    return selectors if isinstance(selectors, list) else []


def aggregated_rules(
    role: Mapping[str, Any], cluster_roles: Iterable[Mapping[str, Any]]
) -> list[JSON] | None:
    """The rules of an aggregated ClusterRole (syncClusterRole), or None when `role` has no
    aggregationRule: for each selector in order, the matching ClusterRoles sorted by name (but
    `role` itself), each of their rules not already taken."""
    selectors = _selectors(role)
    if selectors is None:
        return None
    name = _meta(role).get("name")
    by_name = sorted(cluster_roles, key=lambda r: str(_meta(r).get("name") or ""))
    rules: list[JSON] = []
    for selector in selectors:
        if not isinstance(selector, Mapping):
            continue
        for other in by_name:
            meta = _meta(other)
            if meta.get("name") == name:
                continue
            labels = meta.get("labels") if isinstance(meta.get("labels"), Mapping) else {}
            try:
                matched = selector_matches(selector, labels)
            except errors.StatusError:
                matched = False
            if not matched:
                continue
            for rule in other.get("rules") or []:
                if isinstance(rule, Mapping) and rule not in rules:
                    rules.append(dict(rule))
    return rules


def with_aggregation(cluster_roles: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ClusterRoles with every aggregated one's rules filled (aggregated roles may select
    other aggregated roles: filled until nothing changes, as the controller converges)."""
    roles = {str(_meta(r).get("name") or ""): r for r in cluster_roles}
    for _ in range(len(roles) + 1):
        changed = False
        for name, role in list(roles.items()):
            rules = aggregated_rules(role, roles.values())
            if rules is not None and rules != (role.get("rules") or []):
                roles[name] = {**role, "rules": rules}
                changed = True
        if not changed:
            break
    return list(roles.values())


def policy_of(objects: Iterable[Mapping[str, Any]]) -> Policy:
    """A Policy of rbac/v1 objects, aggregated ClusterRoles filled."""
    objects = list(objects)
    policy = Policy()
    cluster = [o for o in objects if o.get("kind") == "ClusterRole"]
    for obj in [*with_aggregation(cluster), *(o for o in objects if o.get("kind") != "ClusterRole")]:
        policy.add_stored(obj)
    return policy


def bootstrap_policy() -> Policy:
    """The bootstrap roles and bindings alone (what a fresh cluster's store holds)."""
    return policy_of([*cluster_roles(), *cluster_role_bindings()])


def ensure_bootstrap_policy(store: Store, clock: Clock | None = None) -> list[str]:
    """storage_rbac's post-start hook: create every bootstrap ClusterRole and ClusterRoleBinding
    that does not exist (an existing one is kept as it is). Returns the names created. An
    aggregated role is created with the rules the aggregation controller gives it at once. With
    a `clock`, each carries the `kube-apiserver` managedFields entry of its create."""
    created = []
    for resource, objects in (
        (CLUSTER_ROLES, with_aggregation(cluster_roles())),
        (CLUSTER_ROLE_BINDINGS, cluster_role_bindings()),
    ):
        for obj in objects:
            name = str(_meta(obj).get("name") or "")
            try:
                store.get(resource, "", name)
                continue
            except errors.StatusError as err:
                if err.code != 404:
                    raise
            request = dict(obj)
            if clock is not None:
                request = record_create(request, resource, KUBE_APISERVER, format_time(clock.now()))
            try:
                store.create(resource, request)
            except errors.StatusError as err:
                if err.code != 409:
                    raise
                continue
            created.append(f"{resource}/{name}")
    return created


class StoredPolicy:
    """The stored RBAC objects as a Policy (plus `extra`, a policy file's), following the store."""

    def __init__(self, store: Store, clock: Clock, extra: Policy | None = None) -> None:
        self.store = store
        self.clock = clock
        self.extra = extra
        self._policy: Policy | None = None
        self._aggregation_pending = False
        self.informers = {resource: Informer(store, resource) for resource in RBAC_RESOURCES}
        for resource, informer in self.informers.items():
            informer.add_handlers(self._handlers(resource == CLUSTER_ROLES))

    def _handlers(self, cluster_roles: bool) -> EventHandlers:
        def changed(*_: JSON) -> None:
            self._policy = None
            if cluster_roles:
                self._schedule_aggregation()

        return EventHandlers(on_add=changed, on_update=changed, on_delete=changed)

    def start(self) -> None:
        """List the stored objects once and follow later changes."""
        for informer in self.informers.values():
            informer.start()
        self._policy = None

    def stop(self) -> None:
        for informer in self.informers.values():
            informer.stop()

    def policy(self) -> Policy:
        """The current policy (rebuilt after a change)."""
        policy = self._policy
        if policy is None:
            if not all(i.started for i in self.informers.values()):
                self.start()
            objects = [obj for informer in self.informers.values() for obj in informer.items()]
            policy = policy_of(objects)
            if self.extra is not None:
                policy = policy.extended(self.extra)
            self._policy = policy
        return policy

    def _schedule_aggregation(self) -> None:
        if self._aggregation_pending:
            return
        self._aggregation_pending = True
        self.clock.call_soon(self.reconcile_aggregation)

    def reconcile_aggregation(self) -> None:
        """Write each aggregated ClusterRole whose stored rules differ from its aggregation."""
        self._aggregation_pending = False
        informer = self.informers[CLUSTER_ROLES]
        roles = list(informer.items())
        for role in roles:
            rules = aggregated_rules(role, roles)
            if rules is None or rules == (role.get("rules") or []):
                continue
            try:
                self.store.update(CLUSTER_ROLES, {**role, "rules": rules})
            except errors.StatusError as err:
                # a conflict means another change is on its way: it schedules another pass
                log.warning("clusterrole-aggregation: cannot update %s: %s", _meta(role).get("name"), err)
