"""The structural schema server-side apply walks objects with, built from the served kinds'
OpenAPI schemas as kube-openapi's schemaconv builds structured-merge-diff's schema:

- a struct (`properties`) is granular: each declared field is tracked on its own, unless it
  carries `x-kubernetes-map-type: atomic`;
- a map (`additionalProperties`) is granular per key unless `x-kubernetes-map-type: atomic`;
- a list is `atomic` (replaced and owned as a whole) unless `x-kubernetes-list-type` says `map`
  (items keyed by `x-kubernetes-list-map-keys`) or `set`, or, without a list type, its
  `x-kubernetes-patch-strategy` is `merge` (keyed by `x-kubernetes-patch-merge-key`, a set when
  it has none);
- a kind without a shipped schema (custom resources, unknown fields) is *deduced* from the value:
  maps granular, lists atomic (structured-merge-diff's DeducedParseableType).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.openapi_schemas import REF, schema_of, schemas
from kubetaint.speed.memo import Memo

JSON = dict[str, Any]

SCALAR, STRUCT, MAP, LIST, DEDUCED = "scalar", "struct", "map", "list", "deduced"

#: Key fields with a `+default` in upstream's types (the shipped schemas do not carry `default`):
#: an item that omits one is keyed by the default, as structured-merge-diff does.
KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}


@dataclass(eq=False, slots=True)
class Atom:
    """One type: its kind, whether it is atomic, its declared fields (structs), its element
    type (maps and lists) and, for associative lists, the key fields (None for a set)."""

    kind: str
    atomic: bool = False
    fields: dict[str, Atom] = field(default_factory=dict)
    element: Atom | None = None
    keys: tuple[str, ...] | None = None

    def child(self, name: str) -> Atom:
        """The type of a map's or struct's entry `name` (deduced when undeclared)."""
        declared = self.fields.get(name)
        if declared is not None:
            return declared
        return self.element or DEDUCED_ATOM

    def declares(self, name: str) -> bool:
        return name in self.fields


DEDUCED_ATOM = Atom(DEDUCED)
SCALAR_ATOM = Atom(SCALAR)


class _Builder:
    """Builds Atoms from OpenAPI schemas, once per named schema (recursive types share one)."""

    def __init__(self) -> None:
        self.named: dict[tuple[str, str | None, str | None], Atom] = {}

    def build(self, schema: JSON, map_type: str | None = None, list_type: str | None = None) -> Atom:
        ref = _ref_of(schema)
        if ref is not None:
            map_type = schema.get("x-kubernetes-map-type", map_type)
            list_type = schema.get("x-kubernetes-list-type", list_type)
            cache_key = (ref, map_type, list_type)
            known = self.named.get(cache_key)
            if known is not None:
                return known
            target = schemas().get(ref)
            if target is None:
                return DEDUCED_ATOM
            atom = Atom(DEDUCED)
            self.named[cache_key] = atom  # placed before the walk: recursive schemas close here
            built = self._build_plain(target, map_type, list_type)
            atom.kind, atom.atomic, atom.fields = built.kind, built.atomic, built.fields
            atom.element, atom.keys = built.element, built.keys
            return atom
        return self._build_plain(schema, map_type, list_type)

    def _build_plain(self, schema: JSON, map_type: str | None, list_type: str | None) -> Atom:
        if map_type is None:
            map_type = schema.get("x-kubernetes-map-type")
        if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
            return SCALAR_ATOM
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return DEDUCED_ATOM
        kind = schema.get("type")
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            atom = Atom(STRUCT, atomic=map_type == "atomic")
            for name, sub in properties.items():
                if isinstance(sub, dict):
                    atom.fields[name] = self.build(sub)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                atom.element = self.build(extra)
            return atom
        if kind == "object":
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return Atom(MAP, atomic=map_type == "atomic", element=self.build(extra))
            return Atom(MAP, atomic=map_type == "atomic", element=DEDUCED_ATOM) if map_type else DEDUCED_ATOM
        if kind == "array":
            items = schema.get("items")
            element = self.build(items) if isinstance(items, dict) else DEDUCED_ATOM
            return _list_atom(schema, element, list_type)
        if kind in ("string", "integer", "number", "boolean"):
            return SCALAR_ATOM
        return DEDUCED_ATOM


def _ref_of(schema: JSON) -> str | None:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF):
        return ref[len(REF) :]
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        inner = all_of[0].get("$ref")
        if isinstance(inner, str) and inner.startswith(REF):
            return inner[len(REF) :]
    return None


def _list_atom(schema: JSON, element: Atom, list_type: str | None) -> Atom:
    """schemaconv's getListElementRelationship."""
    if list_type is None:
        list_type = schema.get("x-kubernetes-list-type")
    if list_type == "atomic":
        return Atom(LIST, atomic=True, element=element)
    if list_type == "set":
        return Atom(LIST, element=element, keys=None)
    if list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        return Atom(LIST, element=element, keys=tuple(str(k) for k in keys))
    strategy = str(schema.get("x-kubernetes-patch-strategy") or "")
    if strategy == "merge" or strategy.startswith("merge,"):
        merge_key = schema.get("x-kubernetes-patch-merge-key")
        return Atom(LIST, element=element, keys=(str(merge_key),) if merge_key else None)
    return Atom(LIST, atomic=True, element=element)


_BUILDER = _Builder()


_ATOMS: Memo[tuple[str, str], Atom] = Memo("core.fieldmanager.schema.atoms", limit=1024)


def atom_for(api_version: str, kind: str) -> Atom:
    """The type of a kind's objects (DEDUCED_ATOM when no schema ships for it)."""
    atom = _ATOMS.get((api_version, kind))
    if atom is None:
        name = schema_of(api_version, kind)
        atom = DEDUCED_ATOM if name is None else _BUILDER.build({"$ref": REF + name})
        _ATOMS.put((api_version, kind), atom)
    return atom


_OBJECT_META = {"$ref": REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}


def custom_atom(schema: JSON) -> Atom:
    """The type of a custom resource from its CRD's structural schema (apiextensions' structural
    schema as structured-merge-diff reads it: apiVersion, kind and ObjectMeta added at the root),
    remembered by the schema's content."""
    text = json.dumps(schema, sort_keys=True)
    atom = _CUSTOM_ATOMS.get(text)
    if atom is None:
        atom = _CUSTOM_ATOMS.put(text, _custom_atom(schema))
    return atom


_CUSTOM_ATOMS: Memo[str, Atom] = Memo("core.fieldmanager.schema.custom_atoms", limit=256)


def _custom_atom(schema: JSON) -> Atom:
    props = dict(schema.get("properties") or {}) if isinstance(schema.get("properties"), dict) else {}
    props.update({"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": _OBJECT_META})
    return _BUILDER.build({**schema, "type": "object", "properties": props})


def empty_object(api_version: str, kind: str) -> JSON:
    """What `runtime.ObjectCreater.New` gives for a kind, as unstructured: an empty object whose
    spec and status (non-pointer structs) are present, each with its required fields (the Go
    fields without omitempty) and its own spec and status present and empty, recursively.
    A fresh copy the caller may change."""
    fresh: JSON = _copy(_empty_object(api_version, kind))
    return fresh


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


_EMPTY_OBJECTS: Memo[tuple[str, str], JSON] = Memo("core.fieldmanager.schema.empty_objects", limit=1024)


def _empty_object(api_version: str, kind: str) -> JSON:
    """`empty_object`'s answer, shared (the caller copies it)."""
    found = _EMPTY_OBJECTS.get((api_version, kind))
    if found is None:
        found = _EMPTY_OBJECTS.put((api_version, kind), _make_empty_object(api_version, kind))
    return found


def _make_empty_object(api_version: str, kind: str) -> JSON:
    out: JSON = {"apiVersion": api_version, "kind": kind, "metadata": {}}
    name = schema_of(api_version, kind)
    if name is None:
        return out
    properties = schemas()[name].get("properties") or {}
    for field_name in ("spec", "status"):
        ref = _ref_of(properties.get(field_name) or {})
        if ref is not None and (schemas().get(ref) or {}).get("properties"):
            out[field_name] = _zero(ref, 4)
    return out


def _zero(name: str, depth: int) -> JSON:
    schema = schemas().get(name) or {}
    properties = schema.get("properties") or {}
    out: JSON = {}
    if "metadata" in properties:
        out["metadata"] = {}
    present = [*(schema.get("required") or []), *(n for n in ("spec", "status") if n in properties)]
    for required in present:
        ref = _ref_of(properties.get(required) or {})
        if depth > 0 and ref is not None and (schemas().get(ref) or {}).get("properties"):
            out[required] = _zero(ref, depth - 1)
        else:
            out[required] = None
    return out
