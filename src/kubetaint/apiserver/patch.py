"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, via `jsonpatch`, with the
operation and copy-size limits and the negative indices of kube-apiserver's json-patch) and the
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
import json
import re
from typing import Any

import jsonpatch
import jsonpointer

from kubetaint.api import errors
from kubetaint.api.goquote import go_float
from kubetaint.apiserver.limits import too_large

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
#: Lists whose patch strategy depends on the kind: (kind, field path) -> the merge key, or None
#: for a list that is replaced (`x-kubernetes-list-type: atomic`, no patch strategy), as the
#: shipped OpenAPI schemas give them; they take precedence over MERGE_KEYS.
KIND_MERGE_KEYS: dict[tuple[str, tuple[str, ...]], str | None] = {
    ("Service", ("spec", "ports")): "port",
    ("EndpointSlice", ("ports",)): None,
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


#: apiserver/pkg/endpoints/handlers/patch.go maxJSONPatchOperations.
MAX_JSON_PATCH_OPERATIONS = 10_000
#: apiserver's JSONPatchMaxCopyBytes default (jsonpatch.AccumulatedCopySizeLimit), 3 MiB.
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


#: What kube-apiserver answers for any JSON patch that does not apply: patch.go wraps the
#: json-patch error in NewGenericServerResponse(422, ...), whose message is this fixed text (the
#: library's own message is not sent).
PATCH_NOT_APPLIED = "the server rejected our request due to an error in our request"


class JSONPatchError(Exception):
    """A JSON patch that does not apply; the message is json-patch's, as it would say it."""


def json_patch(target: JSON, operations: Any, copy_limit: int = MAX_JSON_PATCH_COPY_BYTES) -> Any:
    """RFC 6902 as kube-apiserver applies it (patch.go with evanphx/json-patch): at most
    MAX_JSON_PATCH_OPERATIONS operations (413), then `apply_json_patch`; a patch that does not
    apply is a 422 `Invalid` with upstream's fixed message."""
    if not isinstance(operations, list):
        raise errors.bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise errors.StatusError(
            413,
            "RequestEntityTooLarge",
            "Request entity too large: The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(operations)}",
        )
    try:
        return apply_json_patch(target, operations, copy_limit)
    except JSONPatchError:
        raise errors.StatusError(422, "Invalid", PATCH_NOT_APPLIED) from None


def apply_json_patch(target: Any, operations: list[Any], copy_limit: int = MAX_JSON_PATCH_COPY_BYTES) -> Any:
    """`operations` applied to a copy of `target` as json-patch applies them: negative array
    indices count from the end, `move` is a remove then an add, and `copy` operations together
    add at most `copy_limit` bytes of JSON (jsonpatch.AccumulatedCopySizeLimit), so that a patch
    that copies a subtree into itself stops before it doubles the object out of memory. Raises
    JSONPatchError."""
    document: Any = json.loads(_dumps(target))  # a private copy, patched in place op by op
    accumulated = 0
    try:
        for given in operations:
            step = given
            if isinstance(given, dict) and given.get("op") == "move":
                # json-patch moves by a remove, then an add on the array the remove shortened
                removal = _with_positive_indices(document, {"op": "remove", "path": given.get("from")})
                value = jsonpointer.resolve_pointer(document, str(removal["path"]))
                document = jsonpatch.JsonPatch([removal]).apply(document, in_place=True)
                step = {"op": "add", "path": given.get("path"), "value": value}
            operation = _with_positive_indices(document, step)
            if isinstance(operation, dict) and operation.get("op") == "copy":
                source = jsonpointer.resolve_pointer(document, str(operation.get("from")))
                accumulated += len(_dumps(source))
                if accumulated > copy_limit:
                    raise JSONPatchError(
                        "Unable to complete the copy, the accumulated size increase of copy is "
                        f"{accumulated}, exceeding the limit {copy_limit}"
                    )
            document = jsonpatch.JsonPatch([operation]).apply(document, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError) as exc:
        raise JSONPatchError(str(exc)) from None
    return document


_NEGATIVE = re.compile(r"-[0-9]+")
#: Operations whose `path` names a place to insert at (an index may be the array's length).
_INSERTING = ("add", "copy", "move")


def _with_positive_indices(document: Any, operation: Any) -> Any:
    """json-patch's SupportNegativeIndices (on in kube-apiserver): an array index -N in `path`
    or `from` counts from the end (from the end of the array grown by one for an insertion's
    `path`); one past the front stays as it is and fails as out of range."""
    if not isinstance(operation, dict):
        return operation
    changed = dict(operation)
    for key in ("path", "from"):
        pointer = operation.get(key)
        if isinstance(pointer, str) and "/-" in pointer:
            inserting = key == "path" and operation.get("op") in _INSERTING
            changed[key] = _positive_pointer(document, pointer, inserting)
    return changed


def _positive_pointer(document: Any, pointer: str, inserting: bool) -> str:
    tokens = pointer.split("/")
    if tokens[0] != "":
        return pointer
    node = document
    for i in range(1, len(tokens)):
        last = i == len(tokens) - 1
        if isinstance(node, list) and _NEGATIVE.fullmatch(tokens[i]):
            size = len(node) + (1 if inserting and last else 0)
            if int(tokens[i]) >= -size:
                tokens[i] = str(int(tokens[i]) + size)
        if last:
            break
        token = tokens[i].replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            break
    return "/".join(tokens)


def check_size(obj: Any, limit: int) -> None:
    """413 when a patched object's JSON is larger than a request body may be (`limit`)."""
    if len(_dumps(obj)) > limit:
        raise too_large(limit)


def strategic_merge(target: Any, patch: Any) -> Any:
    """`patch` merged into `target`, the lists merged by the merge keys of `target`'s kind."""
    if not isinstance(patch, dict):
        raise errors.bad_request("strategic merge patch: the patch must be a JSON object")
    original = target if isinstance(target, dict) else {}
    return _merge_map(original, patch, str(original.get("kind") or ""), ())


def _merge_map(original: JSON, patch: JSON, kind: str = "", path: tuple[str, ...] = ()) -> JSON:
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
            result[key] = _merge_map(current if isinstance(current, dict) else {}, value, kind, (*path, key))
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value, kind, (*path, key))
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(
    field_name: str, original: Any, patch: list[Any], kind: str = "", path: tuple[str, ...] = ()
) -> list[Any]:
    current = original if isinstance(original, list) else []
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")]
    if field_name in MERGED_PRIMITIVE_LISTS:
        return list(current) + [v for v in patch if v not in current]
    key = KIND_MERGE_KEYS[kind, path] if (kind, path) in KIND_MERGE_KEYS else MERGE_KEYS.get(field_name)
    if key is None or not all(isinstance(item, dict) for item in patch):
        return copy.deepcopy(patch)
    result = list(current)
    for item in patch:
        if key not in item:
            # mergepatch.ErrNoMergeKey's text; kube-apiserver answers it as a 500 (not a Status
            # error), here a 400: a client's mistake is never a 5xx (differences-from-upstream.md)
            raise errors.bad_request(f"map: {go_value(item)} does not contain declared merge key: {key}")
        index = next(
            (i for i, have in enumerate(result) if isinstance(have, dict) and have.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                result.pop(index)
            continue
        if index is None:
            result.append(_merge_map({}, item, kind, path))
        else:
            result[index] = _merge_map(result[index], item, kind, path)
    return result


def go_value(value: Any) -> str:
    """`%v` of a decoded JSON value as Go prints it: maps with sorted keys, slices space-separated,
    strings bare, float64 as `%g` (JSON integers stay int64)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)
