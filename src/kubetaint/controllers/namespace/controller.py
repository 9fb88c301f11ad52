"""The namespace controller (mirrors pkg/controller/namespace/namespace_controller.go and
deletion/namespaced_resources_deleter.go, status_condition_utils.go).

A namespace with a deletionTimestamp is synced: its phase is set to Terminating, every object of
every served namespaced resource in it is deleted (pods first, as OrderedNamespaceDeletion, GA in
1.34, does, each pod through graceful deletion so its kubelet stops it), the deleter's five conditions
are set on the namespace, and once nothing remains the `kubernetes` finalizer is removed through
the `finalize` subresource, which removes the namespace. While content remains (pods in their
grace period, objects waiting for finalizers) the namespace is requeued after estimate/2 + 1
seconds; a failure is retried with the work queue's per-item exponential backoff (5 ms doubling,
at most 1000 s).

The served resources are kubetaint's own (kubetaint.api.resources), so discovery never fails:
NamespaceDeletionDiscoveryFailure and NamespaceDeletionGroupVersionParsingFailure are always their
"False" variants.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubetaint.api.crd import CRDS, served_resources
from kubetaint.api.errors import StatusError
from kubetaint.api.resources import RESOURCES, Resource
from kubetaint.clock.base import Clock, format_time, parse_time
from kubetaint.controllers.sorted_queue import NameQueueController
from kubetaint.core import namespaces
from kubetaint.store.informer import EventHandlers, Informer
from kubetaint.store.interface import PropagatingStore, object_key

JSON = dict[str, Any]
log = logging.getLogger(__name__)

NAMESPACES = "namespaces"
PODS = "pods"
#: finalizerEstimateSeconds: the wait assumed for objects held by finalizers.
FINALIZER_ESTIMATE_SECONDS = 15
#: DefaultTerminationGracePeriodSeconds, what a pod without the field was defaulted to.
DEFAULT_TERMINATION_GRACE_PERIOD = 30
#: The work queue's default per-item backoff (ItemExponentialFailureRateLimiter 5ms, 1000s).
BASE_BACKOFF, MAX_BACKOFF = 0.005, 1000.0


class NamespaceWriter(PropagatingStore, Protocol):
    """The store a namespace controller writes through (kubetaint.registry.Registry): deletes
    honour graceful pod deletion and finalizers, and the namespace's status and finalize
    subresources."""

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON: ...

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON: ...


def deletable_resources() -> list[Resource]:
    """Served namespaced resources that can be listed and deleted (pods first)."""
    found = [r for r in RESOURCES if r.served and r.namespaced and "delete" in r.verbs and "list" in r.verbs]
    return sorted(found, key=lambda r: (r.store_resource != PODS, r.group, r.plural))


class ResourcesRemainingError(Exception):
    """ResourcesRemainingError."""

    def __init__(self, estimate: int) -> None:
        super().__init__(
            f"some content remains in the namespace, estimate {estimate} seconds before it is removed"
        )
        self.estimate = estimate


class NamespaceController(NameQueueController[NamespaceWriter]):
    """Deletes the content of namespaces being deleted, then finalizes them."""

    def __init__(
        self,
        store: NamespaceWriter,
        clock: Clock,
        *,
        namespace_informer: Informer | None = None,
    ) -> None:
        super().__init__(store, clock, self._sync_queued)
        self.namespaces = self.informers.shared_or_own(namespace_informer, NAMESPACES)
        self.resources = deletable_resources()
        self._failures: dict[str, int] = {}
        self.namespaces.add_handlers(
            EventHandlers(
                on_add=self._namespace_changed,
                on_update=lambda old, new: self._namespace_changed(new),
            )
        )

    # queue -----------------------------------------------------------------------------------

    def _namespace_changed(self, ns: JSON) -> None:
        if (ns.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.add(object_key(ns)[1])

    def _sync_queued(self, name: str) -> None:
        try:
            self.sync(name)
        except ResourcesRemainingError as remaining:
            self._failures.pop(name, None)
            self.queue.add_after(name, remaining.estimate // 2 + 1)
        except Exception as err:  # retried with backoff, as AddRateLimited does
            failures = self._failures.get(name, 0)
            self._failures[name] = failures + 1
            log.warning("deletion of namespace %s failed: %s", name, err)
            self.queue.add_after(name, min(BASE_BACKOFF * 2**failures, MAX_BACKOFF))
        else:
            self._failures.pop(name, None)

    # sync ------------------------------------------------------------------------------------

    def sync(self, name: str) -> None:
        """namespacedResourcesDeleter.Delete; ResourcesRemainingError while content remains."""
        ns = self._get(name)
        if ns is None or not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        try:
            ns = self._retry_on_conflict(ns, self._terminating)
        except StatusError as err:
            if err.code == 404:
                return
            raise
        if not (ns.get("metadata") or {}).get("deletionTimestamp"):
            return
        if not namespaces.spec_finalizers(ns):
            return  # finalized already
        estimate, errors = self._delete_all_content(ns)
        if errors:
            raise RuntimeError("[" + ", ".join(errors) + "]" if len(errors) > 1 else errors[0])
        if estimate > 0:
            raise ResourcesRemainingError(estimate)
        try:
            self._retry_on_conflict(ns, self._finalize)
        except StatusError as err:
            if err.code != 404:
                raise

    def _terminating(self, ns: JSON) -> JSON:
        """updateNamespaceStatusFunc: phase Terminating on a namespace being deleted."""
        if (
            not (ns.get("metadata") or {}).get("deletionTimestamp")
            or namespaces.phase(ns) == namespaces.TERMINATING
        ):
            return ns
        status = {**(ns.get("status") or {}), "phase": namespaces.TERMINATING}
        return self.store.update_status(NAMESPACES, {**ns, "status": status})

    def _finalize(self, ns: JSON) -> JSON:
        """finalizeNamespace: the finalizer token removed through `finalize`."""
        return self.store.finalize_namespace(
            namespaces.without_finalizer(ns, namespaces.FINALIZER_KUBERNETES)
        )

    def _retry_on_conflict(self, ns: JSON, write: Callable[[JSON], JSON]) -> JSON:
        """retryOnConflictError: on a conflict, read the namespace again and retry (an error
        when its uid changed in between)."""
        latest = ns
        while True:
            try:
                return write(latest)
            except StatusError as err:
                if err.code != 409:
                    raise
            previous = latest
            latest = self.store.get(NAMESPACES, "", object_key(previous)[1])
            if (latest.get("metadata") or {}).get("uid") != (previous.get("metadata") or {}).get("uid"):
                raise RuntimeError("namespace uid has changed across retries")

    def _get(self, name: str) -> JSON | None:
        try:
            return self.store.get(NAMESPACES, "", name)
        except StatusError as err:
            if err.code == 404:
                return None
            raise

    def _custom_resources(self) -> list[Resource]:
        """The namespaced custom resources of the established CRDs (one per CRD: the storage
        version's), as discovery lists them to the deleter."""
        found: list[Resource] = []
        for crd in self.store.list(CRDS).items:
            served = [r for r in served_resources(crd) if r.namespaced]
            storage = next((r for r in served if r.version == r.storage_version), None)
            if served:
                found.append(storage or served[0])
        return sorted(found, key=lambda r: (r.group, r.plural))

    def _delete_all_content(self, ns: JSON) -> tuple[int, list[str]]:
        """deleteAllContent: (estimate, errors); sets the conditions on the namespace."""
        name = object_key(ns)[1]
        deleted_at = parse_time(str(ns["metadata"]["deletionTimestamp"]))
        estimate = 0
        errors: list[str] = []
        remaining: dict[tuple[str, str], int] = {}
        finalizers: dict[str, int] = {}
        for resource in [*self.resources, *self._custom_resources()]:
            try:
                wait, count, held = self._delete_resource(resource, name, deleted_at)
            except StatusError as err:
                errors.append(err.message)
                continue
            except _UnexpectedItemsError as err:
                errors.append(str(err))
                wait, count, held = 0, err.count, {}
            estimate = max(estimate, wait)
            if count:
                remaining[(resource.group, resource.plural)] = count
                for finalizer, n in held.items():
                    finalizers[finalizer] = finalizers.get(finalizer, 0) + n
            if resource.store_resource == PODS and count:
                # pods first: the rest waits until they are gone (OrderedNamespaceDeletion)
                self._set_conditions(ns, [], errors)
                return estimate, errors
        self._set_conditions(ns, namespaces.remaining_condition_messages(remaining, finalizers), errors)
        return estimate, errors

    def _set_conditions(self, ns: JSON, new: list[JSON], errors: list[str]) -> None:
        failure = namespaces.content_failure(errors)
        if failure is not None:
            new = [*new, failure]
        updated = namespaces.with_conditions(ns, new, format_time(self.clock.now()))
        if updated is None:
            return
        try:
            self.store.update_status(NAMESPACES, updated)
        except StatusError as err:  # HandleError: logged, the deletion goes on
            log.warning("couldn't update status condition for namespace %q: %s", object_key(ns)[1], err)

    def _delete_resource(
        self, resource: Resource, namespace: str, deleted_at: float
    ) -> tuple[int, int, dict[str, int]]:
        """deleteAllContentForGroupVersionResource: (estimate, remaining, finalizer counts)."""
        store_resource = resource.store_resource
        estimate = self._pod_estimate(namespace, deleted_at) if store_resource == PODS else 0
        for item in self.store.list(store_resource, namespace=namespace).items:
            _, item_name = object_key(item)
            try:
                self.store.delete(store_resource, namespace, item_name, propagation_policy="Background")
            except StatusError as err:
                if err.code not in (404, 405):
                    raise
        left = self.store.list(store_resource, namespace=namespace).items
        if not left:
            return 0, 0, {}
        held: dict[str, int] = {}
        for item in left:
            for finalizer in (item.get("metadata") or {}).get("finalizers") or []:
                held[str(finalizer)] = held.get(str(finalizer), 0) + 1
        if estimate:
            return estimate, len(left), held
        if held:
            return FINALIZER_ESTIMATE_SECONDS, len(left), held
        raise _UnexpectedItemsError(namespace, resource, len(left))

    def _pod_estimate(self, namespace: str, deleted_at: float) -> int:
        """estimateGracefulTermination for pods: the longest grace period of unfinished pods,
        0 once that long has passed since the namespace's deletion."""
        estimate = 0
        for pod in self.store.list(PODS, namespace=namespace).items:
            status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
            if (status or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
            grace = (spec or {}).get("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_PERIOD)
            if isinstance(grace, int) and grace > estimate:
                estimate = grace
        if self.clock.now() - deleted_at >= estimate:
            return 0
        return estimate


class _UnexpectedItemsError(Exception):
    """`unexpected items still remain in namespace: X for gvr: G/V, Resource=R`."""

    def __init__(self, namespace: str, resource: Resource, count: int) -> None:
        gvr = f"{resource.group}/{resource.version}, Resource={resource.plural}"
        super().__init__(f"unexpected items still remain in namespace: {namespace} for gvr: {gvr}")
        self.count = count
