"""metadata.managedFields entries to and from the managers' field sets
(apimachinery/pkg/util/managedfields/internal/managedfields.go): an entry is keyed by its
manager identifier (the entry's JSON without time and fields, and, for appliers, without
apiVersion), decoded with upstream's checks and encoded in upstream's order (Apply before
Update, then by time, manager, apiVersion and subresource).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kubetaint.core.fieldmanager.fieldpath import FieldsV1Error, from_fields_v1
from kubetaint.core.fieldmanager.merge import Managers, VersionedSet

APPLY, UPDATE = "Apply", "Update"
FIELDS_V1 = "FieldsV1"


class ManagedFieldsError(ValueError):
    """managedFields that do not decode (the message is upstream's)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """What a manager identifier encodes."""

    manager: str
    operation: str
    api_version: str = ""
    subresource: str = ""


def identifier(who: Identity) -> str:
    """BuildManagerIdentifier: the entry as JSON without fieldsType, fieldsV1 and time (and
    without apiVersion for an applier), in ManagedFieldsEntry's field order."""
    entry: dict[str, str] = {}
    if who.manager:
        entry["manager"] = who.manager
    if who.operation:
        entry["operation"] = who.operation
    if who.api_version and who.operation != APPLY:
        entry["apiVersion"] = who.api_version
    if who.subresource:
        entry["subresource"] = who.subresource
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False)


def identity_of(manager_id: str) -> Identity:
    """The Identity an identifier encodes (a plain name when it is not one)."""
    try:
        entry = json.loads(manager_id)
    except json.JSONDecodeError:
        return Identity(manager_id, "")
    if not isinstance(entry, dict):
        return Identity(manager_id, "")
    return Identity(
        str(entry.get("manager") or ""),
        str(entry.get("operation") or ""),
        str(entry.get("apiVersion") or ""),
        str(entry.get("subresource") or ""),
    )


@dataclass(slots=True)
class Managed:
    """Decoded managedFields: each manager's fields and the time of its last change."""

    fields: Managers = field(default_factory=dict)
    times: dict[str, str | None] = field(default_factory=dict)


def is_reset(entries: Any) -> bool:
    """isResetManagedFields: an empty list, or a list of one empty entry, resets managedFields."""
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    return len(entries) == 1 and entries[0] == {}


def decode(entries: Any, *, lazy: bool = False) -> Managed:
    """DecodeManagedFields (ManagedFieldsError with upstream's message when an entry is bad).
    With `lazy` (managedFields this server stored), each entry's FieldsV1 is parsed only when
    its fields are needed."""
    return _decode(entries, lazy)


def _decode(entries: Any, lazy: bool) -> Managed:
    out = Managed()
    if entries is None:
        return out
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManagedFieldsError(f"managed fields entry {i} is not an object")
        operation = entry.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType")
        if fields_type in (None, ""):
            raise ManagedFieldsError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != FIELDS_V1:
            raise ManagedFieldsError(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        manager, subresource = entry.get("manager"), entry.get("subresource")
        if not isinstance(manager, str | None) or not isinstance(subresource, str | None):
            raise ManagedFieldsError(f"managed fields entry {i}: manager and subresource must be strings")
        who = Identity(manager or "", operation, api_version, subresource or "")
        key = identifier(who)
        fields_v1 = entry.get("fieldsV1")
        if lazy and isinstance(fields_v1, dict):
            out.fields[key] = VersionedSet(None, api_version, operation == APPLY, raw=fields_v1)
        else:
            try:
                fields = from_fields_v1(fields_v1) if fields_v1 is not None else from_fields_v1({})
            except FieldsV1Error as exc:
                raise ManagedFieldsError(f"error decoding versioned set from entry {i}: {exc}") from None
            out.fields[key] = VersionedSet(fields, api_version, operation == APPLY)
        time = entry.get("time")
        out.times[key] = time if isinstance(time, str) else None
    return out


def decode_or_empty(entries: Any, *, lazy: bool = False) -> Managed:
    """emptyManagedFieldsOnErr(DecodeManagedFields(...))."""
    try:
        return decode(entries, lazy=lazy)
    except ManagedFieldsError:
        return Managed()


def encode(managed: Managed) -> list[dict[str, Any]]:
    """encodeManagedFields: one entry per manager, sorted as upstream sorts them."""
    entries = []
    for key, owned in managed.fields.items():
        who = identity_of(key)
        entry: dict[str, Any] = {"manager": who.manager, "operation": who.operation}
        entry["apiVersion"] = owned.api_version
        time = managed.times.get(key)
        if time:
            entry["time"] = time
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = owned.fields_v1()
        if who.subresource:
            entry["subresource"] = who.subresource
        if not who.manager:
            del entry["manager"]
        entries.append(entry)
    entries.sort(
        key=lambda e: (
            e["operation"],
            e.get("time") or "",
            e.get("manager", ""),
            e["apiVersion"],
            e.get("subresource", ""),
        )
    )
    return entries


#: capmanagers.go.
DEFAULT_MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"


def cap_update_managers(managed: Managed, limit: int = DEFAULT_MAX_UPDATE_MANAGERS) -> Managed:
    """capUpdateManagers: past `limit` Update entries, the oldest merge into one
    `ancient-changes` entry per API version."""
    updaters = [key for key, owned in managed.fields.items() if not owned.applied]
    if len(updaters) <= limit:
        return managed
    updaters.sort(key=lambda k: (managed.times.get(k) or "", k))
    fields, times = dict(managed.fields), dict(managed.times)
    first_of_version: dict[str, str] = {}
    length = len(updaters)
    for manager in updaters:
        if length <= limit:
            break
        owned, time = fields[manager], times.get(manager)
        version = owned.api_version
        bucket = identifier(Identity(ANCIENT_CHANGES, UPDATE, version))
        first = first_of_version.get(version)
        if first is None:
            first_of_version[version] = manager
            continue
        if bucket not in fields:
            fields[bucket] = fields.pop(first)
            times[bucket] = times.pop(first, None)
        fields[bucket] = VersionedSet(owned.fields.union(fields[bucket].fields), version, owned.applied)
        del fields[manager]
        times.pop(manager, None)
        length -= 1
        times[bucket] = time
    return Managed(fields, times)
