"""A small kopf operator for tests/e2e/clients/test_kopf.py: it marks the pods labelled
`kopf=watched` it sees created, holds them with its finalizer until its deletion handler ran,
records the `spec.unschedulable` of the nodes it sees change, and gives each KopfExample custom
resource a ConfigMap it owns and a status."""

from __future__ import annotations

from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.level = 0  # every kopf event is posted as a Kubernetes Event
    settings.watching.server_timeout = 30


@kopf.on.create("v1", "pods", labels={"kopf": "watched"})
def pod_created(patch: kopf.Patch, **_: Any) -> None:
    patch.metadata.annotations["kopf.test/seen"] = "created"


@kopf.on.delete("v1", "pods", labels={"kopf": "watched"})
def pod_deleted(name: str, logger: kopf.Logger, **_: Any) -> None:
    logger.info(f"cleaning up after {name}")


@kopf.on.field("v1", "nodes", field="spec.unschedulable")
def node_unschedulable(patch: kopf.Patch, new: Any, **_: Any) -> None:
    patch.metadata.annotations["kopf.test/unschedulable"] = str(bool(new)).lower()


@kopf.on.create("kopf.dev", "v1", "kopfexamples")
def example_created(spec: kopf.Spec, name: str, namespace: str, **_: Any) -> dict[str, str]:
    """Creates a ConfigMap owned by the custom resource; the result lands in its status."""
    child: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-child"},
        "data": {"field": str(spec.get("field", ""))},
    }
    kopf.adopt(child)
    from kubernetes import client, config

    config.load_kube_config()
    client.CoreV1Api().create_namespaced_config_map(namespace, child)
    return {"child": child["metadata"]["name"]}


@kopf.on.field("kopf.dev", "v1", "kopfexamples", field="spec.field")
def example_field_changed(patch: kopf.Patch, new: Any, **_: Any) -> None:
    patch.status["field"] = new
