"""The field manager of a write (apimachinery/pkg/util/managedfields/internal: FieldManager and
its chain NewDefaultFieldManager builds: version check, last-applied annotation sync,
skip-non-applied, cap on Update managers, manager identifiers, managed-fields timestamps, the
stripped metadata fields and the structured merge).

`update` records what a create, an update or a non-apply patch changed; `apply` merges a
server-side apply configuration. Both are pure: the caller passes the time to record
(second-precision RFC 3339).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from kubetaint.api.jsonview import meta_of
from kubetaint.core.fieldmanager import entries as ent
from kubetaint.core.fieldmanager import merge as smd
from kubetaint.core.fieldmanager.entries import APPLY, UPDATE, Identity, Managed, identifier
from kubetaint.core.fieldmanager.fieldpath import FieldSet
from kubetaint.core.fieldmanager.fieldpath import field as f
from kubetaint.core.fieldmanager.schema import Atom, atom_for, custom_atom, empty_object
from kubetaint.core.fieldmanager.typed import TypedError, compare, drop_nulls, to_field_set

JSON = dict[str, Any]

#: stripmeta.go: fields no manager owns.
STRIPPED = FieldSet.of(
    (f("apiVersion"),),
    (f("kind"),),
    (f("metadata"),),
    *(
        (f("metadata"), f(name))
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ),
)
#: skipnonapplied.go: the manager of an object's fields before its first apply.
BEFORE_FIRST_APPLY = "before-first-apply"
_CURRENT_OPERATION = "current-operation"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class ApplyError(Exception):
    """An apply refused: `code` and `message` as kube-apiserver answers (400 or 500)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Request:
    """Who writes: the manager name, the API version and subresource written, and the time."""

    manager: str
    api_version: str
    subresource: str
    time: str


def _with_managed_fields(obj: JSON, managed: Managed) -> JSON:
    """EncodeObjectManagedFields: the object with `managed` (no field when there is none)."""
    meta = {k: v for k, v in meta_of(obj).items() if k != "managedFields"}
    encoded = ent.encode(managed)
    if encoded:
        meta["managedFields"] = encoded
    return {**obj, "metadata": meta}


def _strip(managed: Managed, manager: str) -> None:
    owned = managed.fields.get(manager)
    if owned is None:
        return
    rest = owned.fields.difference(STRIPPED)
    if rest.empty():
        del managed.fields[manager]
    else:
        managed.fields[manager] = smd.VersionedSet(rest, owned.api_version, owned.applied)


def _without_meta(obj: JSON) -> JSON:
    """The object without managedFields (RemoveObjectManagedFields)."""
    meta = meta_of(obj)
    if "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _typed(obj: JSON, api_version: str, kind: str) -> JSON:
    """The object as its Go type holds it: the non-pointer structs (spec, status and their
    required fields) a stored object omits when empty are present, and no managedFields."""
    filled: JSON = _fill(_without_meta(obj), empty_object(api_version, kind))
    return filled


def _fill(obj: Any, zero: Any) -> Any:
    if not isinstance(obj, dict) or not isinstance(zero, dict):
        return obj
    out = dict(obj)
    for name, value in zero.items():
        if name not in out:
            out[name] = value
        elif isinstance(value, dict) and value:
            out[name] = _fill(out[name], value)
    return out


def _record_update(
    live: JSON, new: JSON, managed: Managed, who: Request, manager_id: str, *, atom: Atom | None = None
) -> Managed:
    """managedFieldsUpdater + stripMeta + structuredMerge Update, for `manager_id` (`atom`: the
    object's type when not its kind's shipped one)."""
    kind = str(new.get("kind") or live.get("kind") or "")
    atom = atom or atom_for(who.api_version, kind)
    fields = dict(managed.fields)
    fields.pop(_CURRENT_OPERATION, None)
    typed_live, typed_new = _typed(live, who.api_version, kind), _typed(new, who.api_version, kind)
    fields = smd.update(
        atom, typed_live, typed_new, fields, manager=_CURRENT_OPERATION, version=who.api_version
    )
    out = Managed(fields, dict(managed.times))
    _strip(out, _CURRENT_OPERATION)
    current = out.fields.pop(_CURRENT_OPERATION, None)
    if current is not None:
        previous = out.fields.get(manager_id)
        union = current.fields if previous is None else current.fields.union(previous.fields)
        out.fields[manager_id] = smd.VersionedSet(union, current.api_version, current.applied)
        out.times[manager_id] = who.time
    return out


def update(live: JSON | None, new: JSON, who: Request, *, schema: JSON | None = None) -> JSON:
    """FieldManager.UpdateNoErrors: `new` with managedFields recording `who`'s write over `live`
    (None for a create). Objects that never had managedFields are not tracked by an update
    (skip-non-applied); a request that resets managedFields (`[]` or `[{}]`) clears them.
    `schema`: a custom resource's structural schema (its CRD's openAPIV3Schema)."""
    kind = str(new.get("kind") or "")
    if live is None:
        live = empty_object(who.api_version, kind)
    live_entries = meta_of(live).get("managedFields")
    new_entries = meta_of(new).get("managedFields")
    if who.subresource or (new_entries and (new_entries is live_entries or new_entries == live_entries)):
        # the stored managedFields (sent back unchanged, as patches and most updates do)
        managed = ent.decode_or_empty(live_entries, lazy=True)
    elif ent.is_reset(new_entries):
        managed = Managed()
    else:
        try:
            managed = ent.decode(new_entries)
        except ent.ManagedFieldsError:
            managed = Managed()
        if not managed.fields:
            managed = ent.decode_or_empty(live_entries, lazy=True)
    if not managed.fields and meta_of(live).get("uid"):
        return _with_managed_fields(new, managed)  # skipNonApplied: an untracked object stays so
    manager_id = identifier(Identity(who.manager, UPDATE, who.api_version, who.subresource))
    try:
        atom = custom_atom(schema) if schema is not None else None
        recorded = _record_update(live, new, managed, who, manager_id, atom=atom)
    except TypedError:
        meta = {k: v for k, v in meta_of(new).items() if k != "managedFields"}
        if "managedFields" in meta_of(live):
            meta["managedFields"] = meta_of(live)["managedFields"]
        return {**new, "metadata": meta}
    return _with_managed_fields(new, ent.cap_update_managers(recorded))


def gvk_string(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind.String: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"


def apply(
    live: JSON | None, config: JSON, who: Request, kind: str, force: bool, *, schema: JSON | None = None
) -> JSON:
    """FieldManager.Apply: `config` applied by `who` over `live` (None: create-on-apply); `schema`:
    a custom resource's structural schema. Raises smd.ConflictsError, ApplyError."""
    api_version = who.api_version
    given = (str(config.get("apiVersion") or ""), str(config.get("kind") or ""))
    if given != (api_version, kind):
        raise ApplyError(400, f"invalid object type: {gvk_string(*given)}")
    if "managedFields" in meta_of(config) and meta_of(config)["managedFields"] is not None:
        raise ApplyError(400, "metadata.managedFields must be nil")
    if live is None:
        live = empty_object(api_version, kind)
    try:
        managed = ent.decode(meta_of(live).get("managedFields"), lazy=True)
    except ent.ManagedFieldsError as exc:
        raise ApplyError(500, f"failed to decode managed fields: {exc}") from None
    atom = custom_atom(schema) if schema is not None else atom_for(api_version, kind)
    try:
        try:
            result = _apply_once(live, config, who, kind, managed, force=force, atom=atom)
        except smd.ConflictsError as exc:
            if who.manager != "kubectl":
                raise
            # lastAppliedManager: conflicts on what kubectl's client-side apply last applied
            # (and the object still holds) do not stop kubectl's first server-side apply
            allowed = _allowed_from_last_applied(live, api_version, kind, atom)
            if allowed is None:
                raise
            rest = [c for c in exc.conflicts if not allowed.has(c.path)]
            if rest:
                raise smd.ConflictsError(rest) from None
            result = _apply_once(live, config, who, kind, managed, force=True, atom=atom)
    except TypedError as exc:
        raise ApplyError(
            500, f"failed to create typed patch object ({gvk_string(api_version, kind)}): {exc}"
        ) from None
    return _sync_last_applied(result, config, who.manager)


def _apply_once(
    live: JSON, config: JSON, who: Request, kind: str, managed: Managed, *, force: bool, atom: Atom
) -> JSON:
    """skipNonApplied + capManagers + buildManagerInfo + managedFieldsUpdater + stripMeta +
    structuredMerge Apply."""
    api_version = who.api_version
    live_plain = _typed(live, api_version, kind)
    if not managed.fields:  # skipNonApplied: what exists so far belongs to before-first-apply
        before = Request(BEFORE_FIRST_APPLY, api_version, "", who.time)
        first_id = identifier(Identity(BEFORE_FIRST_APPLY, UPDATE, api_version))
        managed = _record_update(
            empty_object(api_version, kind), live_plain, managed, before, first_id, atom=atom
        )
    manager_id = identifier(Identity(who.manager, APPLY, api_version, who.subresource))
    merged, fields = smd.apply(
        atom, live_plain, config, dict(managed.fields), manager=manager_id, version=api_version, force=force
    )
    out = Managed(fields, dict(managed.times))
    _strip(out, manager_id)
    if merged is not None or not out.times.get(manager_id):
        # a change, or a manager that owns fields from now on (a co-owner applying what is there)
        out.times[manager_id] = who.time
    result: JSON = drop_nulls(merged) if merged is not None else copy.deepcopy(_without_meta(live))
    return _with_managed_fields(result, ent.cap_update_managers(out))


def _allowed_from_last_applied(live: JSON, api_version: str, kind: str, atom: Atom) -> FieldSet | None:
    """allowedConflictsFromLastApplied: the fields of the last-applied-configuration annotation
    whose values the object still holds (None without a usable annotation)."""
    annotations = meta_of(live).get("annotations")
    text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not isinstance(text, str) or not text:
        return None
    try:
        last = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return None
    try:
        fields = to_field_set(last, atom)
        comparison = compare(last, _typed(live, api_version, kind), atom)
    except TypedError:
        return None
    return fields.difference(comparison.modified).difference(comparison.added).difference(comparison.removed)


def _sync_last_applied(obj: JSON, config: JSON, manager: str) -> JSON:
    """lastAppliedUpdater: kubectl's server-side apply keeps an existing client-side
    last-applied-configuration annotation in step with what it applied."""
    annotations = meta_of(obj).get("annotations")
    if manager != "kubectl" or not isinstance(annotations, dict) or LAST_APPLIED not in annotations:
        return obj
    applied = copy.deepcopy(config)
    applied_meta = meta_of(applied)
    applied_annotations = applied_meta.get("annotations")
    if isinstance(applied_annotations, dict):
        applied_annotations.pop(LAST_APPLIED, None)
        if not applied_annotations:
            applied_meta.pop("annotations")
    value = json.dumps(applied, separators=(",", ":"))
    meta = {**meta_of(obj), "annotations": {**annotations, LAST_APPLIED: value}}
    return {**obj, "metadata": meta}
