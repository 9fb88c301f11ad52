"""Field paths and sets of them, as sigs.k8s.io/structured-merge-diff's `fieldpath` package
keeps them: a path element selects a field (`f:`), an associative-list item by its key fields
(`k:`), a set item by its value (`v:`) or an item by index (`i:`); a `FieldSet` is a trie of
members (paths owned as a whole) and children. `to_fields_v1`/`from_fields_v1` are the
`FieldsV1` encoding of managedFields entries (fieldpath/serialize.go), in upstream's order
(PathElement.Compare: fields, then keys, then values, then indices).

Path elements are tuples whose natural order is upstream's `Compare`:
`(0, name)`, `(1, ((key, value), ...))` with keys sorted, `(2, value)`, `(3, index)`; values
are `hashable()` forms ordered as `value.Compare` orders them (numbers, strings, booleans, lists,
maps, null).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Hashable = tuple[Any, ...]
PathElement = tuple[Any, ...]
Path = tuple[PathElement, ...]

FIELD, KEY, VALUE, INDEX = 0, 1, 2, 3
_NUMBER, _STRING, _BOOL, _LIST, _MAP, _NULL = 0, 1, 2, 3, 4, 5


class FieldsV1Error(ValueError):
    """A FieldsV1 document that does not decode."""


def hashable(value: Any) -> Hashable:
    """A JSON value as a hashable tuple ordered as structured-merge-diff's value.Compare."""
    if value is None:
        return (_NULL,)
    if isinstance(value, bool):
        return (_BOOL, value)
    if isinstance(value, int | float):
        return (_NUMBER, value)
    if isinstance(value, str):
        return (_STRING, value)
    if isinstance(value, list):
        return (_LIST, tuple(hashable(v) for v in value))
    if isinstance(value, dict):
        return (_MAP, tuple(sorted((str(k), hashable(v)) for k, v in value.items())))
    return (_STRING, str(value))


def unhashable(value: Hashable) -> Any:
    """The JSON value of a `hashable()` form."""
    rank = value[0]
    if rank == _NULL:
        return None
    if rank == _LIST:
        return [unhashable(v) for v in value[1]]
    if rank == _MAP:
        return {k: unhashable(v) for k, v in value[1]}
    return value[1]


def field(name: str) -> PathElement:
    return (FIELD, name)


def key(fields: dict[str, Any]) -> PathElement:
    return (KEY, tuple(sorted((k, hashable(v)) for k, v in fields.items())))


def value(item: Any) -> PathElement:
    return (VALUE, hashable(item))


def index(i: int) -> PathElement:
    return (INDEX, i)


# -- text forms --------------------------------------------------------------------------------


def _go_json(value: Any) -> str:
    """JSON as Go's encoder writes it (compact, <, > and & escaped, UTF-8 kept)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _go_string(value: Hashable) -> str:
    """value.ToString: strings %q-quoted, numbers and booleans as Go prints them."""
    rank = value[0]
    if rank == _NULL:
        return "null"
    if rank == _STRING:
        quoted: str = _go_json(value[1])
        return quoted.replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u0026", "&")
    if rank == _BOOL:
        return "true" if value[1] else "false"
    if rank == _NUMBER:
        number = value[1]
        if isinstance(number, float) and number.is_integer():
            return str(int(number))
        return str(number)
    if rank == _LIST:
        return "[" + ",".join(_go_string(v) for v in value[1]) + "]"
    return "".join(f"{k}={_go_string(v)}" for k, v in value[1])


def element_fields_v1(pe: PathElement) -> str:
    """A path element as a FieldsV1 key (`f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`)."""
    kind = pe[0]
    if kind == FIELD:
        return "f:" + str(pe[1])
    if kind == KEY:
        return "k:" + _go_json({k: unhashable(v) for k, v in pe[1]})
    if kind == VALUE:
        return "v:" + _go_json(unhashable(pe[1]))
    return f"i:{pe[1]}"


def element_string(pe: PathElement) -> str:
    """PathElement.String: `.name`, `[name="a",proto="TCP"]`, `[="x"]`, `[0]`."""
    kind = pe[0]
    if kind == FIELD:
        return "." + str(pe[1])
    if kind == KEY:
        return "[" + ",".join(f"{k}={_go_string(v)}" for k, v in pe[1]) + "]"
    if kind == VALUE:
        return f"[={_go_string(pe[1])}]"
    return f"[{pe[1]}]"


def path_string(path: Path) -> str:
    """Path.String: the elements' strings joined."""
    return "".join(element_string(pe) for pe in path)


def parse_element(text: str) -> PathElement | None:
    """DeserializePathElement; None for an unknown prefix (ignored, as upstream)."""
    prefix, sep, rest = text.partition(":")
    if not sep:
        if text == ".":
            raise FieldsV1Error("'.' is not a path element")
        return None
    try:
        if prefix == "f":
            return (FIELD, rest)
        if prefix == "k":
            fields = json.loads(rest)
            if not isinstance(fields, dict):
                raise FieldsV1Error(f"expected key value pairs: {text}")
            return key(fields)
        if prefix == "v":
            return (VALUE, hashable(json.loads(rest)))
        if prefix == "i":
            return (INDEX, int(rest))
    except (json.JSONDecodeError, ValueError) as exc:
        raise FieldsV1Error(f"invalid path element {text!r}: {exc}") from None
    return None


# -- sets --------------------------------------------------------------------------------------


class FieldSet:
    """fieldpath.Set: `members` are owned as a whole, `children` hold owned descendants."""

    __slots__ = ("children", "encoded", "members")

    def __init__(
        self, members: set[PathElement] | None = None, children: dict[PathElement, FieldSet] | None = None
    ) -> None:
        self.members: set[PathElement] = members if members is not None else set()
        self.children: dict[PathElement, FieldSet] = children if children is not None else {}
        #: the FieldsV1 document this set was decoded from (reused when it is encoded again)
        self.encoded: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"FieldSet({sorted(path_string(p) for p in self.paths())})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.members == other.members and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        out = cls()
        for path in paths:
            out.insert(path)
        return out

    def empty(self) -> bool:
        return not self.members and not self.children

    def insert(self, path: Path) -> None:
        """Add one path (the empty path, the whole object, is never tracked)."""
        if not path:
            return
        self.encoded = None
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
        node.members.add(path[-1])

    def has(self, path: Path) -> bool:
        node: FieldSet | None = self
        for pe in path[:-1]:
            assert node is not None
            node = node.children.get(pe)
            if node is None:
                return False
        return node is not None and bool(path) and path[-1] in node.members

    def copy(self) -> FieldSet:
        return FieldSet(set(self.members), {pe: c.copy() for pe, c in self.children.items()})

    def union(self, other: FieldSet) -> FieldSet:
        if other.empty():
            return self
        if self.empty():
            return other
        children = dict(self.children)
        for pe, child in other.children.items():
            mine = children.get(pe)
            children[pe] = child if mine is None else mine.union(child)
        return FieldSet(self.members | other.members, children)

    def intersection(self, other: FieldSet) -> FieldSet:
        children = {}
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            if theirs is not None:
                both = child.intersection(theirs)
                if not both.empty():
                    children[pe] = both
        return FieldSet(self.members & other.members, children)

    def difference(self, other: FieldSet) -> FieldSet:
        if other.empty() or self.empty():
            return self
        children = {}
        for pe, child in self.children.items():
            theirs = other.children.get(pe)
            rest = child if theirs is None else child.difference(theirs)
            if not rest.empty():
                children[pe] = rest
        return FieldSet(self.members - other.members, children)

    def paths(self) -> Iterator[Path]:
        """Every member path, in Set.Iterate's order (members, then children, each sorted)."""
        yield from self._paths(())

    def _paths(self, prefix: Path) -> Iterator[Path]:
        for pe in sorted(self.members):
            yield (*prefix, pe)
        for pe in sorted(self.children):
            yield from self.children[pe]._paths((*prefix, pe))

    # -- FieldsV1 ------------------------------------------------------------------------------

    def to_fields_v1(self) -> dict[str, Any]:
        """The FieldsV1 JSON object of this set (treat as read-only)."""
        if self.encoded is None:
            self.encoded = self._emit(include_self=False)
        return self.encoded

    def _emit(self, include_self: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if include_self and (self.members or self.children):
            out["."] = {}
        for pe in sorted(self.members | self.children.keys()):
            child = self.children.get(pe)
            if child is None:
                out[element_fields_v1(pe)] = {}
            else:
                out[element_fields_v1(pe)] = child._emit(include_self=pe in self.members)
        return out


def from_fields_v1(document: Any, *, written_here: bool = False) -> FieldSet:
    """Set.FromJSON of a FieldsV1 object (FieldsV1Error when it is not one). A document
    `written_here` (by `to_fields_v1`, as stored managedFields are) is known to be in upstream's
    form and is kept for re-encoding without checking."""
    if not isinstance(document, dict):
        raise FieldsV1Error("expected an object")
    result, _, canonical = _read(document, check=not written_here)
    if canonical:  # encoding the set gives the document back: keep it
        result.encoded = document
    return result


def _read(document: dict[str, Any], check: bool = True) -> tuple[FieldSet, bool, bool]:
    """The set, whether the document marks its parent a member, and (when `check`) whether it
    is in the canonical form `to_fields_v1` writes."""
    out = FieldSet()
    is_member = False
    canonical = True
    previous: PathElement | None = None
    for position, (text, sub) in enumerate(document.items()):
        if text == ".":
            is_member = True
            canonical = canonical and (not check or (position == 0 and len(document) > 1 and sub == {}))
            continue
        pe = parse_element(text)
        if pe is None:
            canonical = False
            continue
        if not isinstance(sub, dict):
            raise FieldsV1Error(f"expected an object at {text!r}")
        if check:
            if previous is not None and not previous < pe:
                canonical = False
            previous = pe
        child, member, child_canonical = _read(sub, check)
        canonical = canonical and child_canonical and (not check or element_fields_v1(pe) == text)
        if member:
            out.members.add(pe)
        if not child.empty():
            out.children[pe] = child
    if not document:
        is_member = True
    return out, is_member, canonical
