"""How plugins read cluster objects (Namespaces, PriorityClasses, RuntimeClasses).

The simulator and the API server pass their store through `ObjectLookup`; `DictLookup` is the
in-memory implementation used by tests and simple callers. Returned objects are read-only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol


class ObjectLookup(Protocol):
    """Read access to stored objects by resource (plural, e.g. `namespaces`)."""

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The object, or None when it does not exist. Cluster-scoped objects use namespace ""."""
        ...

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        """Every stored object of the resource, across namespaces."""
        ...


class DictLookup:
    """An `ObjectLookup` over plain dicts, indexed by resource, namespace and name."""

    def __init__(self, objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None) -> None:
        self._objects: dict[str, dict[tuple[str, str], Mapping[str, Any]]] = {}
        for resource, items in (objects or {}).items():
            for obj in items:
                self.add(resource, obj)

    def add(self, resource: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        self._objects.setdefault(resource, {})[key] = obj

    def get(self, resource: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._objects.get(resource, {}).get((namespace, name))

    def list(self, resource: str) -> Sequence[Mapping[str, Any]]:
        return list(self._objects.get(resource, {}).values())
