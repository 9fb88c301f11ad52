"""The in-process registry validates objects of every API group, not only the core group's: admission
keys on the plain plural (`deployments`), and the validator must still find the kind behind it."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.errors import StatusError
from kubetaint.clock.virtual import VirtualClock
from kubetaint.registry.registry import Registry, resource_info
from kubetaint.store.memory import MemoryStore


def _deployment(replicas: int) -> dict[str, Any]:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }


def _lease(duration: int) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": duration},
    }


def _priority_class(value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "p"},
        "value": value,
    }


def _pdb(min_available: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


INVALID = [
    pytest.param(
        "deployments.apps",
        _deployment(-1),
        'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        id="a Deployment with negative replicas is refused",
    ),
    pytest.param(
        "leases.coordination.k8s.io",
        _lease(-5),
        'Lease.coordination.k8s.io "node-1" is invalid: spec.leaseDurationSeconds: Invalid value: -5: '
        "must be greater than 0",
        id="a Lease with a negative duration is refused",
    ),
    pytest.param(
        "priorityclasses.scheduling.k8s.io",
        _priority_class(2_000_000_001),
        'PriorityClass.scheduling.k8s.io "p" is invalid: value: Forbidden: maximum allowed value of a user '
        "defined priority is 1000000000",
        id="a PriorityClass above the user maximum is refused",
    ),
    pytest.param(
        "poddisruptionbudgets.policy",
        _pdb(-1),
        'PodDisruptionBudget.policy "p" is invalid: spec.minAvailable: Invalid value: '
        'intstr.IntOrString{Type:0, IntVal:-1, StrVal:""}: must be greater than or equal to 0',
        id="a PodDisruptionBudget with negative minAvailable is refused",
    ),
]


@pytest.mark.parametrize(("resource", "obj", "message"), INVALID)
def test_invalid_objects_of_other_groups_are_refused_and_not_stored(
    resource: str, obj: dict[str, Any], message: str
) -> None:
    store = MemoryStore(VirtualClock())
    registry = Registry(store)
    with pytest.raises(StatusError) as caught:
        registry.create(resource, obj)
    assert caught.value.code == 422
    assert caught.value.message == message
    assert store.list(resource).items == []


@pytest.mark.parametrize(
    ("resource", "obj"),
    [
        pytest.param("deployments.apps", _deployment(3), id="a valid Deployment is stored"),
        pytest.param("leases.coordination.k8s.io", _lease(40), id="a valid Lease is stored"),
        pytest.param(
            "priorityclasses.scheduling.k8s.io", _priority_class(1000), id="a valid PriorityClass is stored"
        ),
        pytest.param("poddisruptionbudgets.policy", _pdb(1), id="a valid PodDisruptionBudget is stored"),
    ],
)
def test_valid_objects_of_other_groups_are_stored(resource: str, obj: dict[str, Any]) -> None:
    registry = Registry(MemoryStore(VirtualClock()))
    stored = registry.create(resource, obj)
    assert stored["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        pytest.param("pods", "Pod", id="a core plural is the core kind"),
        pytest.param("events", "Event", id="a plural in two groups is the core group's"),
        pytest.param("deployments", "Deployment", id="a plain plural of another group is found"),
        pytest.param("deployments.apps", "Deployment", id="a store resource name is found"),
        pytest.param("leases", "Lease", id="a plain lease plural is found"),
    ],
)
def test_resource_info_resolves_plain_plurals_and_store_names(name: str, kind: str) -> None:
    info = resource_info(name)
    assert info is not None and info.kind == kind


def test_a_plural_named_with_an_unknown_group_is_not_guessed() -> None:
    assert resource_info("deployments.example.com") is None


@pytest.mark.parametrize(
    ("resource", "obj"),
    [
        pytest.param(
            "nodes",
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "namespace": "x"}},
            id="a node carrying a namespace",
        ),
        pytest.param(
            "priorityclasses.scheduling.k8s.io",
            {**_priority_class(5), "metadata": {"name": "p", "namespace": "default"}},
            id="a priority class carrying a namespace",
        ),
    ],
)
def test_a_cluster_scoped_object_created_with_a_namespace_is_stored_without_it(
    resource: str, obj: dict[str, Any]
) -> None:
    # rest.BeforeCreate drops the namespace of a cluster-scoped object before validation, as the
    # HTTP path does: the validator's "not allowed on this type" is never reached through a create
    registry = Registry(MemoryStore(VirtualClock()))
    created = registry.create(resource, obj)
    assert "namespace" not in created["metadata"]
    assert "namespace" in obj["metadata"]  # the caller's object is left as it was
