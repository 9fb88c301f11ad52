"""Builders for the Kubernetes JSON objects the api tests validate."""

from __future__ import annotations

from typing import Any


def node(name: str = "n1", *, taints: list[dict[str, Any]] | None = None, **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    if taints is not None:
        obj["spec"] = {"taints": taints}
    if status:
        obj["status"] = status
    return obj


def pod(
    name: str = "p",
    *,
    tolerations: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": containers if containers is not None else [{"name": "c", "image": "nginx"}]
    }
    if tolerations is not None:
        body["tolerations"] = tolerations
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
    }


def workload(
    kind: str, name: str = "w", *, labels: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    template_labels = {"app": "web"} if labels is None else labels
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": template_labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        },
    }
    body.update(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
    }
