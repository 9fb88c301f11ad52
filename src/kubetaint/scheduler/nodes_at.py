"""Feasible nodes picked lazily from the node list by position: the vectorised search in
findNodesThatPassFilters (pkg/scheduler/schedule_one.go) finds positions in numpy, and a cycle that
scores vectorised only ever reads the node it chooses."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from kubetaint.scheduler.cache import IntArray
from kubetaint.scheduler.nodeinfo import NodeInfo


class NodesAt(Sequence[NodeInfo]):
    """The nodes at some positions of the node list, each picked when read: a cycle that scores
    its feasible nodes vectorised reads just the chosen one (or, explaining, all of them)."""

    __slots__ = ("_nodes", "_picked", "_positions", "slots")

    def __init__(self, nodes: list[NodeInfo], positions: IntArray, slots: IntArray) -> None:
        self._nodes = nodes
        self._positions = positions
        self._picked: list[NodeInfo] | None = None
        #: the nodes' cache slots, in order
        self.slots = slots

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | list[NodeInfo]:
        if isinstance(index, slice):
            return self._list()[index]
        return self._nodes[int(self._positions[index])]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self._list())

    def _list(self) -> list[NodeInfo]:
        if self._picked is None:
            self._picked = _nodes_at(self._nodes, self._positions.tolist())
        return self._picked


def _nodes_at(nodes: list[NodeInfo], positions: list[int]) -> list[NodeInfo]:
    """[nodes[i] for i in positions], picked in C."""
    if len(positions) > 1:
        return list(operator.itemgetter(*positions)(nodes))
    return [nodes[i] for i in positions]


def node_slots(nodes: Sequence[NodeInfo]) -> IntArray:
    """The nodes' cache slots, in order (those NodesAt holds already, else read node by node)."""
    if isinstance(nodes, NodesAt):
        return nodes.slots
    return np.fromiter((ni.slot for ni in nodes), np.int64, len(nodes))
