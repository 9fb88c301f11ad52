"""The namespace deleter's sync, ported from upstream's pkg/controller/namespace/deletion/
namespaced_resources_deleter_test.go (testSyncNamespaceThatIsTerminating's pending-finalize and
complete-finalize scenarios, TestSyncNamespaceThatIsActive, TestFinalizeNamespaceFuncWithFinalizers,
a namespace still Active with a deletionTimestamp as in TestDeleteEncounters404): the namespace
requests it makes, as (verb, resource, subresource) sets, and what it leaves."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.clock.base import format_time
from kubetaint.controllers.namespace import NamespaceController
from kubetaint.registry import Registry
from kubetaint.store.informer import Informer
from kubetaint.store.interface import JSON, ListResult
from kubetaint.store.memory import MemoryStore


class RecordingRegistry(Registry):
    """A registry that records the controller's namespace requests and pod lists."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        self.actions: set[str] = set()

    def get(self, resource: str, namespace: str, name: str) -> JSON:
        if resource == "namespaces":
            self.actions.add("get-namespaces-")
        return super().get(resource, namespace, name)

    def list(self, resource: str, **kwargs: Any) -> ListResult:
        if resource == "pods":
            self.actions.add("list-pods-")
        return super().list(resource, **kwargs)

    def update_status(self, resource: str, obj: JSON, *, dry_run: bool = False) -> JSON:
        self.actions.add(f"update-{resource}-status")
        return super().update_status(resource, obj, dry_run=dry_run)

    def finalize_namespace(self, obj: JSON, *, dry_run: bool = False) -> JSON:
        self.actions.add("create-namespaces-finalize")  # client-go's Finalize is a create action
        return super().finalize_namespace(obj, dry_run=dry_run)


def namespace(finalizers: list[str], phase: str, *, deleting: bool) -> JSON:
    meta: JSON = {"name": "test"}
    if deleting:
        meta["deletionTimestamp"] = format_time(0)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta, "spec": {"finalizers": finalizers},
            "status": {"phase": phase}}  # fmt: skip


def synced(ns: JSON) -> tuple[RecordingRegistry, MemoryStore]:
    clock = VirtualClock()
    store = MemoryStore(clock)
    store.create("namespaces", ns)
    registry = RecordingRegistry(store)
    controller = NamespaceController(registry, clock, namespace_informer=Informer(store, "namespaces"))
    controller.sync("test")
    return registry, store


@pytest.mark.parametrize(
    ("ns", "actions", "left"),
    [
        pytest.param(
            namespace(["kubernetes"], "Terminating", deleting=True),
            {"get-namespaces-", "create-namespaces-finalize", "list-pods-", "update-namespaces-status"},
            None,
            id="pending-finalize: content deleted, conditions set, finalized and removed",
        ),
        pytest.param(
            namespace([], "Terminating", deleting=True),
            {"get-namespaces-"},
            "Terminating",
            id="complete-finalize: nothing to do",
        ),
        pytest.param(
            namespace(["kubernetes"], "Active", deleting=False),
            {"get-namespaces-"},
            "Active",
            id="an active namespace: nothing to do",
        ),
        pytest.param(
            namespace(["kubernetes", "example.com/other"], "Active", deleting=True),
            {"get-namespaces-", "create-namespaces-finalize", "list-pods-", "update-namespaces-status"},
            "Terminating",
            id="still Active when deleted: set Terminating; the other finalizer stays",
        ),
    ],
)
def test_sync(ns: JSON, actions: set[str], left: str | None) -> None:
    registry, store = synced(ns)
    assert registry.actions == actions
    remaining = store.list("namespaces").items
    assert [n["status"]["phase"] for n in remaining] == ([left] if left else [])
    if remaining and remaining[0]["metadata"].get("deletionTimestamp"):
        assert remaining[0]["spec"]["finalizers"] in ([], ["example.com/other"])
