"""The registry runs generateName, admission and validation before the store, and nothing is
stored when any step rejects the object."""

import random

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.api.errors import StatusError
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.store.memory import MemoryStore


def with_namespaces(store: MemoryStore, *names: str) -> MemoryStore:
    """The namespaces NamespaceLifecycle must find for the objects written in them."""
    for name in names:
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return store


def make_registry(validator=None) -> Registry:
    return Registry(
        with_namespaces(MemoryStore(VirtualClock()), "default", "kube-node-lease"),
        admission=AdmissionChain(),
        validator=validator,
        rng=random.Random(7),
    )


def bare_pod(**meta: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": dict(meta),
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def test_generate_name_and_default_namespace() -> None:
    registry = make_registry()
    created = registry.create("pods", bare_pod(generateName="web-"))
    name = created["metadata"]["name"]
    assert name.startswith("web-") and len(name) == len("web-") + 5
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert created["metadata"]["namespace"] == "default"


def test_admission_adds_default_toleration_seconds_on_create() -> None:
    registry = make_registry()
    created = registry.create("pods", bare_pod(name="p"))
    assert created["spec"]["tolerations"] == [
        {
            "key": "node.kubernetes.io/not-ready",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
        {
            "key": "node.kubernetes.io/unreachable",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        },
    ]


def test_new_nodes_get_the_not_ready_taint() -> None:
    registry = make_registry()
    node = registry.create("nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    assert node["spec"]["taints"] == [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    assert "namespace" not in node["metadata"]


def test_validator_rejection_stores_nothing() -> None:
    def reject(resource: str, obj: dict, old: dict | None) -> None:
        raise StatusError(
            422, "Invalid", f'The Pod "{obj["metadata"]["name"]}" is invalid: spec: Required value'
        )

    registry = make_registry(reject)
    with pytest.raises(StatusError) as err:
        registry.create("pods", bare_pod(name="p"))
    assert err.value.code == 422
    assert registry.list("pods").items == []


def test_unknown_priority_class_is_rejected_by_admission_with_a_status() -> None:
    registry = make_registry()
    pod = bare_pod(name="p")
    pod["spec"]["priorityClassName"] = "nope"
    with pytest.raises(StatusError) as err:
        registry.create("pods", pod)
    assert err.value.code == 403
    assert "no PriorityClass with name nope was found" in err.value.message
    assert registry.list("pods").items == []


def test_status_update_keeps_the_stored_spec() -> None:
    registry = make_registry()
    created = registry.create("pods", bare_pod(name="p"))
    changed = {**created, "spec": {"containers": []}, "status": {"phase": "Running"}}
    updated = registry.update_status("pods", changed)
    assert updated["status"] == {"phase": "Running"}
    assert updated["spec"] == created["spec"]


def test_default_validation_rejects_a_bad_taint_effect_with_kube_apiservers_status() -> None:
    registry = Registry(MemoryStore(VirtualClock()))
    node = {"metadata": {"name": "n1"}, "spec": {"taints": [{"key": "a", "effect": "Foo"}]}}
    with pytest.raises(StatusError) as err:
        registry.create("nodes", node)
    status = err.value.to_status()
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"] == (
        'Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "Foo": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Foo": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            "field": "metadata.taints[0].effect",
        }
    ]
    assert registry.list("nodes").items == []


def test_type_meta_is_filled_from_the_resource_table() -> None:
    registry = Registry(MemoryStore(VirtualClock()))
    created = registry.create(
        "leases.coordination.k8s.io", {"metadata": {"name": "n1", "namespace": "kube-node-lease"}}
    )
    assert created["apiVersion"] == "coordination.k8s.io/v1" and created["kind"] == "Lease"
