"""structured-merge-diff's merge.Updater: who owns which fields after an update or an apply,
the conflicts an apply meets, and the pruning of the fields an applier stopped applying
(merge/update.go). Every kind is served at one version, so no conversion happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubetaint.core.fieldmanager.fieldpath import (
    FieldSet,
    FieldsV1Error,
    Path,
    element_fields_v1,
    from_fields_v1,
)
from kubetaint.core.fieldmanager.schema import Atom
from kubetaint.core.fieldmanager.typed import (
    Comparison,
    compare,
    ensure_named_fields_are_members,
    merge,
    remove_items,
    to_field_set,
)


class VersionedSet:
    """fieldpath.VersionedSet: a manager's fields, the API version and whether it applied them.

    A set read from a stored object may stay in its FieldsV1 form (`raw`) until it is needed:
    an update that touches none of a manager's fields neither decodes nor re-encodes them."""

    __slots__ = ("_fields", "api_version", "applied", "raw")

    def __init__(
        self, fields: FieldSet | None, api_version: str, applied: bool, raw: dict[str, Any] | None = None
    ) -> None:
        self._fields = fields
        self.api_version = api_version
        self.applied = applied
        self.raw = raw if fields is None else None

    @property
    def fields(self) -> FieldSet:
        if self._fields is None:
            try:
                self._fields = from_fields_v1(self.raw if self.raw is not None else {}, written_here=True)
            except FieldsV1Error:
                self._fields = FieldSet()
        return self._fields

    def empty(self) -> bool:
        """Whether the set has no field (read from FieldsV1 when not decoded)."""
        if self._fields is None and self.raw is not None:
            return not self.raw
        return self.fields.empty()

    def fields_v1(self) -> dict[str, Any]:
        """The FieldsV1 document of the set (the stored one when it was never decoded)."""
        return self.raw if self.raw is not None and self._fields is None else self.fields.to_fields_v1()

    def touches(self, probe: FieldSet) -> bool:
        """Whether the set shares a member with `probe` (so that an intersection or a
        difference with it may change something), read from FieldsV1 when not decoded."""
        if self._fields is None and self.raw is not None:
            return _raw_touches(self.raw, probe)
        return _touches(self.fields, probe)


#: fieldpath.ManagedFields: manager identifier -> its fields.
Managers = dict[str, VersionedSet]


@dataclass(frozen=True, slots=True)
class Conflict:
    manager: str
    path: Path


class ConflictsError(Exception):
    """merge.Conflicts: the fields an apply would take from other managers."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


def _touches(owned: FieldSet, probe: FieldSet) -> bool:
    if not owned.members.isdisjoint(probe.members):
        return True
    for pe, child in probe.children.items():
        mine = owned.children.get(pe)
        if mine is not None and _touches(mine, child):
            return True
    return False


def _raw_touches(document: dict[str, Any], probe: FieldSet) -> bool:
    for pe in probe.members:
        sub = document.get(element_fields_v1(pe))
        if isinstance(sub, dict) and (not sub or "." in sub):
            return True
    for pe, child in probe.children.items():
        sub = document.get(element_fields_v1(pe))
        if isinstance(sub, dict) and sub and _raw_touches(sub, child):
            return True
    return False


def conflicts_from_managers(sets: Managers) -> list[Conflict]:
    """ConflictsFromManagers (managers in sorted order, paths in Set.Iterate order)."""
    return [Conflict(manager, path) for manager in sorted(sets) for path in sets[manager].fields.paths()]


def _update(
    atom: Atom, live: Any, new: Any, managers: Managers, workflow: str, *, force: bool
) -> tuple[Managers, Comparison]:
    comparison = compare(live, new, atom)
    changed = comparison.changed()
    touched = changed.union(comparison.removed)
    conflicts: Managers = {}
    removed: Managers = {}
    for manager, owned in managers.items():
        if manager == workflow or not owned.touches(touched):
            continue
        taken = owned.fields.intersection(changed)
        if not taken.empty():
            conflicts[manager] = VersionedSet(taken, owned.api_version, False)
        if not comparison.removed.empty():
            removed[manager] = VersionedSet(comparison.removed, owned.api_version, False)
    if not force and conflicts:
        raise ConflictsError(conflicts_from_managers(conflicts))
    out = dict(managers)
    for manager, taken_set in conflicts.items():
        owned = out[manager]
        out[manager] = VersionedSet(
            owned.fields.difference(taken_set.fields), owned.api_version, owned.applied
        )
    for manager, removed_set in removed.items():
        owned = out[manager]
        out[manager] = VersionedSet(
            owned.fields.difference(removed_set.fields), owned.api_version, owned.applied
        )
    return {m: s for m, s in out.items() if not s.empty()}, comparison


def update(atom: Atom, live: Any, new: Any, managers: Managers, *, manager: str, version: str) -> Managers:
    """Updater.Update: `manager` owns what it changed; others lose what it changed or removed."""
    out, comparison = _update(atom, live, new, managers, manager, force=True)
    previous = out.get(manager)
    fields = previous.fields if previous is not None else FieldSet()
    fields = fields.difference(comparison.removed).union(comparison.modified).union(comparison.added)
    if fields.empty():
        out.pop(manager, None)
    else:
        out[manager] = VersionedSet(fields, version, False)
    return out


def apply(
    atom: Atom, live: Any, config: Any, managers: Managers, *, manager: str, version: str, force: bool
) -> tuple[Any, Managers]:
    """Updater.Apply: the merged object (None when it equals `live`) and the new owners; raises
    ConflictsError unless `force`."""
    merged = merge(live, config, atom)
    last = managers.get(manager)
    managers = dict(managers)
    managers[manager] = VersionedSet(to_field_set(config, atom), version, True)
    merged = _prune(atom, merged, managers, last)
    managers, _ = _update(atom, live, merged, managers, manager, force=force)
    if merged == live:
        return None, managers
    return merged, managers


def _prune(atom: Atom, merged: Any, managers: Managers, last: VersionedSet | None) -> Any:
    """Remove a field, list or map item iff the applier applied it last time (`last`), does not
    apply it now and no other manager owns it (Updater.prune, addBackOwnedItems,
    addBackDanglingItems)."""
    if last is None or last.fields.empty():
        return merged
    last_named = ensure_named_fields_are_members(last.fields, atom)
    pruned = remove_items(merged, last_named, atom)
    # addBackOwnedItems
    owned = FieldSet()
    for owner in managers.values():
        owned = owned.union(owner.fields)
    merged_set = ensure_named_fields_are_members(to_field_set(merged, atom), atom)
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, atom), atom)
    owned_named = ensure_named_fields_are_members(owned, atom)
    pruned = remove_items(merged, merged_set.difference(pruned_set.union(owned_named)), atom)
    # addBackDanglingItems
    pruned_set = ensure_named_fields_are_members(to_field_set(pruned, atom), atom)
    result = remove_items(merged, merged_set.difference(pruned_set).intersection(last_named), atom)
    return {} if result is None else result  # the object itself stays, emptied
