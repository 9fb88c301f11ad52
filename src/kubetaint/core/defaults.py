"""Pod API defaulting that scheduling depends on (mirrors pkg/apis/core/v1/defaults.go
SetDefaults_Pod): a container with limits but no request for a resource requests its limit.

Upstream runs it when a standalone Pod is decoded (not for pod templates), so a pod created with
limits only is scheduled on, and classified by QoS with, requests equal to those limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]
_CONTAINER_LISTS = ("containers", "initContainers")


def default_pod_requests(pod: JSON) -> JSON:
    """`pod` with every missing container request defaulted from its limit; the same object
    when nothing changes (the input is never modified)."""
    spec = pod.get("spec")
    if type(spec) is not dict and not isinstance(spec, Mapping):
        return pod
    new_spec: JSON | None = None
    for field in _CONTAINER_LISTS:
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        defaulted: list[Any] | None = None
        for i, container in enumerate(containers):
            new = _default_container(container)
            if new is not container:
                if defaulted is None:
                    defaulted = list(containers)
                defaulted[i] = new
        if defaulted is not None:
            new_spec = {**(new_spec or spec), field: defaulted}
    return pod if new_spec is None else {**pod, "spec": new_spec}


def _default_container(container: Any) -> Any:
    # (dicts first: the ABC check is slow, and every pod written asks)
    if type(container) is not dict and not isinstance(container, Mapping):
        return container
    resources = container.get("resources")
    if type(resources) is not dict and not isinstance(resources, Mapping):
        return container
    limits = resources.get("limits")
    if (type(limits) is not dict and not isinstance(limits, Mapping)) or not limits:
        return container
    requests = resources.get("requests")
    requests = requests if type(requests) is dict or isinstance(requests, Mapping) else {}
    missing = {k: v for k, v in limits.items() if k not in requests}
    if not missing:
        return container
    return {**container, "resources": {**resources, "requests": {**requests, **missing}}}


RBAC_GROUP = "rbac.authorization.k8s.io"


def default_role_binding(binding: JSON) -> JSON:
    """SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding / SetDefaults_Subject
    (pkg/apis/rbac/v1/defaults.go): an empty roleRef.apiGroup, and a User or Group subject's
    empty apiGroup, become rbac.authorization.k8s.io; the same object when nothing changes."""
    out = binding
    ref = binding.get("roleRef")
    if isinstance(ref, Mapping) and not ref.get("apiGroup"):
        out = {**out, "roleRef": {**ref, "apiGroup": RBAC_GROUP}}
    subjects = binding.get("subjects")
    if isinstance(subjects, list) and any(_subject_needs_group(s) for s in subjects):
        fixed = [{**s, "apiGroup": RBAC_GROUP} if _subject_needs_group(s) else s for s in subjects]
        out = {**out, "subjects": fixed}
    return out


def _subject_needs_group(subject: Any) -> bool:
    return (
        isinstance(subject, Mapping)
        and subject.get("kind") in ("User", "Group")
        and not subject.get("apiGroup")
    )
