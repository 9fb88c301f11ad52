"""Resource list checks for container requests/limits and node capacity/allocatable
(mirrors pkg/apis/core/validation/validation.go: ValidateResourceQuantityValue,
ValidateContainerResourceRequirements, validateContainerResourceName; pkg/apis/core/helper for the
resource-name classes).

A malformed quantity is a decode error in kube-apiserver; here it is reported as an Invalid value at
the quantity's field with upstream's decode message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.quantity import QUANTITY_FORMAT_ERROR, QuantityError, format_quantity, parse_quantity
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_qualified_name
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR
from kubetaint.speed.memo import Memo

NOT_INTEGER_ERROR = "must be an integer"
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
        "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
        "requests.storage", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip
_INTEGER_RESOURCES = frozenset({"pods", "services", "replicationcontrollers", "resourcequotas", "secrets"})


def is_native_resource(name: str) -> bool:
    """helper.IsNativeResource: no domain, or a kubernetes.io domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepage_resource(name: str) -> bool:
    """helper.IsHugePageResourceName."""
    return name.startswith("hugepages-")


def is_extended_resource(name: str) -> bool:
    """helper.IsExtendedResourceName: a non-native, non-quota qualified name."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than hugepages."""
    return is_native_resource(name) and not is_hugepage_resource(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def parse_or_error(raw: Any, path: str) -> tuple[Any, list[f.FieldError]]:
    """The quantity's exact value, or the decode error for a malformed one."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None, [f.invalid(path, raw, QUANTITY_FORMAT_ERROR)]
    try:
        return parse_quantity(raw), []
    except QuantityError:
        return None, [f.invalid(path, raw, QUANTITY_FORMAT_ERROR)]


def validate_quantity_value(name: str, raw: Any, path: str) -> list[f.FieldError]:
    """ValidateResourceQuantityValue: non-negative, and whole for integer resources."""
    amount, errs = parse_or_error(raw, path)
    if errs:
        return errs
    if amount < 0:
        errs.append(f.invalid(path, format_quantity(raw), IS_NEGATIVE_ERROR))
    if _is_integer_resource(name) and (amount * 1000) % 1000 != 0:
        errs.append(f.invalid(path, format_quantity(raw), NOT_INTEGER_ERROR))
    return errs


#: validate_resource_list results by content: every node of a group reports the same capacity.
_RESOURCE_LISTS: Memo[tuple[str, tuple[tuple[str, str], ...]], tuple[f.FieldError, ...]] = Memo(
    "api.validation.quantities.resource_lists", limit=1 << 10
)


def validate_resource_list(resources: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """Node capacity/allocatable: each quantity at `<path>.<name>` (upstream uses Child, not Key);
    remembered by content when every name and quantity is a string."""
    items = tuple(resources.items())
    if not all(type(k) is str and type(v) is str for k, v in items):
        return _validate_resource_list(resources, path)
    key = (path, items)
    found = _RESOURCE_LISTS.get(key)
    if found is None:
        found = _RESOURCE_LISTS.put(key, tuple(_validate_resource_list(resources, path)))
    return list(found)


def _validate_resource_list(resources: Mapping[str, Any], path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for name in sorted(resources):
        errs.extend(validate_quantity_value(name, resources[name], f.child(path, name)))
    return errs


def _is_standard_resource(name: str) -> bool:
    return name.startswith("kubernetes.io/") or is_hugepage_resource(name) or name in _STANDARD_RESOURCES


def validate_resource_name(name: str, path: str) -> list[f.FieldError]:
    """validateResourceName: a qualified name, and a standard one when it has no domain."""
    errs = [f.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not _is_standard_resource(name):
        return [f.invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _validate_container_resource_name(name: str, path: str) -> list[f.FieldError]:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage_resource(name):
            errs.append(f.invalid(path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        errs.append(f.invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def validate_resource_requirements(requirements: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateContainerResourceRequirements (names, values, requests against limits)."""
    errs: list[f.FieldError] = []
    lim_path, req_path = f.child(path, "limits"), f.child(path, "requests")
    limits = requirements.get("limits") or {}
    requests = requirements.get("requests") or {}
    if not isinstance(limits, Mapping) or not isinstance(requests, Mapping):
        return errs
    for name in sorted(limits):
        entry = f.key(lim_path, name)
        errs.extend(_validate_container_resource_name(name, entry))
        errs.extend(validate_quantity_value(name, limits[name], entry))
    for name in sorted(requests):
        entry = f.key(req_path, name)
        errs.extend(_validate_container_resource_name(name, entry))
        value_errs = validate_quantity_value(name, requests[name], entry)
        errs.extend(value_errs)
        if value_errs:
            continue
        errs.extend(_request_against_limit(name, requests[name], limits, lim_path, req_path))
    return errs


def _request_against_limit(
    name: str, request: Any, limits: Mapping[str, Any], lim_path: str, req_path: str
) -> list[f.FieldError]:
    if name not in limits:
        if not is_overcommit_allowed(name):
            return [f.required(lim_path, "Limit must be set for non overcommitable resources")]
        return []
    limit, limit_errs = parse_or_error(limits[name], lim_path)
    if limit_errs:
        return []
    amount = parse_quantity(request)
    shown, limit_shown = format_quantity(request), format_quantity(limits[name])
    if amount != limit and not is_overcommit_allowed(name):
        return [f.invalid(req_path, shown, f"must be equal to {name} limit of {limit_shown}")]
    if amount > limit:
        return [f.invalid(req_path, shown, f"must be less than or equal to {name} limit of {limit_shown}")]
    return []
