"""How a list request reads the store: ListOptions validation
(apimachinery/pkg/apis/meta/internalversion/validation ValidateListOptions, with the WatchList
feature gate on, as in v1.35) and the resourceVersion semantics of kube-apiserver's watch cache
and etcd3 store (apiserver/pkg/storage/cacher/cacher.go shouldDelegateList, etcd3/store.go
GetList):

- no resourceVersion: the current state, paged by `limit`;
- `resourceVersion=0` (not Exact): served whole from the cache, `limit` ignored, no continue;
- `resourceVersionMatch=Exact`, or a non-zero resourceVersion with a `limit` and no match (the
  legacy exact read): the state at exactly that version, paged (410 when compacted);
- otherwise (NotOlderThan, or no match without a limit): the current state, 504
  ResourceVersionTooLarge when the version is in the future;
- a continue token lists on at its first page's version, and takes no resourceVersion but "0".
"""

from __future__ import annotations

from dataclasses import dataclass

from kubetaint.api import errors
from kubetaint.apiserver.query import Query
from kubetaint.store.interface import Store
from kubetaint.store.mutation import parse_resource_version
from kubetaint.store.snapshot import too_large_resource_version

EXACT = "Exact"
NOT_OLDER_THAN = "NotOlderThan"
_FIELD = "resourceVersionMatch"


def _forbidden(field: str, detail: str) -> tuple[str, str, str]:
    return field, "FieldValueForbidden", f"Forbidden: {detail}"


def _not_supported(field: str, value: str, supported: list[str]) -> tuple[str, str, str]:
    listed = ", ".join(f'"{v}"' for v in supported)
    return field, "FieldValueNotSupported", f'Unsupported value: "{value}": supported values: {listed}'


def list_option_errors(params: Query, *, watch: bool) -> list[tuple[str, str, str]]:
    """ValidateListOptions' errors as (field, cause reason, message), in upstream's order."""
    match = params.get(_FIELD) or ""
    version = params.get("resourceVersion") or ""
    cont = params.get("continue") or ""
    initial = "sendInitialEvents" in params
    found: list[tuple[str, str, str]] = []
    if watch:
        if initial and match != NOT_OLDER_THAN:
            found.append(
                _forbidden(_FIELD, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
            )
        if match:
            if not initial:
                found.append(
                    _forbidden(
                        _FIELD,
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    )
                )
            if match != NOT_OLDER_THAN:
                found.append(_not_supported(_FIELD, match, [NOT_OLDER_THAN]))
            if cont:
                found.append(
                    _forbidden(_FIELD, "resourceVersionMatch is forbidden when continue is provided")
                )
        return found
    if match:
        if not version:
            found.append(
                _forbidden(_FIELD, "resourceVersionMatch is forbidden unless resourceVersion is provided")
            )
        if cont:
            found.append(_forbidden(_FIELD, "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            found.append(_not_supported(_FIELD, match, [EXACT, NOT_OLDER_THAN, ""]))
        if match == EXACT and version == "0":
            found.append(
                _forbidden(_FIELD, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
            )
    if initial:
        found.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return found


def validate_list_options(params: Query, *, watch: bool) -> None:
    """422 Invalid for ListOptions as get.go answers them (errors.NewInvalid of the
    ListOptions.meta.k8s.io kind, named "")."""
    found = list_option_errors(params, watch=watch)
    if not found:
        return
    texts = [f"{field}: {message}" for field, _, message in found]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    raise errors.StatusError(
        422,
        "Invalid",
        f'ListOptions.meta.k8s.io "" is invalid: {joined}',
        group="meta.k8s.io",
        kind="ListOptions",
        causes=[{"reason": reason, "message": message, "field": field} for field, reason, message in found],
    )


@dataclass(frozen=True, slots=True)
class ListRead:
    """What the store is asked: `limit` (0: whole) and `resource_version` (None: current)."""

    limit: int
    resource_version: int | None


def list_read(params: Query, store: Store) -> ListRead:
    """The store read for a validated list request (see the module docstring)."""
    limit = max(params.int64("limit"), 0)
    text = params.get("resourceVersion") or ""
    match = params.get(_FIELD) or ""
    if params.get("continue"):
        if text and text != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        return ListRead(limit, None)
    if not text:
        return ListRead(limit, None)
    version = parse_resource_version(text)
    if match == EXACT or (version and limit and not match):
        return ListRead(limit, version)
    if version == 0:
        return ListRead(0, None)
    current = store.current_resource_version()
    if version > current:
        raise too_large_resource_version(version, current)
    return ListRead(limit, None)
