"""The YAML node trees of a manifest file's documents, composed only when a message asks for the
line of a field, and in one pass over the file for all the messages of a run."""

from __future__ import annotations

from typing import Any

import yaml

try:  # the C loader is several times faster on large snapshots
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


class DocumentNodes:
    """A file's text and the node tree of the document last asked for.

    One loader reads the documents in order and keeps only the current one: messages come in
    document order, so a file with an error in every document is composed once, not once per
    error. Asking for an earlier document starts the loader over.
    """

    __slots__ = ("_items", "_loader", "_node", "_number", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._loader: Any = None
        self._number = 0
        self._node: yaml.Node | None = None
        #: the current document's `items` nodes by their first line (a List's objects)
        self._items: dict[int, yaml.Node] | None = None

    def document(self, number: int) -> yaml.Node | None:
        """The node tree of the 1-based document `number`, or None when the text has no such
        document or is not YAML there."""
        if number == self._number and self._node is not None:
            return self._node
        if self._loader is None or number < self._number:
            self._start()
        try:
            while self._number < number:
                if not self._loader.check_node():
                    self._stop()
                    return None
                self._node, self._items = self._loader.get_node(), None
                self._number += 1
        except yaml.YAMLError:
            self._stop()
            return None
        return self._node

    def item(self, number: int, line: int | None) -> yaml.Node | None:
        """In a List document, the item that starts at `line`; else the document itself."""
        node = self.document(number)
        if node is None or line is None:
            return node
        if self._items is None:
            items = _value(node, "items")
            self._items = {}
            if isinstance(items, yaml.SequenceNode):
                for item in items.value:
                    self._items.setdefault(item.start_mark.line + 1, item)
        return self._items.get(line, node)

    def _start(self) -> None:
        self._stop()
        self._loader = _Loader(self.text)

    def _stop(self) -> None:
        if self._loader is not None:
            self._loader.dispose()
        self._loader, self._number, self._node, self._items = None, 0, None, None


def _value(node: yaml.Node, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            if getattr(key_node, "value", None) == key:
                return value  # type: ignore[no-any-return]
    return None
