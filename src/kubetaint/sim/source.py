"""Scenario text with positions: YAML (or JSON) parsed into data, and into a node tree when a
message names `file:line` of an event, an object or one of its fields.

The node tree is built only when a position is asked for (`Source.root`; `Where` asks only when
its message is shown): a scenario of 150,000 objects parses in a fraction of the time. A JSON
document is read by the JSON parser (as kube-apiserver and kubectl read JSON), other text by
PyYAML's C loader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubetaint.api.strictload import InputError, duplicate_paths, looks_like_json, parse_json, parse_yaml

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


class SourceError(ValueError):
    """Text that is not a YAML/JSON document."""


@dataclass
class Source:
    """A parsed scenario document and where it came from (`text`: its text, None for a document
    given as data, which has no positions)."""

    name: str
    data: Any
    text: str | None = None
    _root: yaml.Node | None = field(default=None, init=False, repr=False)
    #: keys the text gave twice
    duplicates: list[Duplicate] = field(default_factory=list, init=False, repr=False)

    @property
    def root(self) -> yaml.Node | None:
        """The text's node tree (parsed on first use; None without text)."""
        if self._root is None and self.text is not None:
            try:
                self._root = yaml.compose(self.text, Loader=_Loader)
            except yaml.YAMLError:  # JSON that YAML reads otherwise: no positions
                self.text = None
        return self._root

    def line(self, path: Sequence[str | int]) -> int | None:
        """1-based line of the value at `path` (keys and list indexes), or of its nearest parent."""
        node = self.root
        best: int | None = None if node is None else node.start_mark.line + 1
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
            best = node.start_mark.line + 1
        return best

    def where(self, path: Sequence[str | int]) -> str:
        """`file:line: ` (or `file: ` when no line is known) for messages."""
        if self.root is None:  # a document given as data: no line for any path
            return f"{self.name}: "
        line = self.line(path)
        return f"{self.name}:{line}: " if line is not None else f"{self.name}: "

    def where_later(self, path: list[str | int]) -> Where:
        """`where(path)`, worked out when a message shows it."""
        return Where(self, path)


class Where:
    """`Source.where` of a path, worked out (and the text's positions parsed) only when shown:
    `str(where)` or an f-string. Objects that load without error never need theirs."""

    __slots__ = ("_path", "_source")

    def __init__(self, source: Source, path: list[str | int]) -> None:
        self._source = source
        self._path = path

    def __str__(self) -> str:
        return self._source.where(self._path)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _child(node: yaml.Node | None, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return value  # type: ignore[no-any-return]
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


def load_text(text: str, name: str) -> Source:
    """Parse one YAML/JSON document (the scenario); errors name the line. Keys given twice are
    kept in `Source.duplicates` (their path where known, and line), for the parser to report."""
    try:
        if looks_like_json(text):
            try:
                parsed = [parse_json(text, name)]
            except InputError as err:
                if name.endswith(".json") or "nested" in err.problem or "digits" in err.problem:
                    raise
                parsed = list(parse_yaml(text, name))  # YAML in flow style, or invalid: YAML says which
        else:
            parsed = list(parse_yaml(text, name))
    except InputError as err:
        raise SourceError(str(err)) from None
    documents = [doc for doc in parsed if doc.data is not None]
    if len(documents) > 1:
        raise SourceError(f"{name}:{documents[1].line}: expected one document, got {len(documents)}")
    doc = documents[0] if documents else (parsed[0] if parsed else None)
    source = Source(name, doc.data if doc is not None else None, text)
    if doc is not None:
        source.duplicates = [
            Duplicate(path, None) for path in duplicate_paths(doc.data, doc.json_duplicates)
        ] + [Duplicate([d.key], d.line) for d in doc.yaml_duplicates]
    return source


@dataclass
class Duplicate:
    """A key given twice: its path (JSON: from the root; YAML: the key alone) and, for YAML, its line."""

    path: list[str | int]
    line: int | None
