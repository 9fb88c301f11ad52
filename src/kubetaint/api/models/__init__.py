"""Typed models of the API objects kubetaint serves, for the edges (loading, typed reads).

`decode(obj)` picks the model from apiVersion/kind and raises DecodeError with kube-apiserver's
`<Kind> in version "<v>" cannot be handled as a <Kind>: json: cannot unmarshal ...` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api import daemonset_generation
from kubetaint.api.models.apiextensions import CustomResourceDefinition
from kubetaint.api.models.appkinds import (
    ConfigMap,
    ControllerRevision,
    CronJob,
    Endpoints,
    EndpointSlice,
    Job,
    Secret,
    Service,
    ServiceAccount,
    StatefulSet,
)
from kubetaint.api.models.base import DecodeError
from kubetaint.api.models.core import Binding, Event, Namespace, Node, Pod, Taint, Toleration
from kubetaint.api.models.meta import TypedObject
from kubetaint.api.models.other import (
    DaemonSet,
    Deployment,
    Eviction,
    Lease,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    RuntimeClass,
    Status,
)
from kubetaint.api.models.rbac import (
    ClusterRole,
    ClusterRoleBinding,
    Role,
    RoleBinding,
    SelfSubjectAccessReview,
    SelfSubjectReview,
    SelfSubjectRulesReview,
    SubjectAccessReview,
)
from kubetaint.api.models.storage import (
    CSIDriver,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

__all__ = ["MODELS", "DecodeError", "Node", "Pod", "Status", "Taint", "Toleration", "decode", "model_for"]

#: (apiVersion, kind) -> model.
MODELS: dict[tuple[str, str], type[TypedObject]] = {
    ("v1", "Node"): Node,
    ("v1", "Pod"): Pod,
    ("v1", "Namespace"): Namespace,
    ("v1", "Binding"): Binding,
    ("v1", "Event"): Event,
    ("events.k8s.io/v1", "Event"): Event,
    ("coordination.k8s.io/v1", "Lease"): Lease,
    ("policy/v1", "PodDisruptionBudget"): PodDisruptionBudget,
    ("policy/v1", "Eviction"): Eviction,
    ("scheduling.k8s.io/v1", "PriorityClass"): PriorityClass,
    ("node.k8s.io/v1", "RuntimeClass"): RuntimeClass,
    ("apps/v1", "DaemonSet"): DaemonSet,
    ("apps/v1", "ReplicaSet"): ReplicaSet,
    ("apps/v1", "Deployment"): Deployment,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ClusterRoleBinding,
    ("rbac.authorization.k8s.io/v1", "Role"): Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): RoleBinding,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): SelfSubjectAccessReview,
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): SelfSubjectRulesReview,
    ("authorization.k8s.io/v1", "SubjectAccessReview"): SubjectAccessReview,
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): SubjectAccessReview,
    ("authentication.k8s.io/v1", "SelfSubjectReview"): SelfSubjectReview,
    ("v1", "ConfigMap"): ConfigMap,
    ("v1", "Secret"): Secret,
    ("v1", "ServiceAccount"): ServiceAccount,
    ("v1", "Service"): Service,
    ("v1", "Endpoints"): Endpoints,
    ("discovery.k8s.io/v1", "EndpointSlice"): EndpointSlice,
    ("apps/v1", "StatefulSet"): StatefulSet,
    ("apps/v1", "ControllerRevision"): ControllerRevision,
    ("batch/v1", "Job"): Job,
    ("batch/v1", "CronJob"): CronJob,
    ("v1", "PersistentVolume"): PersistentVolume,
    ("v1", "PersistentVolumeClaim"): PersistentVolumeClaim,
    ("storage.k8s.io/v1", "StorageClass"): StorageClass,
    ("storage.k8s.io/v1", "CSINode"): CSINode,
    ("storage.k8s.io/v1", "CSIDriver"): CSIDriver,
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): CustomResourceDefinition,
}


def model_for(api_version: str, kind: str) -> type[TypedObject] | None:
    """The model of an apiVersion/kind, or None when kubetaint does not serve it."""
    return MODELS.get((api_version, kind))


def decode(obj: Mapping[str, Any]) -> TypedObject:
    """Decode a Kubernetes JSON object into its model; DecodeError names the field and Go types."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    model = model_for(api_version, kind)
    if model is None:
        raise DecodeError(f'no kind "{kind}" is registered for version "{api_version}"', "")
    try:
        decoded = model.from_dict(obj)
        refused = daemonset_generation.conversion_error(obj) if kind == "DaemonSet" else None
        if refused is not None:  # the v1 conversion of the template generation annotation
            raise DecodeError(refused, "metadata.annotations")
        return decoded
    except DecodeError as exc:
        version = api_version.rpartition("/")[2]
        message = f'{kind} in version "{version}" cannot be handled as a {kind}: {exc}'
        raise DecodeError(message, exc.path) from None
