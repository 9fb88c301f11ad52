"""The pods/binding subresource on the shared write path (mirrors pkg/registry/core/pod/storage
BindingREST.setPodNodeAndMetadata): sets spec.nodeName and PodScheduled=True on a pod that is
neither bound nor being deleted. Pod update validation is not run (binding is the one way
spec.nodeName may change); admission sees a CREATE of `pods/binding`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.admission import CREATE, Attributes
from kubetaint.api import errors
from kubetaint.api.user import UserInfo
from kubetaint.registry.registry import Registry
from kubetaint.store.interface import JSON


def bound_pod(pod: Mapping[str, Any], node: str, annotations: Mapping[str, str] | None = None) -> JSON:
    """The pod as setPodNodeAndMetadata leaves it; raises 409 like upstream when it cannot bind."""
    meta = pod.get("metadata") or {}
    name = meta.get("name", "")
    if meta.get("deletionTimestamp"):
        raise errors.conflict(
            "pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        raise errors.conflict(
            "pods/binding", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
        )
    new_meta = dict(meta)
    if annotations:
        new_meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    status = dict(pod.get("status") or {})
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
    old: Mapping[str, Any] = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {}
    )
    scheduled = {k: v for k, v in old.items() if k not in ("reason", "message")}
    conditions.append({**scheduled, "type": "PodScheduled", "status": "True"})
    status["conditions"] = conditions
    return {**pod, "metadata": new_meta, "spec": {**spec, "nodeName": node}, "status": status}


def bind(
    registry: Registry,
    namespace: str,
    name: str,
    node: str,
    *,
    annotations: Mapping[str, str] | None = None,
    dry_run: bool = False,
    user: UserInfo | None = None,
) -> JSON:
    """POST pods/NAME/binding: returns the bound pod; 404/409 StatusErrors as upstream."""
    pod = registry.store.get("pods", namespace, name)
    binding: JSON = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name, "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    if annotations:
        binding["metadata"]["annotations"] = dict(annotations)
    registry.admit_subresource(
        Attributes(CREATE, "pods", binding, None, namespace, name, "binding", dry_run, user)
    )
    stored = registry.store.update("pods", bound_pod(pod, node, annotations), dry_run=dry_run)
    if not dry_run:
        registry.trust_binding((namespace, name), pod, stored, node)
    return stored
