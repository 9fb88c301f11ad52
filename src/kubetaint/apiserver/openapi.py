"""OpenAPI v3 documents: `/openapi/v3` (the index) and one document per served group version,
shaped as kube-apiserver's (kube-openapi's v3 handler and builder3; the schemas are upstream's
v1.35 `components.schemas`, pruned to the served kinds by scripts/build_openapi_data.py).

Each document lists only the paths the server serves, with operations carrying
`x-kubernetes-group-version-kind` and `x-kubernetes-action` and, on PATCH, the `fieldValidation`
parameter and the four patch content types: kubectl's validator then sends `fieldValidation=Strict`,
client-side apply takes strategic-merge metadata from the schemas, and `kubectl explain` finds a
kind's schema through its paths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from typing import Any

from kubetaint.api.crd import CustomResource
from kubetaint.api.openapi_schemas import REF, schema_name, schemas
from kubetaint.apiserver import crd_openapi
from kubetaint.apiserver.discovery import VERSION_INFO
from kubetaint.apiserver.resources import ResourceInfo, group_versions, resources_in, subresources
from kubetaint.apiserver.wire import JSON, dumps

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
RESPONSE_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")


def _ref(name: str) -> JSON:
    return {"$ref": REF + name}


def _param(name: str, where: str = "query", description: str = "", type_: str = "string") -> JSON:
    out: JSON = {"name": name, "in": where, "schema": {"type": type_}, "uniqueItems": True}
    if description:
        out["description"] = description
    if where == "path":
        out["required"] = True
    return out


_WRITE_PARAMS = [
    _param("dryRun", description="When present, indicates that modifications should not be persisted."),
    _param("fieldManager", description="fieldManager is a name associated with the actor or entity."),
    _param(
        "fieldValidation",
        description="fieldValidation instructs the server on how to handle objects in the request"
        " (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn"
        " - Strict",
    ),
]


def _content(name: str, types: tuple[str, ...] = RESPONSE_TYPES) -> JSON:
    return {media: {"schema": _ref(name)} for media in types}


def _operation(
    action: str, gvk: JSON, response: str, *, body: str | None = None, patch: bool = False
) -> JSON:
    op: JSON = {"description": f"{action} the specified {gvk['kind']}", "tags": [_tag(gvk)]}
    if action in ("create", "update", "patch"):
        op["parameters"] = [*_WRITE_PARAMS] + ([_param("force", type_="boolean")] if patch else [])
    if patch:
        op["requestBody"] = {"content": _content(META + "Patch", PATCH_TYPES), "required": True}
    elif body is not None:
        op["requestBody"] = {"content": {"*/*": {"schema": _ref(body)}}, "required": True}
    ok = "201" if action == "create" else "200"
    op["responses"] = {ok: {"content": _content(response), "description": "OK"}}
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = gvk
    return op


def _tag(gvk: JSON) -> str:
    group = str(gvk["group"]).split(".")[0] or "core"
    return f"{group}_{gvk['version']}"


def _gvk(group: str, version: str, kind: str) -> JSON:
    return {"group": group, "kind": kind, "version": version}


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _resource_paths(res: ResourceInfo) -> dict[str, JSON]:
    prefix = "/" + _gv_path(res.group, res.version)
    scope = f"{prefix}/namespaces/{{namespace}}" if res.namespaced else prefix
    gvk = _gvk(res.group, res.version, res.kind)
    if isinstance(res, CustomResource):
        kind_schema: str | None = crd_openapi.friendly_name(res.group, res.version, res.kind)
        list_schema: str | None = crd_openapi.friendly_name(res.group, res.version, res.list_kind)
    else:
        kind_schema = schema_name(res.group, res.version, res.kind)
        list_schema = schema_name(res.group, res.version, res.list_kind)
    if kind_schema is None:
        return {}
    ns_param = [_param("namespace", "path")] if res.namespaced else []
    collection: JSON = {}
    item: JSON = {}
    if "list" in res.verbs and list_schema:
        collection["get"] = _operation("list", gvk, list_schema)
    if "create" in res.verbs:
        collection["post"] = _operation("create", gvk, kind_schema, body=kind_schema)
    if "deletecollection" in res.verbs:
        collection["delete"] = _operation("deletecollection", gvk, META + "Status")
    if "get" in res.verbs:
        item["get"] = _operation("get", gvk, kind_schema)
    if "update" in res.verbs:
        item["put"] = _operation("update", gvk, kind_schema, body=kind_schema)
    if "patch" in res.verbs:
        item["patch"] = _operation("patch", gvk, kind_schema, patch=True)
    if "delete" in res.verbs:
        item["delete"] = _operation("delete", gvk, kind_schema, body=META + "DeleteOptions")
    paths: dict[str, JSON] = {}
    if collection:
        paths[f"{scope}/{res.plural}"] = {**collection, "parameters": ns_param}
    if res.namespaced and "list" in res.verbs and list_schema:
        paths[f"{prefix}/{res.plural}"] = {"get": _operation("list", gvk, list_schema), "parameters": []}
    name_params = [_param("name", "path"), *ns_param]
    if item:
        paths[f"{scope}/{res.plural}/{{name}}"] = {**item, "parameters": name_params}
    for sub in subresources(res):
        sub_schema = (
            kind_schema
            if isinstance(res, CustomResource) and sub.name == "status"
            else schema_name(sub.group, sub.version, sub.kind)
        )
        if sub_schema is None:
            continue
        sub_gvk = _gvk(sub.group, sub.version, sub.kind)
        ops: JSON = {}
        if "get" in sub.verbs:
            ops["get"] = _operation("get", sub_gvk, sub_schema)
        if "update" in sub.verbs:
            ops["put"] = _operation("update", sub_gvk, sub_schema, body=sub_schema)
        if "patch" in sub.verbs:
            ops["patch"] = _operation("patch", sub_gvk, sub_schema, patch=True)
        if "create" in sub.verbs:
            ops["post"] = _operation("create", sub_gvk, sub_schema, body=sub_schema)
        paths[f"{scope}/{res.plural}/{{name}}/{sub.name}"] = {**ops, "parameters": name_params}
    return paths


def _closure(names: set[str]) -> dict[str, JSON]:
    table = schemas()
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen or name not in table:
            continue
        seen.add(name)
        todo.extend(_refs(table[name]) - seen)
    return {name: table[name] for name in sorted(seen)}


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith(REF):
                found.add(ref[len(REF) :])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def openapi_document(group: str, version: str) -> JSON | None:
    """The document of one served group version, or None when it is not served."""
    served = resources_in(group, version)
    if not served:
        return None
    paths: JSON = {}
    for res in served:
        paths.update(_resource_paths(res))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": VERSION_INFO["gitVersion"]},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": _closure(_refs(paths))},
    }


@cache
def _rendered(group: str, version: str, git_version: str) -> tuple[bytes, str] | None:
    doc = openapi_document(group, version)
    if doc is None:
        return None
    body = dumps(doc)
    return body, hashlib.sha512(body).hexdigest()[:128].upper()


def rendered_document(group: str, version: str) -> tuple[bytes, str] | None:
    """(JSON bytes, content hash) of a group version's document; cached per reported version."""
    return _rendered(group, version, str(VERSION_INFO["gitVersion"]))


def custom_document(resources: Sequence[CustomResource]) -> JSON:
    """The document of a custom resources' group version (`resources`: its served resources)."""
    paths: JSON = {}
    for res in resources:
        paths.update(_resource_paths(res))
    custom = crd_openapi.components(resources)
    shipped = _closure(_refs(paths) | _refs(custom))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted({**shipped, **custom}.items()))},
    }


def document_for(group: str, version: str, extra: Sequence[CustomResource]) -> tuple[bytes, str] | None:
    """(JSON bytes, content hash) of a group version's document: a built-in one, else the
    custom resources' of `extra` in that group version."""
    rendered = rendered_document(group, version)
    if rendered is not None:
        return rendered
    mine = [r for r in extra if r.group == group and r.version == version]
    return crd_openapi.render(custom_document(mine)) if mine else None


def openapi_index(extra: Sequence[CustomResource] = ()) -> JSON:
    paths: JSON = {}
    for group, versions in group_versions(extra).items():
        for version in versions:
            rendered = document_for(group, version, extra)
            if rendered is None:
                continue
            path = _gv_path(group, version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={rendered[1]}"}
    return {"paths": paths}
