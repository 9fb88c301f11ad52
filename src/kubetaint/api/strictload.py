"""Reading input files within bounds, and parsing YAML/JSON text the way kube-apiserver's strict
decoder sees it: duplicate keys recorded (not silently last-wins), YAML aliases bounded, numbers
and nesting bounded, every refusal one `InputError` line naming the file.

Bounds, all checked before any work on the content:
- size: at most MAX_INPUT_BYTES per file (standard input included);
- text: UTF-8 (a byte-order mark is skipped);
- YAML aliases: goyaml's "excessive aliasing" rule (a document whose aliases expand it more than
  its own size allows is refused, as kube-apiserver refuses a "billion laughs" body), and an alias
  that contains itself;
- integers: at most 4,300 digits (Python's own conversion limit; Go reads longer ones as floats
  and refuses them for integer fields);
- nesting: JSON deeper than the parser's recursion limit, YAML deeper than libyaml's;
- YAML nodes: at most MAX_YAML_NODES per file, counted from the parser's events before anything
  is composed (a node costs a few hundred bytes while a document is composed, JSON's values far
  less, so a file too large for YAML can still be given as JSON).
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubetaint.api.json_items import loads_object

try:  # the C loader is several times faster on large files
    _Base: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader

#: Largest file (or standard input) read, in bytes.
MAX_INPUT_BYTES = 512 * 1024 * 1024
#: goyaml's alias ratio bounds (yaml.v2 decode.go allowedAliasRatio).
_ALIAS_RATIO_RANGE_LOW = 400_000
_ALIAS_RATIO_RANGE_HIGH = 4_000_000
_INT_DIGITS = 4300
#: Most YAML nodes (scalars, aliases, mappings, sequences) a file may hold: about 1.3 GB while
#: composed. A manifest takes about one node per 7 bytes, so files under YAML_COUNT_FROM bytes
#: (at most one node per 2 bytes) are not counted.
MAX_YAML_NODES = 3_000_000
YAML_COUNT_FROM = 1024 * 1024
_NODE_EVENTS = (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)


class InputError(ValueError):
    """Input that cannot be read or parsed; `str()` is one line naming the file (and line)."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source, self.problem, self.line = source, problem, line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


@dataclass
class YAMLDuplicate:
    """A key given twice in one YAML mapping (goyaml's `line N: key "k" already set in map`)."""

    line: int
    key: str

    def message(self) -> str:
        return f"line {self.line}: key {json.dumps(self.key)} already set in map"


@dataclass
class Parsed:
    """One document of a file: its data and the duplicate keys its text gave."""

    data: Any
    #: JSON: id(dict) -> keys given more than once in that object (the dicts are `data`'s own).
    json_duplicates: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: YAML: each repeated key with its line.
    yaml_duplicates: list[YAMLDuplicate] = field(default_factory=list)
    #: 1-based line where the document starts.
    line: int = 1
    node: yaml.Node | None = None
    #: 1-based number of the document in its stream (empty documents counted)
    document: int = 1
    #: JSON: the 1-based line of each element of the top-level object's `items`
    item_lines: tuple[int, ...] = ()

    @property
    def is_yaml(self) -> bool:
        return self.node is not None


def shown_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def read_input(path: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The text of a file (`-`: standard input), at most `limit` bytes of UTF-8."""
    name = shown_name(path)
    data: bytes
    try:
        if path == "-":
            stream = sys.stdin
            if stream is None:  # the program was started with its standard input closed
                raise InputError(name, "standard input is closed")
            if isinstance(stream, io.TextIOWrapper):
                data = stream.buffer.read(limit + 1)
            else:  # a text stream put in place of standard input (tests, embedding programs)
                data = stream.read(limit + 1).encode("utf-8", "surrogateescape")
        else:
            if os.path.isdir(path):
                raise InputError(name, "is a directory")
            size = os.stat(path).st_size
            if size > limit:
                raise InputError(name, f"file of {size} bytes is over the {_mib(limit)} limit")
            with open(path, "rb") as handle:
                data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(name, str(exc.strerror or exc)) from None
    if len(data) > limit:
        raise InputError(name, f"input is over the {_mib(limit)} limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problem = f"not UTF-8 text: invalid byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise InputError(name, problem, line) from None
    return text.removeprefix("\ufeff")


def _mib(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB"


def looks_like_json(text: str, name: str = "") -> bool:
    """JSON is read by the JSON parser (as kubectl does for a `{` document or a .json file)."""
    return name.endswith(".json") or text.lstrip().startswith("{")


# JSON ------------------------------------------------------------------------------------------


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"invalid constant {constant}")


def parse_json(text: str, name: str, *, item_lines: bool = False) -> Parsed:
    """One JSON document; duplicate keys recorded per object, and with `item_lines` the lines
    of a List's items (their keys are then not shared between items: a manifest file's List, not a
    scenario's large text)."""
    duplicates: dict[int, tuple[str, ...]] = {}

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            twice = [key for key, _ in pairs if key in seen or seen.add(key)]  # type: ignore[func-returns-value]
            duplicates[id(obj)] = tuple(dict.fromkeys(twice))
        return obj

    decoder = json.JSONDecoder(object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    try:
        walked = loads_object(text, decoder, pairs_hook) if item_lines else None
        if walked is not None:
            return Parsed(walked[0], json_duplicates=duplicates, item_lines=walked[1])
        duplicates.clear()
        data = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(name, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise InputError(name, "invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InputError(name, f"invalid JSON: {_number_problem(exc)}") from None
    return Parsed(data, json_duplicates=duplicates)


def _number_problem(exc: ValueError) -> str:
    text = str(exc)
    if "digits" in text:
        return f"a number has more than {_INT_DIGITS} digits"
    return text


# YAML ------------------------------------------------------------------------------------------


class _Loader(_Base):  # type: ignore[misc]
    """The safe loader, recording keys a mapping gives twice (before merge keys are applied)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[YAMLDuplicate] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = key_node.value
                if key in seen:
                    self.duplicates.append(YAMLDuplicate(key_node.start_mark.line + 1, key))
                seen.add(key)
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


def _yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or str(exc)
        return line, problem
    return None, str(exc)


def parse_yaml(text: str, name: str) -> Iterator[Parsed]:
    """Every document of a YAML stream (empty documents included, as None data)."""
    if len(text) > YAML_COUNT_FROM:
        check_node_count(text, name)
    if "&" in text:
        check_aliases(text, name)
    loader = _Loader(text)
    number = 0
    try:
        while loader.check_node():
            number += 1
            node = loader.get_node()
            before = len(loader.duplicates)
            data = loader.construct_document(node)
            yield Parsed(
                data,
                yaml_duplicates=loader.duplicates[before:],
                line=node.start_mark.line + 1,
                node=node,
                document=number,
            )
    except yaml.YAMLError as exc:
        line, problem = _yaml_problem(exc)
        raise InputError(name, f"invalid YAML: {problem}", line) from None
    except RecursionError:
        raise InputError(name, "invalid YAML: nested too deeply") from None
    except ValueError as exc:
        raise InputError(name, f"invalid YAML: {_number_problem(exc)}") from None
    finally:
        loader.dispose()


def check_node_count(text: str, name: str, limit: int = MAX_YAML_NODES) -> None:
    """Refuse a YAML stream of more than `limit` nodes, counted from libyaml's events (nothing
    composed; stops at the first node past the limit)."""
    nodes = 0
    node_events = _NODE_EVENTS
    try:
        for event in yaml.parse(text, Loader=_Base):
            if isinstance(event, node_events):
                nodes += 1
                if nodes > limit:
                    raise InputError(
                        name,
                        f"YAML of more than {limit:,} nodes (values, mappings and sequences): "
                        "give a file this large as JSON",
                    )
    except yaml.YAMLError as exc:
        line, problem = _yaml_problem(exc)
        raise InputError(name, f"invalid YAML: {problem}", line) from None


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = _ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_RANGE_LOW) / span


def check_aliases(text: str, name: str) -> None:
    """Refuse documents whose aliases expand them excessively (goyaml's rule: with more than 100
    alias-reached nodes among more than 1,000, their share may not pass the allowed ratio) or
    contain themselves. Works on the node graph, never on the expansion."""
    try:
        documents = list(yaml.compose_all(text, Loader=_Base))
    except yaml.YAMLError as exc:
        line, problem = _yaml_problem(exc)
        raise InputError(name, f"invalid YAML: {problem}", line) from None
    except RecursionError:
        raise InputError(name, "invalid YAML: nested too deeply") from None
    sizes: dict[int, int] = {}
    for root in documents:
        if root is None:
            continue
        total = _expanded_size(root, sizes, name)
        distinct = _distinct_size(root)
        aliased = total - distinct
        if aliased > 100 and total > 1000 and aliased / total > _allowed_alias_ratio(total):
            raise InputError(name, "invalid YAML: document contains excessive aliasing")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_size(root: yaml.Node, sizes: dict[int, int], name: str) -> int:
    """Nodes the document has once every alias is expanded (iterative; memoised per node)."""
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            continue
        if key in sizes:
            continue
        if key in on_path:
            anchor = getattr(node, "anchor", None) or "?"
            raise InputError(name, f"invalid YAML: anchor {anchor!r} value contains itself")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise InputError(name, "invalid YAML: an alias value contains itself")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _distinct_size(root: yaml.Node) -> int:
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(_children(node))
    return len(seen)


def duplicate_paths(data: Any, duplicates: dict[int, tuple[str, ...]]) -> list[list[str | int]]:
    """The paths (keys and indexes) of the keys `parse_json` found twice, in document order."""
    if not duplicates:
        return []
    found: list[list[str | int]] = []
    stack: list[tuple[Any, list[str | int]]] = [(data, [])]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            found.extend([*path, key] for key in duplicates.get(id(value), ()))
            stack.extend((item, [*path, key]) for key, item in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((item, [*path, i]) for i, item in reversed(list(enumerate(value))))
    return found
