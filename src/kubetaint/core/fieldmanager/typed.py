"""Typed walks of JSON objects (structured-merge-diff's `typed` package): the set of fields a
value sets (ToFieldSet), the comparison of two values (Compare: added, modified, removed), the
merge of an applied configuration into a live object (Merge, the applied side winning) and the
removal of a set of fields (RemoveItems). Lists of duplicate keys are compared as atomic, as
structured-merge-diff does when it allows duplicates.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from kubetaint.core.fieldmanager import fieldpath as fp
from kubetaint.core.fieldmanager.fieldpath import FieldSet, Path, PathElement
from kubetaint.core.fieldmanager.schema import DEDUCED, KEY_DEFAULTS, LIST, MAP, SCALAR, STRUCT, Atom

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


class TypedError(ValueError):
    """A value that does not fit its schema (a list item without its key, a duplicate key)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{fp.path_string(path)}: {message}" if path else message)


@dataclass(slots=True)
class Comparison:
    """typed.Comparison: the fields `rhs` adds, modifies and removes relative to `lhs`."""

    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def changed(self) -> FieldSet:
        """Modified ∪ Added."""
        return self.modified.union(self.added)


def _shape(atom: Atom, value: Any) -> str:
    """The walk a value gets: SCALAR (a leaf), MAP (granular entries) or LIST (keyed items)."""
    kind = atom.kind
    if kind == DEDUCED:
        return MAP if isinstance(value, dict) else SCALAR
    if kind in (STRUCT, MAP):
        return SCALAR if atom.atomic else MAP
    if kind == LIST:
        return SCALAR if atom.atomic else LIST
    return SCALAR


def item_element(atom: Atom, item: Any, path: Path, at: int) -> PathElement:
    """listItemToPathElement: the key of an associative list's item, the value of a set's."""
    keys = atom.keys
    if keys:
        if not isinstance(item, dict):
            raise TypedError(
                path, f"element {at}: associative list with keys has an element that is not a map"
            )
        fields: dict[str, Any] = {}
        for name in keys:
            if item.get(name) is not None:
                fields[name] = item[name]
            elif name in KEY_DEFAULTS:
                fields[name] = KEY_DEFAULTS[name]
            else:
                raise TypedError(
                    path,
                    f"element {at}: associative list with keys has an element that omits key field "
                    f'"{name}" (and doesn\'t have default value)',
                )
        return fp.key(fields)
    if isinstance(item, dict | list):
        raise TypedError(
            path, f"element {at}: associative list without keys has an element that's a map type"
        )
    return fp.value(item)


def _index_items(atom: Atom, items: list[Any], path: Path) -> dict[PathElement, Any] | None:
    """The items by path element; None when two items share one (duplicates)."""
    out: dict[PathElement, Any] = {}
    for at, item in enumerate(items):
        pe = item_element(atom, item, path, at)
        if pe in out:
            return None
        out[pe] = item
    return out


# -- ToFieldSet --------------------------------------------------------------------------------


def to_field_set(value: Any, atom: Atom) -> FieldSet:
    """typed.ToFieldSet: every field `value` sets (TypedError when it does not fit)."""
    out = FieldSet()
    _fill(out, value, atom, ())
    return out


def _fill(node: FieldSet, value: Any, atom: Atom, path: Path) -> bool:
    """Add the paths under `value` to `node`; True when `value` is a leaf its parent owns."""
    shape = _shape(atom, value)
    if shape == SCALAR:
        return True
    if shape == MAP:
        if not isinstance(value, dict):
            return value is not None
        for name, sub in value.items():
            pe = fp.field(name)
            child = FieldSet()
            leaf = _fill(child, sub, atom.child(name), (*path, pe))
            if leaf or sub is None or sub == {} or not atom.declares(name):
                node.members.add(pe)
            if not child.empty():
                node.children[pe] = child
        return False
    if not isinstance(value, list):
        return value is not None
    seen: set[PathElement] = set()
    element = atom.element or Atom(DEDUCED)
    for at, item in enumerate(value):
        pe = item_element(atom, item, path, at)
        if pe in seen:
            raise TypedError(path, f"duplicate entries for key {fp.element_string(pe)}")
        seen.add(pe)
        child = FieldSet()
        _fill(child, item, element, (*path, pe))
        node.members.add(pe)
        if not child.empty():
            node.children[pe] = child
    return False


# -- Compare -----------------------------------------------------------------------------------


def compare(lhs: Any, rhs: Any, atom: Atom) -> Comparison:
    """typed.Compare of the live `lhs` and the new `rhs`."""
    out = Comparison(FieldSet(), FieldSet(), FieldSet())
    _compare(lhs, rhs, atom, (), out)
    return out


def _empty(value: Any, kind: type) -> bool:
    return value is MISSING or value is None or (isinstance(value, kind) and not value)


def _compare(lhs: Any, rhs: Any, atom: Atom, path: Path, out: Comparison) -> None:
    if lhs is not MISSING and rhs is not MISSING and lhs == rhs:
        return
    shape = _shape(atom, rhs if rhs is not MISSING else lhs)
    if shape == MAP and _shape(atom, lhs if lhs is not MISSING else rhs) != MAP:
        shape = SCALAR
    leaf = shape == SCALAR
    if shape == MAP:
        lmap, rmap = _as(lhs, dict), _as(rhs, dict)
        if lmap is None or rmap is None or (_empty(lhs, dict) and _empty(rhs, dict)):
            leaf = True
        else:
            for name, sub in rmap.items():
                _compare(lmap.get(name, MISSING), sub, atom.child(name), (*path, fp.field(name)), out)
            for name, sub in lmap.items():
                if name not in rmap:
                    _compare(sub, MISSING, atom.child(name), (*path, fp.field(name)), out)
    elif shape == LIST:
        llist, rlist = _as(lhs, list), _as(rhs, list)
        if llist is None or rlist is None or (_empty(lhs, list) and _empty(rhs, list)):
            leaf = True
        else:
            litems, ritems = _index_items(atom, llist, path), _index_items(atom, rlist, path)
            if litems is None or ritems is None:
                leaf = True
            else:
                element = atom.element or Atom(DEDUCED)
                for pe, sub in ritems.items():
                    _compare(litems.get(pe, MISSING), sub, element, (*path, pe), out)
                for pe, sub in litems.items():
                    if pe not in ritems:
                        _compare(sub, MISSING, element, (*path, pe), out)
    if leaf:
        if lhs is MISSING:
            out.added.insert(path)
        elif rhs is MISSING:
            out.removed.insert(path)
        elif lhs != rhs:
            out.modified.insert(path)
        return
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)


def _as(value: Any, kind: type) -> Any:
    """`value` when it is of `kind`, an empty one when missing or null, None otherwise."""
    if value is MISSING or value is None:
        return kind()
    return value if isinstance(value, kind) else None


# -- Merge -------------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, atom: Atom, path: Path = ()) -> Any:
    """typed.Merge: `rhs` (the applied configuration) merged into `lhs` (the live object)."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        lhs = None
    shape = _shape(atom, rhs if rhs is not None else lhs)
    if shape == MAP:
        lmap, rmap = _as(lhs, dict), _as(rhs, dict)
        if lmap is None or rmap is None or (not lmap and not rmap):
            return copy.deepcopy(rhs)
        out = dict(lmap)
        for name, sub in rmap.items():
            out[name] = merge(lmap.get(name, MISSING), sub, atom.child(name), (*path, fp.field(name)))
        return out
    if shape == LIST:
        llist, rlist = _as(lhs, list), _as(rhs, list)
        if llist is None or rlist is None or (not llist and not rlist):
            return copy.deepcopy(rhs)
        return _merge_list(atom, llist, rlist, path)
    return copy.deepcopy(rhs)


def _merge_list(atom: Atom, lhs: list[Any], rhs: list[Any], path: Path) -> list[Any]:
    """mergingWalker.visitListItems: items of both, in the applied order where they are shared,
    live-only items kept where they stand."""
    element = atom.element or Atom(DEDUCED)
    rhs_pes = [item_element(atom, item, path, at) for at, item in enumerate(rhs)]
    lhs_pes = [item_element(atom, item, path, at) for at, item in enumerate(lhs)]
    observed_rhs = dict(zip(rhs_pes, rhs, strict=True))
    if len(observed_rhs) != len(rhs_pes):
        raise TypedError(path, "duplicate entries in the applied list")
    observed_lhs = dict(zip(lhs_pes, lhs, strict=True))
    shared = [pe for pe in rhs_pes if pe in observed_lhs]
    next_shared = shared.pop(0) if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []
    li, ri = 0, 0
    while li < len(lhs_pes) or ri < len(rhs_pes):
        if li < len(lhs_pes) and ri < len(rhs_pes):
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                out.append(merge(observed_lhs.get(pe, MISSING), observed_rhs[pe], element, (*path, pe)))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(lhs_pes):
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < len(rhs_pes):
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            out.append(merge(observed_lhs.get(pe, MISSING), observed_rhs[pe], element, (*path, pe)))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


# -- RemoveItems -------------------------------------------------------------------------------


def remove_items(value: Any, remove: FieldSet, atom: Atom, path: Path = ()) -> Any:
    """typed.RemoveItems: `value` without the fields of `remove` (a map or list left empty
    becomes null, as upstream's walker leaves it)."""
    shape = _shape(atom, value)
    if shape == SCALAR:
        if atom.kind in (STRUCT, MAP, LIST) and isinstance(value, dict | list):
            return None  # an atomic map or list entered by a removal
        return value
    if shape == MAP:
        if not isinstance(value, dict) or not value:
            return None
        out: dict[str, Any] = {}
        for name, sub in value.items():
            pe = fp.field(name)
            if pe in remove.members:
                continue
            below = remove.children.get(pe)
            kept = sub
            if below is not None and not below.empty():
                kept = remove_items(sub, below, atom.child(name), (*path, pe))
            out[name] = kept
        return out or None
    if not isinstance(value, list) or not value:
        return None
    element = atom.element or Atom(DEDUCED)
    items: list[Any] = []
    for at, item in enumerate(value):
        pe = item_element(atom, item, path, at)
        if pe in remove.members:
            continue
        below = remove.children.get(pe)
        items.append(
            item if below is None or below.empty() else remove_items(item, below, element, (*path, pe))
        )
    return items or None


def ensure_named_fields_are_members(fields: FieldSet, atom: Atom) -> FieldSet:
    """Set.EnsureNamedFieldsAreMembers: a child that is a struct's declared field is also a member."""
    members = set(fields.members)
    children: dict[PathElement, FieldSet] = {}
    for pe, child in fields.children.items():
        if pe[0] == fp.FIELD:
            name = pe[1]
            if atom.kind == STRUCT and atom.declares(name):
                members.add(pe)
            sub = atom.child(name) if atom.kind in (STRUCT, MAP, DEDUCED) else Atom(DEDUCED)
        else:
            sub = atom.element or Atom(DEDUCED)
        children[pe] = ensure_named_fields_are_members(child, sub)
    return FieldSet(members, children)


def drop_nulls(value: Any) -> Any:
    """The object as its Go type decodes it: null fields (left by a removal) are unset."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value
