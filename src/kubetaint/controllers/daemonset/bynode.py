"""One DaemonSet's pods by target node (util.GetTargetNodeName), kept from the pod events marked
since the last look: a sync asks twice, and between syncs only the pods whose events were marked
can have moved, so only their nodes' lists are rebuilt (each in key order, with the informer's
current objects: what a full regrouping of the owner's pods in key order gives)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubetaint.controllers.daemonset.placement import target_node_name

JSON = dict[str, Any]
Key = tuple[str, str]


class PodsByNode:
    """The pods of one owner by target node, as of owner index `version`."""

    def __init__(self, version: int, pods: list[JSON], key_of: Callable[[JSON], Key]) -> None:
        self.version = version
        self.dirty: set[Key] = set()
        self._node_of: dict[Key, str] = {}
        self._keys: dict[str, set[Key]] = {}
        self.result: dict[str, list[JSON]] = {}
        #: the nodes whose lists `refresh` rebuilt since `take_changed` last took them
        self._changed: set[str] = set()
        for pod in pods:  # in key order
            node = target_node_name(pod)
            if node is not None:
                key = key_of(pod)
                self._node_of[key] = node
                self._keys.setdefault(node, set()).add(key)
                self.result.setdefault(node, []).append(pod)

    def refresh(self, version: int, owned_pod: Callable[[Key], JSON | None]) -> None:
        """Regroup the marked pods (`owned_pod(key)`: the pod when still owned, else None); the
        result is a new dict (one handed out before stays as it was)."""
        dirty, self.dirty = self.dirty, set()
        self.version = version
        touched: set[str] = set()
        current: dict[Key, JSON] = {}
        for key in dirty:
            old_node = self._node_of.pop(key, None)
            if old_node is not None:
                self._keys[old_node].discard(key)
                touched.add(old_node)
            pod = owned_pod(key)
            node = target_node_name(pod) if pod is not None else None
            if pod is not None and node is not None:
                self._node_of[key] = node
                self._keys.setdefault(node, set()).add(key)
                touched.add(node)
                current[key] = pod
        if not touched:
            return
        self._changed |= touched
        result = dict(self.result)
        for node in touched:
            keys = self._keys.get(node)
            if not keys:
                self._keys.pop(node, None)
                result.pop(node, None)
                continue
            pods = []
            for key in sorted(keys):
                pod = current.get(key) or owned_pod(key)
                if pod is not None:
                    pods.append(pod)
            result[node] = pods
        self.result = result

    def take_changed(self) -> set[str]:
        """The nodes whose lists were rebuilt since the last call (every other node's list in
        `result` is the very list it was then)."""
        changed, self._changed = self._changed, set()
        return changed
