"""The persistent volume controller's binding (pv_controller.go syncVolume, syncUnboundClaim,
syncBoundClaim): a new volume becomes Available; an Immediate claim binds to the smallest
matching volume; a WaitForFirstConsumer claim waits until a volume is pre-bound to it (what
VolumeBinding's PreBind writes); a claim whose volume is gone is Lost; a volume whose claim is
gone is Released."""

from __future__ import annotations

from typing import Any

from controllers.workload_builders import make_env
from kubetaint.controllers.persistentvolume import PersistentVolumeController
from kubetaint.core.storage_defaults import with_storage_defaults

JSON = dict[str, Any]


def volume(
    name: str, storage: str = "10Gi", class_name: str = "", claim: tuple[str, str] | None = None
) -> JSON:
    spec: JSON = {
        "capacity": {"storage": storage},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/x"},
    }
    if class_name:
        spec["storageClassName"] = class_name
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return with_storage_defaults(
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}
    )


def claim(name: str, storage: str = "5Gi", class_name: str = "") -> JSON:
    spec: JSON = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if class_name:
        spec["storageClassName"] = class_name
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
    }
    return with_storage_defaults({**body, "spec": spec})


def storage_class(name: str, mode: str) -> JSON:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": mode,
    }


def start() -> tuple[Any, Any]:
    clock, store, _ = make_env()
    PersistentVolumeController(store, clock).start()
    return clock, store


def phase(store: Any, resource: str, name: str, namespace: str = "") -> str:
    return str(store.get(resource, namespace, name)["status"]["phase"])


def test_a_new_volume_becomes_available() -> None:
    clock, store = start()
    store.create("persistentvolumes", volume("pv-a"))
    clock.advance(1)
    assert phase(store, "persistentvolumes", "pv-a") == "Available"


def test_an_immediate_claim_binds_to_the_smallest_matching_volume() -> None:
    clock, store = start()
    store.create("persistentvolumes", volume("big", "100Gi"))
    store.create("persistentvolumes", volume("small", "10Gi"))
    store.create("persistentvolumes", volume("tiny", "1Gi"))
    clock.advance(1)
    store.create("persistentvolumeclaims", claim("data", "5Gi"))
    clock.advance(1)
    bound = store.get("persistentvolumeclaims", "default", "data")
    assert bound["spec"]["volumeName"] == "small"
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert bound["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "10Gi"},
    }
    pv = store.get("persistentvolumes", "", "small")
    assert (
        pv["spec"]["claimRef"]["name"] == "data" and pv["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]
    )
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert pv["status"]["phase"] == "Bound"


def test_a_wait_for_first_consumer_claim_waits_for_a_pre_bound_volume() -> None:
    clock, store = start()
    store.create("storageclasses.storage.k8s.io", storage_class("local", "WaitForFirstConsumer"))
    store.create("persistentvolumes", volume("pv-a", class_name="local"))
    store.create("persistentvolumeclaims", claim("data", class_name="local"))
    clock.advance(1)
    assert not store.get("persistentvolumeclaims", "default", "data")["spec"].get("volumeName")
    pv = store.get("persistentvolumes", "", "pv-a")
    ref = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data"}
    store.update("persistentvolumes", {**pv, "spec": {**pv["spec"], "claimRef": ref}})  # (PreBind's write)
    clock.advance(1)
    assert store.get("persistentvolumeclaims", "default", "data")["spec"]["volumeName"] == "pv-a"
    assert phase(store, "persistentvolumes", "pv-a") == "Bound"
    assert phase(store, "persistentvolumeclaims", "data", "default") == "Bound"


def test_a_claim_without_a_matching_volume_stays_pending() -> None:
    clock, store = start()
    store.create("persistentvolumes", volume("pv-a", "1Gi"))
    store.create("persistentvolumeclaims", claim("data", "5Gi"))
    clock.advance(1)
    assert phase(store, "persistentvolumeclaims", "data", "default") == "Pending"


def test_lost_claims_and_released_volumes() -> None:
    clock, store = start()
    store.create("persistentvolumes", volume("pv-a"))
    store.create("persistentvolumes", volume("pv-b"))
    store.create("persistentvolumeclaims", claim("a"))
    clock.advance(1)
    store.create("persistentvolumeclaims", claim("b"))
    clock.advance(1)
    bound_to = {
        c: store.get("persistentvolumeclaims", "default", c)["spec"]["volumeName"] for c in ("a", "b")
    }
    store.delete("persistentvolumes", "", bound_to["a"])
    store.delete("persistentvolumeclaims", "default", "b")
    clock.advance(1)
    assert phase(store, "persistentvolumeclaims", "a", "default") == "Lost"
    assert phase(store, "persistentvolumes", bound_to["b"]) == "Released"
