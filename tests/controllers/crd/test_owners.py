"""The garbage collection of objects custom resources own: Background (the dependent deleted,
or only the dangling reference removed when another owner remains), Orphan and Foreground."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubetaint.api import crd as crds
from kubetaint.clock import VirtualClock
from kubetaint.controllers.crd import CRDController, CustomResourceOwners
from kubetaint.controlplane import ControlPlane
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
CT = "crontabs.stable.example.com"


def crd() -> JSON:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CT},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "crontabs",
                "kind": "CronTab",
                "singular": "crontab",
                "listKind": "CronTabList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


@pytest.fixture
def plane() -> Iterator[ControlPlane]:
    clock = VirtualClock()
    cp = ControlPlane(MemoryStore(clock), clock, seed=3)
    cp.ensure_system_namespaces()
    informer = cp.informer(crds.CRDS)
    controllers = [
        CRDController(cp.registry, clock, crd_informer=informer),
        CustomResourceOwners(cp.registry, clock, crd_informer=informer),
    ]
    for controller in controllers:
        controller.start()
    informer.start()
    cp.registry.create(crds.CRDS, crds.prepare_for_create(crds.with_defaults(crd())))
    clock.run_pending()
    yield cp
    for controller in controllers:
        controller.stop()


def owner(plane: ControlPlane, name: str = "c1") -> JSON:
    body = {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": "default"},
    }
    created: JSON = plane.registry.create(CT, body)
    return created


def ref(obj: JSON, **extra: Any) -> JSON:
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        **extra,
    }


def config_map(name: str, *refs: JSON) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "ownerReferences": list(refs)},
    }


def names(plane: ControlPlane, resource: str) -> list[str]:
    return [o["metadata"]["name"] for o in plane.store.list(resource, namespace="default").items]


def test_the_dependents_of_a_deleted_custom_resource_are_deleted(plane: ControlPlane) -> None:
    cron = owner(plane)
    plane.registry.create("configmaps", config_map("child", ref(cron)))
    plane.registry.delete(CT, "default", "c1")
    plane.clock.run_pending()
    assert names(plane, "configmaps") == []


def test_a_dependent_with_another_owner_only_loses_the_dangling_reference(plane: ControlPlane) -> None:
    first, second = owner(plane, "a"), owner(plane, "b")
    plane.registry.create("configmaps", config_map("shared", ref(first), ref(second)))
    plane.registry.delete(CT, "default", "a")
    plane.clock.run_pending()
    kept = plane.store.get("configmaps", "default", "shared")
    assert [r["name"] for r in kept["metadata"]["ownerReferences"]] == ["b"]


def test_an_orphaning_delete_keeps_the_dependents(plane: ControlPlane) -> None:
    cron = owner(plane)
    plane.registry.create("configmaps", config_map("child", ref(cron)))
    plane.registry.delete(CT, "default", "c1", propagation_policy="Orphan")
    plane.clock.run_pending()
    assert "ownerReferences" not in plane.store.get("configmaps", "default", "child")["metadata"]
    assert names(plane, CT) == []


def test_a_foreground_delete_waits_for_the_dependents(plane: ControlPlane) -> None:
    cron = owner(plane)
    plane.registry.create("configmaps", config_map("child", ref(cron, blockOwnerDeletion=True)))
    plane.registry.delete(CT, "default", "c1", propagation_policy="Foreground")
    plane.clock.run_pending()
    plane.clock.advance(2)
    plane.clock.run_pending()
    assert names(plane, "configmaps") == []
    assert names(plane, CT) == []
