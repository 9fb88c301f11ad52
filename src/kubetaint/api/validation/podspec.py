"""Pod spec and pod template checks kubetaint's kinds need
(mirrors pkg/apis/core/validation/validation.go: ValidatePodSpec, validateContainers,
validateContainerCommon, ValidatePodTemplateSpec, ValidatePodCreate; validateAffinity is in affinity.py,
validateTopologySpreadConstraints in topologyspread.py, ValidatePodUpdate in podupdate.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.jsonview import mappings_in as _list
from kubetaint.api.validation import field as f
from kubetaint.api.validation.affinity import validate_affinity
from kubetaint.api.validation.names import is_dns1123_label, name_is_dns_subdomain
from kubetaint.api.validation.objectmeta import validate_annotations, validate_labels
from kubetaint.api.validation.quantities import validate_resource_requirements
from kubetaint.api.validation.taints import validate_tolerations
from kubetaint.api.validation.topologyspread import (
    CREATE,
    SpreadOptions,
    validate_topology_spread_constraints,
)

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_INT32_MAX = 2**31 - 1


def _validate_container(container: Mapping[str, Any], path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    name = str(container.get("name") or "")
    name_path = f.child(path, "name")
    if not name:
        errs.append(f.required(name_path))
    else:
        errs.extend(f.invalid(name_path, name, msg) for msg in is_dns1123_label(name))
    if not container.get("image"):
        errs.append(f.required(f.child(path, "image")))
    policy = container.get("imagePullPolicy")
    if policy not in (None, "") and policy not in PULL_POLICIES:
        errs.append(f.not_supported(f.child(path, "imagePullPolicy"), policy, PULL_POLICIES))
    resources = container.get("resources")
    if isinstance(resources, Mapping):
        errs.extend(validate_resource_requirements(resources, f.child(path, "resources")))
    return errs


def _validate_containers(
    containers: Sequence[Mapping[str, Any]], path: str, seen: set[str], *, required: bool
) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if required and not containers:
        errs.append(f.required(path))
    for i, container in enumerate(containers):
        idx = f.index(path, i)
        errs.extend(_validate_container(container, idx))
        name = str(container.get("name") or "")
        if name in seen:
            errs.append(f.duplicate(f.child(idx, "name"), name))
        elif name:
            seen.add(name)
    return errs


def validate_pod_spec(
    spec: Mapping[str, Any], path: str, *, allow_comparison: bool, spread: SpreadOptions = CREATE
) -> list[f.FieldError]:
    """ValidatePodSpec, restricted to the fields kubetaint reasons about; `spread` holds the
    topology spread constraint options (an update's, from its old spec: topologyspread.spread_options)."""
    errs: list[f.FieldError] = []
    seen: set[str] = set()
    errs.extend(
        _validate_containers(_list(spec.get("containers")), f.child(path, "containers"), seen, required=True)
    )
    errs.extend(
        _validate_containers(
            _list(spec.get("initContainers")), f.child(path, "initContainers"), seen, required=False
        )
    )
    policy = spec.get("restartPolicy")
    if policy not in (None, "") and policy not in RESTART_POLICIES:
        errs.append(f.not_supported(f.child(path, "restartPolicy"), policy, RESTART_POLICIES))
    node_selector = spec.get("nodeSelector")
    if isinstance(node_selector, Mapping):
        errs.extend(validate_labels(node_selector, f.child(path, "nodeSelector")))
    # upstream: securityContext and imagePullSecrets (not checked here), then affinity
    errs.extend(validate_affinity(spec.get("affinity"), f.child(path, "affinity")))
    # upstream: dnsConfig, readinessGates and schedulingGates (not checked here), then the constraints
    errs.extend(
        validate_topology_spread_constraints(
            spec.get("topologySpreadConstraints"), f.child(path, "topologySpreadConstraints"), spread
        )
    )
    node_name = str(spec.get("nodeName") or "")
    if node_name:
        errs.extend(
            f.invalid(f.child(path, "nodeName"), node_name, m) for m in name_is_dns_subdomain(node_name)
        )
    errs.extend(_validate_active_deadline(spec, path))
    tolerations = _list(spec.get("tolerations"))
    errs.extend(
        validate_tolerations(tolerations, f.child(path, "tolerations"), allow_comparison=allow_comparison)
    )
    priority_class = str(spec.get("priorityClassName") or "")
    if priority_class:
        errs.extend(
            f.invalid(f.child(path, "priorityClassName"), priority_class, m)
            for m in name_is_dns_subdomain(priority_class)
        )
    return errs


def _validate_active_deadline(spec: Mapping[str, Any], path: str) -> list[f.FieldError]:
    value = spec.get("activeDeadlineSeconds")
    if isinstance(value, int) and not isinstance(value, bool) and not 1 <= value <= _INT32_MAX:
        detail = f"must be between 1 and {_INT32_MAX}, inclusive"
        return [f.invalid(f.child(path, "activeDeadlineSeconds"), value, detail)]
    return []


def validate_pod_template(
    template: Mapping[str, Any], path: str, *, allow_comparison: bool, spread: SpreadOptions = CREATE
) -> list[f.FieldError]:
    """ValidatePodTemplateSpec: template labels/annotations, then the pod spec.

    Upstream reports template labels at `<path>.labels` (not `<path>.metadata.labels`).
    """
    errs: list[f.FieldError] = []
    meta = template.get("metadata")
    if isinstance(meta, Mapping):
        if isinstance(meta.get("labels"), Mapping):
            errs.extend(validate_labels(meta["labels"], f.child(path, "labels")))
        if isinstance(meta.get("annotations"), Mapping):
            errs.extend(validate_annotations(meta["annotations"], f.child(path, "annotations")))
    spec = template.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    errs.extend(
        validate_pod_spec(spec, f.child(path, "spec"), allow_comparison=allow_comparison, spread=spread)
    )
    if spec.get("ephemeralContainers"):
        errs.append(
            f.forbidden(
                f.child(path, "spec", "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


def validate_containers_only_for_pod(spec: Mapping[str, Any]) -> list[f.FieldError]:
    """validateContainersOnlyForPod: pod (not template) images may not be padded with whitespace."""
    errs: list[f.FieldError] = []
    for name in ("containers", "initContainers"):
        for i, container in enumerate(_list(spec.get(name))):
            image = container.get("image")
            if isinstance(image, str) and image.strip() != image:
                path = f.child(f.index(f.child("spec", name), i), "image")
                errs.append(f.invalid(path, image, "must not have leading or trailing whitespace"))
    return errs


def validate_pod_create_rules(spec: Mapping[str, Any]) -> list[f.FieldError]:
    """ValidatePodCreate's extra rules."""
    errs: list[f.FieldError] = []
    if spec.get("ephemeralContainers"):
        errs.append(f.forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(f.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs
