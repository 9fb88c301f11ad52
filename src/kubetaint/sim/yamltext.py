"""Writes block YAML of a JSON document streamed, in a fraction of PyYAML's time (PyYAML itself
writes it, whole, when `KUBETAINT_REFERENCE=1`).

The text is byte for byte what `yaml.dump(json.loads(json.dumps(doc)), Dumper=yaml.CSafeDumper,
sort_keys=False, allow_unicode=True)` writes (`reference_text`): block mappings and sequences
indented by two (a sequence inside a mapping at the mapping's indent), `{}` and `[]` for empty
containers, scalars as libyaml's emitter chooses and folds them at 80 columns.

`write_yaml` hands the text to a stream between the items of the document's top-level lists (a
timeline's records, the final nodes and pods), in chunks of about a megabyte: the text of a
5,000-node run is never held whole, and no second copy of the document is made.

How a string is written (plain, single-quoted, double-quoted) depends only on the string; where
it folds depends on the column it starts at and its indent. A string of letters, digits and the
usual punctuation of names, labels and messages is told plain or single-quoted here (by PyYAML's
own resolver patterns: `"1"`, `"true"` and timestamps are quoted); any other string is written
once by PyYAML into a list and its text remembered; a plain or single-quoted string long enough
to fold is folded as libyaml folds it. An item (or a top-level entry) holding something this
writer does not know (a double-quoted string that folds, a string over several lines, a key
that is not a simple key, a value not of a JSON type) is written by PyYAML itself, in its place:
the item alone inside the mappings above it, their key lines dropped.

Without libyaml (`yaml.CSafeDumper` missing) the text is PyYAML's own, whole.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from math import isnan
from typing import Any

import yaml

from kubetaint.sim.halves import TextSink, write_in_halves
from kubetaint.speed.memo import Memo
from kubetaint.speed.reference import reference_mode

#: libyaml's emitter (PyYAML's pure-Python emitter folds and quotes a few strings differently).
_DUMPER: Any = getattr(yaml, "CSafeDumper", None)
#: The column past which libyaml folds a long scalar at a space (PyYAML's default width).
WIDTH = 80
#: Text parts gathered before they are handed to the stream.
CHUNK_PARTS = 20_000
#: Strings whose written form is remembered before the memo starts afresh.
SCALARS = 1 << 16
#: Lists met in a mapping more than once whose text is remembered (and lists looked out for).
SHARED = 1 << 12
#: A simple key is at most this many bytes (UTF-8) long; a longer one is written `? key`.
SIMPLE_KEY_BYTES = 128


class _LeftToPyYamlError(Exception):
    """Something this writer leaves to PyYAML (the item holding it is written by PyYAML)."""


def reference_text(doc: Any) -> str:
    """PyYAML's own text of the document (through JSON first: the document holds only JSON
    types, whatever classes made it)."""
    dumper: Any = _DUMPER or yaml.SafeDumper
    return str(yaml.dump(json.loads(json.dumps(doc)), Dumper=dumper, sort_keys=False, allow_unicode=True))


def dumps_yaml(doc: Any) -> str:
    """`reference_text(doc)`, written by this module's writer."""
    parts: list[str] = []

    class _Collect:
        def write(self, text: str, /) -> None:
            parts.append(text)

    write_yaml(doc, _Collect())
    return "".join(parts)


def write_yaml(doc: Any, stream: TextSink) -> None:
    """Write `reference_text(doc)` to `stream`, handed over in chunks between the items of the
    document's top-level lists."""
    if reference_mode() or _DUMPER is None or type(doc) not in (dict, list) or not doc:
        stream.write(reference_text(doc))
        return
    writer = _Writer(stream)
    if type(doc) is dict:
        writer.entries(doc, [], 0)
    else:
        writer.items(doc, [], 0)
    writer.flush()


# scalars ------------------------------------------------------------------------------------------

#: Strings written plain unless a resolver pattern reads them as another type (then in single
#: quotes): a first character that is no indicator, then letters, digits, name punctuation, a
#: colon or a space each followed by another character.
_SIMPLE = re.compile(r"[A-Za-z0-9_/(](?:[A-Za-z0-9_./()=+@;~<>,!%*&-]|:(?=[^ ])| (?=[^ ]))*")
#: The usual `_SIMPLE` strings (names, uids), told at once: no colon, no space.
_NAME = re.compile(r"[A-Za-z0-9_/(][A-Za-z0-9_./()=+@;~<>,!%*&-]*")
_BREAKS = frozenset("\r\n\x85\u2028\u2029")


def _resolvers() -> dict[Any, list[tuple[str, re.Pattern[str]]]]:
    table: dict[Any, list[tuple[str, re.Pattern[str]]]] = getattr(_DUMPER, "yaml_implicit_resolvers", {})
    return table


def _resolver_pattern(first: str) -> re.Pattern[str] | None:
    """The resolver patterns PyYAML tries on a string starting with `first` (those of that
    character, then those of every string) as one pattern that matches where one of them matches,
    each with its own flags; None when there are none."""
    table = _resolvers()
    patterns = [pattern for _tag, pattern in [*(table.get(first) or []), *(table.get(None) or [])]]
    if not patterns:
        return None
    return re.compile("|".join(f"(?{'x' if p.flags & re.VERBOSE else ''}:{p.pattern})" for p in patterns))


class _Scalars:
    """The written form of strings on one line, remembered (SCALARS at most)."""

    __slots__ = ("_resolvers", "keys", "memo")

    def __init__(self) -> None:
        #: string -> its text (any string met, as a value or a key)
        self.memo: dict[str, str] = {}
        #: string -> its text, for the strings met as simple keys
        self.keys: dict[str, str] = {}
        #: first character -> the resolver patterns PyYAML tries on strings starting with it, as
        #: one pattern (None: there are none)
        self._resolvers: dict[str, re.Pattern[str] | None] = {}

    def text(self, value: str) -> str:
        """`value` as libyaml writes it unfolded (plain, single- or double-quoted); _LeftToPyYamlError
        for a string written over several lines."""
        memo = self.memo
        text = memo.get(value)
        if text is not None:
            return text
        if _NAME.fullmatch(value) or _SIMPLE.fullmatch(value):
            text = f"'{value}'" if self._resolves(value) else value
        else:
            text = self._by_pyyaml(value)
        if len(memo) >= SCALARS:
            memo.clear()
        memo[value] = text
        return text

    def _resolves(self, value: str) -> bool:
        """Whether a resolver pattern reads `value` as another type than a string."""
        first = value[0]
        if first in self._resolvers:
            pattern = self._resolvers[first]
        else:
            pattern = self._resolvers[first] = _resolver_pattern(first)
        return pattern is not None and pattern.match(value) is not None

    @staticmethod
    def _by_pyyaml(value: str) -> str:
        text = str(yaml.dump([value], Dumper=_DUMPER, allow_unicode=True, width=1 << 30))
        text = text[2:-1]
        if not _BREAKS.isdisjoint(text):
            raise _LeftToPyYamlError  # (a string over several lines: its later lines depend on its place)
        return text

    def key(self, key: Any) -> str:
        """A mapping key as a simple key; _LeftToPyYamlError for any other (a key over SIMPLE_KEY_BYTES or
        with a line break is written `? key`)."""
        keys = self.keys
        text = keys.get(key) if type(key) is str else None
        if text is not None:
            return text
        if type(key) is not str or not _BREAKS.isdisjoint(key):
            raise _LeftToPyYamlError
        if len(key) > SIMPLE_KEY_BYTES // 4 and len(key.encode("utf-8", "surrogatepass")) > SIMPLE_KEY_BYTES:
            raise _LeftToPyYamlError
        text = self.text(key)
        if len(keys) >= SCALARS:
            keys.clear()
        keys[key] = text
        return text

    def placed(self, value: str, column: int, indent: int) -> str:
        """`value` written from `column` (where its first character goes) and folded as libyaml
        folds it, later lines at `indent`."""
        text = self.text(value)
        if column + len(text) <= WIDTH + 1 or " " not in value:
            return text  # (no space past the width: nothing folds)
        first = text[0]
        if first == '"':
            raise _LeftToPyYamlError
        return _folded(value, column, indent, quoted=first == "'")


def _folded(value: str, column: int, indent: int, *, quoted: bool) -> str:
    """libyaml's plain (`quoted` False) or single-quoted text of a one-line string, folded: a
    space met past WIDTH, after a character that is no space and before one that is no space
    (single-quoted: neither the first nor the last character), becomes a line break and indent."""
    pieces: list[str] = []
    if quoted:
        pieces.append("'")
        column += 1
    spaces = False
    last = len(value) - 1
    break_at = "\n" + " " * indent
    for index, char in enumerate(value):
        if char == " ":
            if (
                not spaces
                and column > WIDTH
                and (not quoted or 0 < index < last)
                and index < last
                and value[index + 1] != " "
            ):
                pieces.append(break_at)
                column = indent
            else:
                pieces.append(" ")
                column += 1
            spaces = True
        else:
            if quoted and char == "'":
                pieces.append("''")
                column += 2
            else:
                pieces.append(char)
                column += 1
            spaces = False
    if quoted:
        pieces.append("'")
    return "".join(pieces)


def _other(value: Any) -> str:
    """An int, float, bool or null as PyYAML's SafeRepresenter writes it."""
    kind = type(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if isnan(value):
            return ".nan"
        if value == float("inf"):
            return ".inf"
        if value == float("-inf"):
            return "-.inf"
        text = float.__repr__(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        return text
    if value is None:
        return "null"
    raise _LeftToPyYamlError


# containers ---------------------------------------------------------------------------------------

#: Writes one item of a block sequence: (item, out, indent of its dash, text before the dash).
_ItemWriter = Callable[[Any, Callable[[str], None], int, str], None]


def _item_writer(scalars: _Scalars) -> _ItemWriter:
    """The writer of block sequence items (and, inside them, block mappings and sequences), its
    memos bound."""
    memo_get = scalars.memo.get
    keys_get = scalars.keys.get
    text_of = scalars.text
    key_of = scalars.key
    placed = scalars.placed
    width = WIDTH + 1
    seen: set[int] = set()
    shared: Memo[int, tuple[list[Any], int, str]] = Memo("sim.yamltext.shared_lists", limit=SHARED)
    shared_get = shared.get

    def mapping(value: dict[Any, Any], out: Callable[[str], None], indent: int, lead: str) -> None:
        """A non-empty mapping's lines, its keys at `indent`, the first after `lead`."""
        pad = " " * indent
        for key, item in value.items():
            written = keys_get(key) or key_of(key)
            kind = type(item)
            if kind is str:
                text = memo_get(item) or text_of(item)
                column = indent + len(written) + 2
                if column + len(text) > width and " " in item:
                    text = placed(item, column, indent + 2)
                out(f"{lead}{written}: {text}\n")
            elif kind is dict:
                if item:
                    out(f"{lead}{written}:\n")
                    mapping(item, out, indent + 2, pad + "  ")
                else:
                    out(f"{lead}{written}: {{}}\n")
            elif kind is list:
                if item:
                    out(f"{lead}{written}:\n")
                    found = shared_get(id(item))
                    if found is not None and found[0] is item and found[1] == indent:
                        out(found[2])
                    elif id(item) in seen:
                        lines: list[str] = []
                        sequence(item, lines.append, indent, pad)  # (in a mapping, at the mapping's indent)
                        text = "".join(lines)
                        shared.put(id(item), (item, indent, text))
                        out(text)
                    else:
                        if len(seen) >= SHARED:
                            seen.clear()
                        seen.add(id(item))
                        sequence(item, out, indent, pad)
                else:
                    out(f"{lead}{written}: []\n")
            else:
                out(f"{lead}{written}: {_other(item)}\n")
            lead = pad

    def sequence(value: list[Any], out: Callable[[str], None], indent: int, lead: str) -> None:
        """A non-empty sequence's lines, its dashes at `indent`, the first after `lead`."""
        pad = " " * indent
        for item in value:
            write_item(item, out, indent, lead)
            lead = pad

    def write_item(item: Any, out: Callable[[str], None], indent: int, lead: str) -> None:
        kind = type(item)
        if kind is dict:
            if item:
                out(f"{lead}- ")
                mapping(item, out, indent + 2, "")
            else:
                out(f"{lead}- {{}}\n")
        elif kind is list:
            if item:
                out(f"{lead}- ")
                sequence(item, out, indent + 2, "")
            else:
                out(f"{lead}- []\n")
        elif kind is str:
            text = memo_get(item) or text_of(item)
            if indent + 2 + len(text) > width and " " in item:
                text = placed(item, indent + 2, indent + 2)
            out(f"{lead}- {text}\n")
        else:
            out(f"{lead}- {_other(item)}\n")

    return write_item


class _Writer:
    """The document's top-level mappings entry by entry and its top-level lists item by item,
    each written here or, when it holds something left to PyYAML, by PyYAML in its place."""

    def __init__(self, stream: TextSink, scalars: _Scalars | None = None) -> None:
        self._stream = stream
        self._write = stream.write
        self._parts: list[str] = []
        self._scalars = _Scalars() if scalars is None else scalars
        self._item = _item_writer(self._scalars)

    def flush(self) -> None:
        self._write("".join(self._parts))
        self._parts.clear()

    def entries(self, mapping: dict[Any, Any], path: list[Any], indent: int) -> None:
        """The entries of a non-empty mapping reached from the root through mappings (`path`:
        the keys above it)."""
        parts = self._parts
        pad = " " * indent
        for key, value in mapping.items():
            mark = len(parts)
            try:
                kind = type(value)
                if kind is list and value:
                    parts.append(f"{pad}{self._scalars.key(key)}:\n")
                    self.items(value, [*path, key], indent)
                elif kind is dict and value:
                    parts.append(f"{pad}{self._scalars.key(key)}:\n")
                    self.entries(value, [*path, key], indent + 2)
                else:
                    self._entry(key, value, indent)
            except _LeftToPyYamlError:
                del parts[mark:]
                parts.append(_by_pyyaml(path, {key: value}))

    def _entry(self, key: Any, value: Any, indent: int) -> None:
        """A mapping entry whose value is a scalar or an empty container: the line of a
        one-item sequence holding the mapping, its dash dropped."""
        line: list[str] = []
        self._item({key: value}, line.append, indent - 2, "")
        self._parts.append(" " * indent + "".join(line)[2:])

    def items(self, sequence: list[Any], path: list[Any], indent: int) -> None:
        """The items of a non-empty list reached from the root through mappings, handed to the
        stream between items once CHUNK_PARTS parts have gathered; a long list's later part may
        be written by a second process (kubetaint.sim.halves)."""

        def write_items(start: int, stop: int, sink: TextSink | None) -> None:
            if sink is None:
                self._items(sequence, start, stop, path, indent)
                return
            own = _Writer(sink, self._scalars)
            own._items(sequence, start, stop, path, indent)
            own.flush()

        write_in_halves(len(sequence), write_items, self._stream, self.flush)

    def _items(self, sequence: list[Any], start: int, stop: int, path: list[Any], indent: int) -> None:
        """Items [start, stop) of `items`' list."""
        parts = self._parts
        out = parts.append
        write_item = self._item
        pad = " " * indent
        for index in range(start, stop):
            item = sequence[index]
            mark = len(parts)
            try:
                write_item(item, out, indent, pad)
            except _LeftToPyYamlError:
                del parts[mark:]
                out(_by_pyyaml(path, [item]))
            finally:
                if len(parts) >= CHUNK_PARTS:
                    self.flush()


def _by_pyyaml(path: list[Any], value: Any) -> str:
    """PyYAML's text of `value` (an entry as a one-key mapping, or an item as a one-item list)
    where it stands: inside the mappings of `path`, whose key lines are dropped."""
    for key in reversed(path):
        value = {key: value}
    text = reference_text(value)
    if not path:
        return text
    return text.split("\n", len(path))[len(path)]
