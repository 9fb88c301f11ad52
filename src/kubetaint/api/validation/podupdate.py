"""What a pod update may change (mirrors ValidatePodUpdate, ValidateContainerUpdates,
validateOnlyAddedTolerations and validateOnlyDeletedSchedulingGates in
pkg/apis/core/validation/validation.go).

A pod's spec is immutable once created except for container and init-container images,
`activeDeadlineSeconds` (set, or lowered), tolerations (only additions; `tolerationSeconds` may
change), scheduling gates (only removals) and a negative `terminationGracePeriodSeconds` raised
to 1. Everything else is compared after those fields are "munged" back to the old values; a
difference is one Forbidden error on `spec` carrying upstream's list of updatable fields and a
short diff of what changed.

Equality is apimachinery's semantic equality (kubetaint.api.semantic).
For a gated pod upstream also allows nodeSelector additions and node-affinity narrowing; those
two fields are set aside for gated pods without the narrowing checks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.jsonview import mappings_in as _list
from kubetaint.api.semantic import semantic
from kubetaint.api.validation import field as f
from kubetaint.api.validation.taints import validate_only_added_tolerations

_INT32_MAX = 2**31 - 1

#: upstream's updatablePodSpecFields, joined with "," in the message.
UPDATABLE_POD_SPEC_FIELDS = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
FORBIDDEN_UPDATE_DETAIL = "pod updates may not change fields other than " + ",".join(
    UPDATABLE_POD_SPEC_FIELDS
)


def validate_pod_update_rules(
    new_spec: Mapping[str, Any], old_spec: Mapping[str, Any], *, allow_comparison: bool
) -> list[f.FieldError]:
    """ValidatePodUpdate's rules after the spec itself was validated, in upstream's order.

    Like upstream, the tolerations are validated again after the only-added check (ValidatePodSpec
    already did it once), so an invalid toleration is reported twice on update.
    """
    errs: list[f.FieldError] = []
    for name in ("containers", "initContainers"):
        container_errs, stop = _container_updates(_list(new_spec.get(name)), _list(old_spec.get(name)), name)
        errs.extend(container_errs)
        if stop:
            return errs
    deadline_errs, stop = _active_deadline_update(new_spec, old_spec)
    errs.extend(deadline_errs)
    if stop:
        return errs
    errs.extend(
        validate_only_added_tolerations(
            _list(new_spec.get("tolerations")),
            _list(old_spec.get("tolerations")),
            allow_comparison=allow_comparison,
        )
    )
    errs.extend(_only_deleted_scheduling_gates(_list(new_spec.get("schedulingGates")), old_spec))
    changed = _immutable_changes(new_spec, old_spec)
    if changed:
        errs.append(f.forbidden("spec", FORBIDDEN_UPDATE_DETAIL + "\n" + _diff_text(changed)))
    return errs


def _container_updates(
    new: Sequence[Mapping[str, Any]], old: Sequence[Mapping[str, Any]], name: str
) -> tuple[list[f.FieldError], bool]:
    """ValidateContainerUpdates: the same number of containers, each with a clean image."""
    path = f.child("spec", name)
    if len(new) != len(old):
        return [f.forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[f.FieldError] = []
    for i, container in enumerate(new):
        image = container.get("image")
        if not image:
            errs.append(f.required(f.child(f.index(path, i), "image")))
        elif isinstance(image, str) and image.strip() != image:
            detail = "must not have leading or trailing whitespace"
            errs.append(f.invalid(f.child(f.index(path, i), "image"), image, detail))
    return errs, False


def _active_deadline_update(
    new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]
) -> tuple[list[f.FieldError], bool]:
    """activeDeadlineSeconds may go from unset to a value, or down; never up or back to unset."""
    path = "spec.activeDeadlineSeconds"
    new, old = new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds")
    if new is not None:
        if not isinstance(new, int) or new < 0 or new > _INT32_MAX:
            return [f.invalid(path, new, f"must be between 0 and {_INT32_MAX}, inclusive")], True
        if isinstance(old, int) and old < new:
            return [f.invalid(path, new, "must be less than or equal to previous value")], True
    elif old is not None:
        return [f.invalid(path, None, "must not update from a positive integer to nil value")], False
    return [], False


def _only_deleted_scheduling_gates(
    new_gates: Sequence[Mapping[str, Any]], old_spec: Mapping[str, Any]
) -> list[f.FieldError]:
    """validateOnlyDeletedSchedulingGates: a gate may be removed, never added."""
    old_names = {g.get("name") for g in _list(old_spec.get("schedulingGates"))}
    errs: list[f.FieldError] = []
    for i, gate in enumerate(new_gates):
        name = gate.get("name")
        if name not in old_names:
            detail = f"only deletion is allowed, but found new scheduling gate '{name}'"
            errs.append(f.forbidden(f.child(f.index("spec.schedulingGates", i), "name"), detail))
    return errs


def _munged(new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> dict[str, Any]:
    """The new spec with every updatable field put back to its old value."""
    spec = dict(new_spec)
    for name in ("containers", "initContainers"):
        old_list = _list(old_spec.get(name))
        if isinstance(spec.get(name), list):
            spec[name] = [
                {**c, "image": old_list[i].get("image")}
                if isinstance(c, Mapping) and i < len(old_list)
                else c
                for i, c in enumerate(spec[name])
            ]
    for name in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        _put_back(spec, old_spec, name)
    old_grace, new_grace = (
        old_spec.get("terminationGracePeriodSeconds"),
        spec.get("terminationGracePeriodSeconds"),
    )
    if isinstance(old_grace, int) and old_grace < 0 and new_grace == 1:
        spec["terminationGracePeriodSeconds"] = old_grace
    if _list(old_spec.get("schedulingGates")):
        _put_back(spec, old_spec, "nodeSelector")
        spec["affinity"] = _with_old_node_affinity(spec.get("affinity"), old_spec.get("affinity"))
    return spec


def _put_back(spec: dict[str, Any], old_spec: Mapping[str, Any], name: str) -> None:
    if name in old_spec:
        spec[name] = old_spec[name]
    else:
        spec.pop(name, None)


def _with_old_node_affinity(new: Any, old: Any) -> Any:
    new_map = dict(new) if isinstance(new, Mapping) else {}
    old_map = old if isinstance(old, Mapping) else {}
    _put_back(new_map, old_map, "nodeAffinity")
    return new_map


def _immutable_changes(
    new_spec: Mapping[str, Any], old_spec: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """(path, old, new) for every semantic difference outside the updatable fields."""
    if new_spec == old_spec:
        return []
    changes: list[tuple[str, Any, Any]] = []
    _compare(semantic(old_spec), semantic(_munged(new_spec, old_spec)), "spec", changes)
    return changes


def _compare(old: Any, new: Any, path: str, changes: list[tuple[str, Any, Any]]) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            _compare(old.get(key), new.get(key), f.child(path, key), changes)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (o, n) in enumerate(zip(old, new, strict=True)):
            _compare(o, n, f.index(path, i), changes)
        return
    changes.append((path, old, new))


def _diff_text(changes: Sequence[tuple[str, Any, Any]]) -> str:
    """Our own compact rendering of the difference (upstream prints a Go cmp.Diff)."""
    lines = []
    for path, old, new in changes:
        lines.append(f"  {path}:")
        if old is not None:
            lines.append(f"-   {_render(old)}")
        if new is not None:
            lines.append(f"+   {_render(new)}")
    return "\n".join(lines)


def _render(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
