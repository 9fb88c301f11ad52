"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via `jsonpatch`) and the
subset of strategic merge patch kubectl and the Python client use for the served kinds
(mirrors apimachinery/pkg/util/strategicpatch/patch.go; merge keys from the API types'
`patchMergeKey`/`patchStrategy` tags).

Strategic merge: maps merge, `null` deletes, lists with a merge key merge by it, primitive
lists with strategy merge (finalizers) union, every other list is replaced (spec.taints,
spec.tolerations). Directives: `$patch: replace|delete|merge`, `$retainKeys`,
`$deleteFromPrimitiveList/<f>`; `$setElementOrder/<f>` is tolerated and ignored.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from kubetaint.api import errors

JSON = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_PATCH)

#: Field name -> patch merge key for the lists of the served kinds (pods, nodes, workloads).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "conditions": "type",
    "addresses": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "podIPs": "ip",
    "hostIPs": "ip",
    "topologySpreadConstraints": "topologyKey",
}
#: Primitive lists with patchStrategy=merge (set union).
MERGED_PRIMITIVE_LISTS = frozenset({"finalizers"})

_SET_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: JSON, operations: Any) -> Any:
    if not isinstance(operations, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        return jsonpatch.JsonPatch(operations).apply(target)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as exc:
        raise errors.StatusError(422, "Invalid", str(exc)) from None


def strategic_merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch: the patch must be a JSON object")
    return _merge_map(target if isinstance(target, dict) else {}, patch)


def _merge_map(original: JSON, patch: JSON) -> JSON:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise errors.bad_request(f"Unknown patch type: {directive!r} in map")
    result = dict(original)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith(_SET_ORDER):
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field_name = key[len(_DELETE_PRIMITIVE) :]
            if isinstance(value, list) and isinstance(result.get(field_name), list):
                result[field_name] = [v for v in result[field_name] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            result[key] = _merge_map(current if isinstance(current, dict) else {}, value)
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(field_name: str, original: Any, patch: list[Any]) -> list[Any]:
    current = original if isinstance(original, list) else []
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")]
    if field_name in MERGED_PRIMITIVE_LISTS:
        return list(current) + [v for v in patch if v not in current]
    key = MERGE_KEYS.get(field_name)
    if key is None or not all(isinstance(item, dict) for item in patch):
        return copy.deepcopy(patch)
    result = list(current)
    for item in patch:
        if key not in item:
            raise errors.bad_request(f"map: {item} does not contain declared merge key: {key}")
        index = next(
            (i for i, have in enumerate(result) if isinstance(have, dict) and have.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                result.pop(index)
            continue
        if index is None:
            result.append(_merge_map({}, item))
        else:
            result[index] = _merge_map(result[index], item)
    return result
