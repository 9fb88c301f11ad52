"""The custom resources the server serves: those of the established CustomResourceDefinitions in
the store (read at each request, so a CRD's resources are served, listed by discovery and
removed as soon as it is established or deleted, on every replica), and what serving one
differs in from a built-in kind: decoding (pruning, defaulting, unknown-field warnings), schema
validation, versions, Table columns and the scale subresource (mirrors apiextensions-apiserver
pkg/apiserver/customresource_handler.go, pkg/registry/customresource and its tableconvertor).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api import crschema, errors
from kubetaint.api.crd import CRDS, CustomResource, served_resources
from kubetaint.api.goquote import go_quote
from kubetaint.api.jsonview import meta_of
from kubetaint.api.openapi_schemas import cannot_handle, strict_decoding_error
from kubetaint.api.resources import Resource
from kubetaint.api.selectors import parse_field_selector
from kubetaint.api.validation import field as fe
from kubetaint.api.validation.crd import validate_custom_resource_meta
from kubetaint.apiserver import crd_scale
from kubetaint.apiserver.fieldvalidation import directive
from kubetaint.apiserver.printing import AGE_COLUMN, NAME_COLUMN, Cells, Printer, col, since
from kubetaint.store.interface import Store

JSON = dict[str, Any]

#: The Table column a CRD without additionalPrinterColumns gets (serveDefaultColumnsIfEmpty).
DEFAULT_COLUMNS: tuple[JSON, ...] = (
    {
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
        "description": AGE_COLUMN["description"],
    },
)


class CustomResources:
    """The served custom resources of a store's CRDs."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def lookup(self, group: str, version: str, plural: str) -> CustomResource | None:
        """The resource served at /apis/<group>/<version>/<plural>, if a CRD defines it."""
        if "." not in group or not plural:
            return None
        try:
            crd = self.store.get(CRDS, "", f"{plural}.{group}")
        except errors.StatusError:
            return None
        return next((r for r in served_resources(crd) if r.version == version), None)

    def served(self) -> list[CustomResource]:
        """Every served custom resource, by group then version priority then plural."""
        try:
            crds = self.store.list(CRDS).items
        except errors.StatusError:
            return []
        out: list[CustomResource] = []
        for crd in sorted(crds, key=lambda c: str((c.get("spec") or {}).get("group") or "")):
            out.extend(served_resources(crd))
        return out


def check_field_labels(res: Resource, selector: str | None) -> None:
    """The custom resource converter's field labels (ConvertFieldLabel): `metadata.name`, and
    `metadata.namespace` for a namespaced resource only; 400 `field label not supported`
    otherwise (the store's selector parsing checks the rest)."""
    if not isinstance(res, CustomResource) or res.namespaced or not selector:
        return
    for field, _, _ in parse_field_selector(selector, res.store_resource).terms:
        if field == "metadata.namespace":
            raise errors.bad_request(f"field label not supported: {field}")


# decoding ---------------------------------------------------------------------------------


def decode(
    res: CustomResource, obj: JSON, validation: str | None, *, patch: bool = False
) -> tuple[JSON, list[str]]:
    """A custom resource as the unstructured decoder keeps it: unknown fields pruned (with
    `unknown field "spec.foo"` warnings, or a 400 for Strict), then defaults set."""
    mode = directive(validation)
    pruned, dropped = crschema.prune(obj, res.schema)
    found = [f'unknown field "{path}"' for path in dropped]
    if found and mode == "Strict":
        message = strict_decoding_error(found)
        if not patch:
            message = cannot_handle(res.kind, res.version, message)
        raise errors.bad_request(message)
    out = crschema.default(pruned, res.schema)
    return out, ([] if mode == "Ignore" else found)


class CustomResourceStrategy:
    """The custom resource strategy of one request (registry.RequestStrategy), which the
    registry runs after mutating admission and before validating admission: the main resource's
    (`subresource` ""; the scale subresource writes through it too) or the status
    subresource's ("status")."""

    def __init__(self, res: CustomResource, subresource: str = "") -> None:
        self.res = res
        self.subresource = subresource

    def prepare(self, obj: JSON, old: JSON | None) -> JSON:
        if old is None:
            return prepare_for_create(self.res, obj)
        if self.subresource == "status":
            return with_generation(obj, meta_of(old).get("generation"))
        return prepare_for_update(obj, old, status_subresource=self.res.has_status)

    def validate(self, obj: JSON, old: JSON | None) -> None:
        validate(self.res, obj, old, status=self.subresource == "status")


def validate(res: CustomResource, obj: JSON, old: JSON | None, *, status: bool = False) -> None:
    """The custom resource strategy's validation: the kind, metadata, the schema, then the scale
    subresource's replicas paths (the status strategy's: the status paths only); 422 Invalid."""
    errs = _type_meta_errors(res, obj)
    if not errs:  # ValidateTypeMeta's errors are returned alone
        errs = validate_custom_resource_meta(obj, old, namespaced=res.namespaced)
        errs.extend(crschema.validate(obj, res.schema))
        errs.extend(crd_scale.validate(obj, res.scale_paths, spec=not status))
    if errs:
        from kubetaint.api.validation.status import invalid_status

        name = str((obj.get("metadata") or {}).get("name") or "")
        raise errors.StatusError.from_status(invalid_status(res.kind, name, errs, res.group))


def _type_meta_errors(res: CustomResource, obj: JSON) -> list[fe.FieldError]:
    errs = []
    if obj.get("kind") != res.kind:
        errs.append(fe.invalid("kind", obj.get("kind"), f"must be {res.kind}"))
    return errs


def at_version(res: CustomResource, obj: JSON) -> JSON:
    """A stored object as served at `res.version` (conversion strategy None: the apiVersion)."""
    want = res.api_version
    if obj.get("apiVersion") == want:
        return obj
    return {**obj, "apiVersion": want}


def prepare_for_create(res: CustomResource, obj: JSON) -> JSON:
    """The custom resource strategy's PrepareForCreate: generation 1; no status when status is
    a subresource; stored at the storage version."""
    meta = meta_of(obj)
    out = {k: v for k, v in obj.items() if not (k == "status" and res.has_status)}
    return for_storage(res, {**out, "metadata": {**meta, "generation": 1}})


def prepare_for_update(obj: JSON, old: JSON, *, status_subresource: bool) -> JSON:
    """The custom resource strategy's PrepareForUpdate: with a status subresource, the status is
    old's (none when old has none); the generation is old's, plus one when anything outside
    `metadata` changes."""
    if status_subresource:
        obj = {k: v for k, v in obj.items() if k != "status"}
        if "status" in old:
            obj["status"] = old["status"]
    generation = meta_of(old).get("generation")
    if isinstance(generation, int) and _non_metadata(obj) != _non_metadata(old):
        generation += 1
    return with_generation(obj, generation)


def _non_metadata(obj: JSON) -> JSON:
    return {k: v for k, v in obj.items() if k != "metadata"}


def with_generation(obj: JSON, generation: Any) -> JSON:
    """`obj` with metadata.generation `generation` (none when it is not an int)."""
    meta = {k: v for k, v in meta_of(obj).items() if k != "generation"}
    if isinstance(generation, int) and not isinstance(generation, bool):
        meta["generation"] = generation
    return {**obj, "metadata": meta}


def for_storage(res: CustomResource, obj: JSON) -> JSON:
    """An object to store: at the storage version (conversion strategy None)."""
    if not res.storage_version or res.storage_version == res.version:
        return obj
    return {**obj, "apiVersion": f"{res.group}/{res.storage_version}"}


# tables -----------------------------------------------------------------------------------


def columns(res: CustomResource) -> tuple[list[JSON], list[JSON]]:
    """(Table column definitions, the CRD's columns) for a custom resource."""
    crd_columns = list(res.columns) or list(DEFAULT_COLUMNS)
    defs = [NAME_COLUMN]
    for c in crd_columns:
        defs.append(
            col(
                str(c.get("name") or ""),
                str(c.get("description") or ""),
                priority=int(c.get("priority") or 0),
                type_=str(c.get("type") or "string"),
                fmt=str(c.get("format") or ""),
            )
        )
    return defs, crd_columns


def printer(res: CustomResource) -> tuple[list[JSON], Printer]:
    """The Table columns and row printer of a custom resource."""
    defs, crd_columns = columns(res)

    def print_row(obj: JSON, now: float) -> Cells:
        return row(crd_columns, obj, now)

    return defs, print_row


def row(crd_columns: list[JSON], obj: JSON, now: float) -> Cells:
    """One Table row: the name, then each column's JSONPath value (dates as ages)."""
    cells: Cells = [meta_of(obj).get("name", "")]
    for c in crd_columns:
        value = _json_path(obj, str(c.get("jsonPath") or ""))
        cells.append(_cell(value, str(c.get("type") or "string"), now))
    return cells


def _json_path(obj: Any, path: str) -> Any:
    """A simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`)."""
    value = obj
    for part in path.strip(".").split("."):
        if not part:
            continue
        name, _, rest = part.partition("[")
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        while rest:
            idx, _, rest = rest.partition("]")
            rest = rest.lstrip("[")
            try:
                value = value[int(idx)] if isinstance(value, list) else None
            except (ValueError, IndexError):
                value = None
        if value is None:
            return None
    return value


def _cell(value: Any, kind: str, now: float) -> Any:
    """The tableconvertor's cell: None when absent, a date as its age, else the value (strings
    of scalars; lists and maps as JSON-ish text)."""
    if value is None:
        return None
    if kind == "date" and isinstance(value, str):
        return since(value, now)
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, separators=(",", ":"))


# scale ------------------------------------------------------------------------------------


def _path_get(obj: Mapping[str, Any], path: str) -> Any:
    return _json_path(obj, path)


def _path_set(obj: JSON, path: str, value: Any) -> JSON:
    parts = [p for p in path.strip(".").split(".") if p]
    out = dict(obj)
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        node[part] = child
        node = child
    node[parts[-1]] = value
    return out


def to_scale(res: CustomResource, obj: JSON) -> JSON:
    """The autoscaling/v1 Scale of a custom resource (scale.go's scaleFromCustomResource)."""
    spec_path, status_path, selector_path = res.scale_paths
    meta = meta_of(obj)
    replicas = _path_get(obj, spec_path)
    status_replicas = _path_get(obj, status_path)
    selector = _path_get(obj, selector_path) if selector_path else None
    status: JSON = {"replicas": int(status_replicas) if isinstance(status_replicas, int) else 0}
    if isinstance(selector, str) and selector:
        status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(replicas)} if isinstance(replicas, int) else {},
        "status": status,
    }


def from_scale(res: CustomResource, parent: JSON, scale: Any) -> JSON:
    """The custom resource with the Scale's spec.replicas at its specReplicasPath."""
    spec = scale.get("spec") if isinstance(scale, dict) else None
    replicas = spec.get("replicas", 0) if isinstance(spec, dict) else 0
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise errors.bad_request(f"Scale.spec.replicas: expected an integer, got {replicas!r}")
    if replicas < 0:
        name = str(meta_of(parent).get("name") or "")
        message = (
            f'Scale.autoscaling "{name}" is invalid: spec.replicas: Invalid value: {replicas}: '
            "must be greater than or equal to 0"
        )
        raise errors.StatusError(422, "Invalid", message, kind="Scale", group="autoscaling")
    return _path_set(parent, res.scale_paths[0], replicas)


#: The finalizers upstream names without a domain (helper.IsStandardFinalizerName).
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def finalizer_warnings(obj: JSON, old: JSON | None) -> list[str]:
    """The custom resource strategy's warnings on a write (generateWarningsFromObj): each
    finalizer it adds without a domain, other than the standard ones, in name order."""
    added = set(_finalizers(obj)) - set(_finalizers(old) if old is not None else ())
    return [
        f"metadata.finalizers: {go_quote(name)}: prefer a domain-qualified finalizer name to avoid "
        "accidental conflicts with other finalizer writers"
        for name in sorted(added)
        if "/" not in name and name not in STANDARD_FINALIZERS
    ]


def _finalizers(obj: JSON) -> list[str]:
    found = meta_of(obj).get("finalizers")
    return [f for f in found if isinstance(f, str)] if isinstance(found, list) else []


def crd_warnings(crd: JSON) -> list[str]:
    """The warnings a CRD write carries for what of it kubetaint does not model: conversion
    webhooks (never called: every served version is the stored object with its apiVersion
    changed), CEL rules and formats it does not check, selectable fields."""
    spec = crd.get("spec") if isinstance(crd.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    name = str(meta_of(crd).get("name") or "")
    out: list[str] = []
    conversion = spec.get("conversion") if isinstance(spec.get("conversion"), dict) else {}
    assert isinstance(conversion, dict)
    if conversion.get("strategy") == "Webhook":
        out.append(
            f"kubetaint does not call conversion webhooks: the versions of {name} are served as stored, "
            "with only apiVersion changed"
        )
    unchecked: list[str] = []
    selectable = False
    for version in spec.get("versions") or []:
        if not isinstance(version, dict):
            continue
        schema = (
            (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(version.get("schema"), dict)
            else None
        )
        for item in crschema.unchecked(schema if isinstance(schema, dict) else None):
            if item not in unchecked:
                unchecked.append(item)
        selectable = selectable or bool(version.get("selectableFields"))
    if unchecked:
        out.append(
            f"kubetaint does not check {', '.join(unchecked)} of {name}: values are accepted unchecked"
        )
    if selectable:
        out.append(
            f"kubetaint does not serve the selectableFields of {name}: field selectors take "
            "metadata.name and metadata.namespace only"
        )
    return out
