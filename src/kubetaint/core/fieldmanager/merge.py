"""structured-merge-diff's merge.Updater: who owns which fields after an update or an apply,
the conflicts an apply meets, and the pruning of the fields an applier stopped applying
(merge/update.go). Every kind is served at one version, so no conversion happens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubetaint.core.fieldmanager.fieldpath import FieldSet, Path
from kubetaint.core.fieldmanager.schema import Atom
from kubetaint.core.fieldmanager.typed import (
    Comparison,
    compare,
    ensure_named_fields_are_members,
    merge,
    remove_items,
    to_field_set,
)


@dataclass(frozen=True, slots=True)
class VersionedSet:
    """fieldpath.VersionedSet: a manager's fields, the API version and whether it applied them."""

    fields: FieldSet
    api_version: str
    applied: bool


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


def conflicts_from_managers(sets: Managers) -> list[Conflict]:
    """ConflictsFromManagers (managers in sorted order, paths in Set.Iterate order)."""
    return [Conflict(manager, path) for manager in sorted(sets) for path in sets[manager].fields.paths()]


def _update(
    atom: Atom, live: Any, new: Any, managers: Managers, workflow: str, *, force: bool
) -> tuple[Managers, Comparison]:
    comparison = compare(live, new, atom)
    changed = comparison.changed()
    conflicts: Managers = {}
    removed: Managers = {}
    for manager, owned in managers.items():
        if manager == workflow:
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
    return {m: s for m, s in out.items() if not s.fields.empty()}, comparison


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
    merged = _prune(atom, merged, managers, manager, last)
    managers, _ = _update(atom, live, merged, managers, manager, force=force)
    if merged == live:
        return None, managers
    return merged, managers


def _prune(atom: Atom, merged: Any, managers: Managers, applier: str, last: VersionedSet | None) -> Any:
    """Remove a field, list or map item iff the applier applied it last time, does not apply it
    now and no other manager owns it (Updater.prune, addBackOwnedItems, addBackDanglingItems)."""
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
