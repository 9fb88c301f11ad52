"""Table responses (meta.k8s.io/v1 Table) for `kubectl get`: rows from the per-kind printers,
each carrying the object as PartialObjectMetadata, the full object, or nothing, per the
`includeObject` parameter (mirrors apiserver/pkg/endpoints/handlers/response.go and
registry/rest/table.go).
"""

from __future__ import annotations

from typing import Any

from kubetaint.api import errors
from kubetaint.api.crd import CustomResource
from kubetaint.api.events_conversion import to_served
from kubetaint.api.omitempty import omit_empty
from kubetaint.apiserver import crd_served, eventsv1
from kubetaint.apiserver.printers import printer_for
from kubetaint.apiserver.resources import ResourceInfo

JSON = dict[str, Any]
INCLUDE_OBJECT = ("Object", "Metadata", "None")


def include_object_policy(value: str | None) -> str:
    if value in (None, ""):
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"'
        )
    return str(value)


def row_object(res: ResourceInfo, obj: JSON, policy: str, table_version: str) -> JSON | None:
    if policy == "None":
        return None
    if policy == "Object":
        return with_type(res, obj)
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{table_version}",
        "metadata": obj.get("metadata") or {},
    }


def with_type(res: ResourceInfo, obj: JSON) -> JSON:
    """The object with kind/apiVersion set, as kube-apiserver encodes it (empty `omitempty` fields
    dropped); a shallow copy where anything changes."""
    if obj.get("kind") == res.kind and obj.get("apiVersion") == res.api_version:
        return omit_empty(obj)
    if eventsv1.converts(res):  # a stored core Event served as an events.k8s.io/v1 Event
        return omit_empty(to_served(obj))
    if isinstance(res, CustomResource):  # served at the request's version (conversion None)
        return omit_empty({**obj, "kind": res.kind, "apiVersion": res.api_version})
    return omit_empty({"kind": res.kind, "apiVersion": res.api_version, **obj})


def build_table(
    res: ResourceInfo,
    objects: list[JSON],
    now: float,
    *,
    policy: str,
    table_version: str = "v1",
    resource_version: str | None = None,
    continue_token: str | None = None,
    remaining_item_count: int | None = None,
    headers: bool = True,
) -> JSON:
    if isinstance(res, CustomResource):
        columns, printer = crd_served.printer(res)
    else:
        columns, printer = printer_for(res.store_resource)
    rows = []
    for obj in objects:
        row: JSON = {"cells": printer(obj, now)}
        embedded = row_object(res, obj, policy, table_version)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    meta: JSON = {}
    if resource_version is not None:
        meta["resourceVersion"] = resource_version
    if continue_token:
        meta["continue"] = continue_token
    if remaining_item_count is not None:
        meta["remainingItemCount"] = remaining_item_count
    table: JSON = {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}", "metadata": meta}
    if headers:
        table["columnDefinitions"] = columns
    table["rows"] = rows
    return table
