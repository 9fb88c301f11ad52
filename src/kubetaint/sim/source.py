"""Scenario text with positions: YAML (or JSON) parsed once into data and once into a node tree
so errors can name `file:line` of an event, an object or one of its fields."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class SourceError(ValueError):
    """Text that is not a YAML/JSON document."""


@dataclass
class Source:
    """A parsed scenario document and where it came from."""

    name: str
    data: Any
    root: yaml.Node | None = None

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


def split_field_path(field: str) -> list[str | int]:
    """`spec.taints[0].effect` → ['spec', 'taints', 0, 'effect']."""
    parts: list[str | int] = []
    for match in _PATH_PART.finditer(field):
        parts.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
    return parts


def _child(node: yaml.Node | None, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return value  # type: ignore[no-any-return]
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


def load_text(text: str, name: str) -> Source:
    """Parse one YAML/JSON document (the scenario); errors name the line."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        problem = getattr(exc, "problem", None) or str(exc)
        raise SourceError(f"{where}: invalid YAML: {problem}") from None
    return Source(name, data, root)
