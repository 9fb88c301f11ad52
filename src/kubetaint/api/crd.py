"""CustomResourceDefinitions (apiextensions.k8s.io/v1) read as the API server reads them: the
resource a served version of a CRD defines, its schema, subresources and printer columns, and
the status the apiextensions controllers and the CRD strategy give it (mirrors
k8s.io/apiextensions-apiserver pkg/apihelpers, pkg/registry/customresourcedefinition/strategy.go
and pkg/controller/{status,establish,finalizer}).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.jsonview import as_list as _as_list
from kubetaint.api.resources import ALL_VERBS, Resource, Subresource

JSON = dict[str, Any]

GROUP = "apiextensions.k8s.io"
#: The store's resource name of CustomResourceDefinitions.
CRDS = "customresourcedefinitions.apiextensions.k8s.io"
#: apiextensions.CustomResourceCleanupFinalizer.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
ESTABLISHED, NAMES_ACCEPTED, TERMINATING = "Established", "NamesAccepted", "Terminating"


def _as_dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class CustomResource(Resource):
    """The resource one served version of a CRD defines, with what serving it needs: the
    version's schema (None: no schema), the storage version, the list kind, the printer
    columns and the scale subresource's paths."""

    schema: JSON | None = field(default=None, compare=False, hash=False)
    storage_version: str = ""
    list_kind_name: str = ""
    columns: tuple[JSON, ...] = field(default=(), compare=False, hash=False)
    scale_paths: tuple[str, str, str] = ("", "", "")
    preserve_unknown: bool = False
    crd_uid: str = ""
    #: The CRD the resource was read from (what `storage_key` reads when a watch starts).
    definition: Mapping[str, Any] | None = field(default=None, compare=False, hash=False, repr=False)
    #: The CRD is being deleted: its objects are read and deleted, no longer created.
    terminating: bool = False

    @property
    def list_kind(self) -> str:
        return self.list_kind_name or f"{self.kind}List"

    def subresource(self, name: str) -> Subresource | None:
        if name not in self.subresources:
            return None
        if name == "status":
            return Subresource(name, self.kind, ("get", "patch", "update"), self.group, self.version)
        if name == "scale":
            return Subresource(name, "Scale", ("get", "patch", "update"), "autoscaling")
        return None


def spec_of(crd: Mapping[str, Any]) -> JSON:
    return _as_dict(crd.get("spec"))


def is_established(crd: Mapping[str, Any]) -> bool:
    """IsCRDConditionTrue(crd, Established)."""
    return condition_true(crd, ESTABLISHED)


def condition_true(crd: Mapping[str, Any], kind: str) -> bool:
    for cond in _as_list(_as_dict(crd.get("status")).get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond.get("status") == "True"
    return False


def storage_version(crd: Mapping[str, Any]) -> str:
    """The version marked `storage: true` ("" when none is)."""
    for version in _as_list(spec_of(crd).get("versions")):
        if isinstance(version, dict) and version.get("storage") is True:
            return str(version.get("name") or "")
    return ""


def version_entry(crd: Mapping[str, Any], name: str) -> JSON | None:
    for version in _as_list(spec_of(crd).get("versions")):
        if isinstance(version, dict) and version.get("name") == name:
            return version
    return None


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """The served versions, in kube-apiserver's discovery order (apihelpers sorts them by
    version priority: GA before beta before alpha, higher numbers first)."""
    names = [
        str(v.get("name"))
        for v in _as_list(spec_of(crd).get("versions"))
        if isinstance(v, dict) and v.get("served") is True and v.get("name")
    ]
    return sorted(names, key=version_priority)


def version_priority(version: str) -> tuple[int, int, int, str]:
    """version.CompareKubeAwareVersionStrings as a sort key (smallest first: v2, v1, v1beta1,
    v1alpha1, then other strings alphabetically)."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if match is None:
        return (3, 0, 0, version)
    major = int(match.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, "")


def resource_for(crd: Mapping[str, Any], version: str) -> CustomResource | None:
    """The resource a served version of an established CRD defines, or None."""
    entry = version_entry(crd, version)
    if entry is None or entry.get("served") is not True:
        return None
    spec = spec_of(crd)
    names = _as_dict(_as_dict(crd.get("status")).get("acceptedNames")) or _as_dict(spec.get("names"))
    group, plural = str(spec.get("group") or ""), str(names.get("plural") or "")
    kind = str(names.get("kind") or "")
    subs = _as_dict(entry.get("subresources"))
    subresources = tuple(name for name in ("scale", "status") if isinstance(subs.get(name), dict))
    scale = _as_dict(subs.get("scale"))
    schema = _as_dict(_as_dict(entry.get("schema")).get("openAPIV3Schema")) or None
    return CustomResource(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=str(names.get("singular") or kind.lower()),
        short_names=tuple(str(s) for s in _as_list(names.get("shortNames"))),
        namespaced=spec.get("scope") != "Cluster",
        verbs=ALL_VERBS,
        subresources=subresources,
        categories=tuple(str(c) for c in _as_list(names.get("categories"))),
        schema=schema,
        storage_version=storage_version(crd),
        list_kind_name=str(names.get("listKind") or f"{kind}List"),
        columns=tuple(c for c in _as_list(entry.get("additionalPrinterColumns")) if isinstance(c, dict)),
        scale_paths=(
            str(scale.get("specReplicasPath") or ""),
            str(scale.get("statusReplicasPath") or ""),
            str(scale.get("labelSelectorPath") or ""),
        ),
        preserve_unknown=spec.get("preserveUnknownFields") is True,
        crd_uid=str(_as_dict(crd.get("metadata")).get("uid") or ""),
        definition=crd,
        terminating=condition_true(crd, TERMINATING),
    )


def storage_key(crd: Mapping[str, Any]) -> str:
    """What kube-apiserver builds a CRD's serving storage from: its uid, spec and accepted names
    (crdHandler keeps a storage while none of them changes, and tears it down when one does or
    the CRD is deleted)."""
    accepted = _as_dict(crd.get("status")).get("acceptedNames")
    identity = [_as_dict(crd.get("metadata")).get("uid"), crd.get("spec"), accepted]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def served_resources(crd: Mapping[str, Any]) -> list[CustomResource]:
    """Every served version's resource of an established CRD not being deleted (what discovery
    lists); empty otherwise."""
    if not is_established(crd):
        return []
    out = []
    for version in served_versions(crd):
        res = resource_for(crd, version)
        if res is not None:
            out.append(res)
    return out


# the CRD strategy and controllers ---------------------------------------------------------


def prepare_for_create(crd: JSON) -> JSON:
    """strategy.PrepareForCreate: the status cleared but for the stored versions (the storage
    version), generation 1."""
    meta = {**_as_dict(crd.get("metadata")), "generation": 1}
    stored = [
        str(v.get("name"))
        for v in _as_list(spec_of(crd).get("versions"))
        if isinstance(v, dict) and v.get("storage") is True and v.get("name")
    ]
    return {**crd, "metadata": meta, "status": {"storedVersions": stored}}


def prepare_for_update(crd: JSON, old: Mapping[str, Any]) -> JSON:
    """strategy.PrepareForUpdate: the old status kept, generation bumped when the spec changes,
    the storage version added to status.storedVersions."""
    status = dict(_as_dict(old.get("status")))
    stored = [str(v) for v in _as_list(status.get("storedVersions"))]
    current = storage_version(crd)
    if current and current not in stored:
        stored.append(current)
    status["storedVersions"] = stored
    meta = dict(_as_dict(crd.get("metadata")))
    generation = _as_dict(old.get("metadata")).get("generation")
    if isinstance(generation, int):
        meta["generation"] = generation + (1 if crd.get("spec") != old.get("spec") else 0)
    return {**crd, "metadata": meta, "status": status}


def set_condition(crd: JSON, kind: str, status: str, reason: str, message: str, *, now: str) -> JSON:
    """apiextensions.SetCRDCondition: the condition replaced (its lastTransitionTime kept when
    the status does not change), or appended."""
    st = dict(_as_dict(crd.get("status")))
    conditions = [dict(c) for c in _as_list(st.get("conditions")) if isinstance(c, dict)]
    new = {"type": kind, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
    for i, cond in enumerate(conditions):
        if cond.get("type") == kind:
            if cond.get("status") == status:
                new["lastTransitionTime"] = cond.get("lastTransitionTime") or now
            conditions[i] = new
            break
    else:
        conditions.append(new)
    st["conditions"] = conditions
    return {**crd, "status": st}


def first_delete(crd: JSON, now: str) -> JSON:
    """The CRD REST Delete's first request: the deletion timestamp, the cleanup finalizer and
    the Terminating condition (the custom resources are deleted by the finalizer controller)."""
    meta = dict(_as_dict(crd.get("metadata")))
    meta.setdefault("deletionTimestamp", now)
    meta["deletionGracePeriodSeconds"] = 0
    finalizers = [str(f) for f in _as_list(meta.get("finalizers"))]
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    meta["finalizers"] = finalizers
    message = "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
    return set_condition(
        {**crd, "metadata": meta}, TERMINATING, "True", "InstanceDeletionPending", message, now=now
    )


def names_conflict(crd: Mapping[str, Any], others: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """The naming controller's check (calculateNamesAndConditions): (reason, message) when a
    requested name is taken by another CRD of the same group, else None."""
    spec = spec_of(crd)
    group = spec.get("group")
    names = _as_dict(spec.get("names"))
    me = _as_dict(crd.get("metadata")).get("name")
    taken_plural: set[str] = set()
    taken_kind: set[str] = set()
    for other in others:
        if _as_dict(other.get("metadata")).get("name") == me or spec_of(other).get("group") != group:
            continue
        accepted = _as_dict(_as_dict(other.get("status")).get("acceptedNames"))
        taken_plural.update(
            str(n)
            for n in [accepted.get("plural"), accepted.get("singular"), *_as_list(accepted.get("shortNames"))]
            if n
        )
        taken_kind.update(str(n) for n in [accepted.get("kind"), accepted.get("listKind")] if n)
    plural = str(names.get("plural") or "")
    if plural in taken_plural:
        return "PluralConflict", f'"{plural}" is already in use'
    singular = str(names.get("singular") or "")
    if singular in taken_plural:
        return "SingularConflict", f'"{singular}" is already in use'
    for short in _as_list(names.get("shortNames")):
        if short in taken_plural:
            return "ShortNamesConflict", f'"{short}" is already in use'
    kind = str(names.get("kind") or "")
    if kind in taken_kind:
        return "KindConflict", f'"{kind}" is already in use'
    list_kind = str(names.get("listKind") or "")
    if list_kind in taken_kind:
        return "ListKindConflict", f'"{list_kind}" is already in use'
    return None


def established_status(crd: JSON, others: Sequence[Mapping[str, Any]], now: str) -> JSON:
    """The CRD as the naming and establishing controllers leave it: acceptedNames and
    NamesAccepted (NoConflicts, or the conflict), then Established (InitialNamesAccepted) once
    the names are accepted."""
    conflict = names_conflict(crd, others)
    names = _as_dict(spec_of(crd).get("names"))
    if conflict is None:
        accepted = dict(names)
        if not accepted.get("singular") and accepted.get("kind"):
            accepted["singular"] = str(accepted["kind"]).lower()
        st = {**_as_dict(crd.get("status")), "acceptedNames": accepted}
        crd = set_condition(
            {**crd, "status": st}, NAMES_ACCEPTED, "True", "NoConflicts", "no conflicts found", now=now
        )
        if not condition_true(crd, ESTABLISHED):
            crd = set_condition(
                crd,
                ESTABLISHED,
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                now=now,
            )
        return crd
    reason, message = conflict
    st = {**_as_dict(crd.get("status"))}
    st.setdefault("acceptedNames", {"plural": "", "kind": ""})
    crd = set_condition({**crd, "status": st}, NAMES_ACCEPTED, "False", reason, message, now=now)
    if not condition_true(crd, ESTABLISHED):
        crd = set_condition(crd, ESTABLISHED, "False", "NotAccepted", "not all names are accepted", now=now)
    return crd


def with_defaults(crd: JSON) -> JSON:
    """SetDefaults_CustomResourceDefinition (v1): names.singular (the lower-cased kind) and
    names.listKind (`<kind>List`), conversion strategy `None`."""
    spec = dict(spec_of(crd))
    names = dict(_as_dict(spec.get("names")))
    kind = names.get("kind")
    if isinstance(kind, str) and kind:
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind"):
            names["listKind"] = kind + "List"
    spec["names"] = names
    conversion = _as_dict(spec.get("conversion"))
    if not conversion.get("strategy"):
        spec["conversion"] = {**conversion, "strategy": "None"}
    return {**crd, "spec": spec}
