"""The `scale` subresource of Deployments and ReplicaSets (mirrors pkg/registry/apps/deployment
and replicaset storage ScaleREST: an autoscaling/v1 Scale whose spec.replicas reads and writes the
parent's spec.replicas, with status.replicas and the selector as a string). `kubectl scale` and
`kubectl autoscale` use it."""

from __future__ import annotations

from typing import Any

from kubetaint.api import errors
from kubetaint.apiserver.printing import JSON, as_dict
from kubetaint.apiserver.workload_printers import format_label_selector

_META_FIELDS = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def to_scale(obj: JSON) -> JSON:
    """scaleFromDeployment / scaleFromReplicaSet."""
    meta = as_dict(obj.get("metadata"))
    spec = as_dict(obj.get("spec"))
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _META_FIELDS if k in meta},
        "spec": {"replicas": int(spec.get("replicas", 1) or 0)},
        "status": {
            "replicas": int(as_dict(obj.get("status")).get("replicas") or 0),
            "selector": format_label_selector(spec.get("selector")),
        },
    }


def from_scale(parent: JSON, scale: Any) -> JSON:
    """The parent with the Scale's spec.replicas (422 for a negative or non-integer count)."""
    name = str(as_dict(parent.get("metadata")).get("name") or "")
    replicas = as_dict(as_dict(scale).get("spec")).get("replicas", 0)
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise errors.bad_request(f"Scale.spec.replicas: expected an integer, got {replicas!r}")
    if replicas < 0:
        message = f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: {replicas}: '
        raise errors.StatusError(
            422,
            "Invalid",
            message + "must be greater than or equal to 0",
            name=name,
            group="autoscaling",
            kind="Scale",
            causes=[
                {
                    "reason": "FieldValueInvalid",
                    "message": f"Invalid value: {replicas}: must be greater than or equal to 0",
                    "field": "spec.replicas",
                }
            ],
        )
    rv = as_dict(as_dict(scale).get("metadata")).get("resourceVersion")
    meta = dict(as_dict(parent.get("metadata")))
    if rv:
        meta["resourceVersion"] = rv  # a precondition, as for any update
    return {**parent, "metadata": meta, "spec": {**as_dict(parent.get("spec")), "replicas": replicas}}
