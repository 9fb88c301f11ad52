"""ControllerRevisions, as pkg/controller/history/controller_history.go: the immutable snapshots of
a StatefulSet's or DaemonSet's pod template that `kubectl rollout history` lists and
`kubectl rollout undo` patches back.

A revision is named `<parent>-<hash>`, the hash being FNV-1 (32 bits) of its data's JSON (and of
the collision count, when one is given) encoded with rand.SafeEncodeString; its data is
`{"spec":{"template":{..., "$patch":"replace"}}}`, a strategic merge patch that restores the
template. The JSON hashed is Go's encoding of the data as kubetaint stores it (keys sorted, HTML
characters escaped), so a hash equals a real cluster's when the stored template has the same
fields as Go's typed encoding of it."""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import label_selector_from_dict
from kubetaint.clock.base import parse_time
from kubetaint.controllers.deployment.hashing import safe_encode
from kubetaint.controllers.replicaset import podutil
from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
RESOURCE = "controllerrevisions.apps"
#: ControllerRevisionHashLabel.
HASH_LABEL = "controller.kubernetes.io/hash"
FNV32_OFFSET = 0x811C9DC5
FNV32_PRIME = 0x01000193
#: Attempts of a write that conflicts (retry.DefaultBackoff's steps).
_ATTEMPTS = 5


def go_json(value: Any) -> bytes:
    """json.Marshal of a decoded JSON value: map keys sorted, no spaces, `<`, `>`, `&`, U+2028 and
    U+2029 escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def fnv32(data: bytes, value: int = FNV32_OFFSET) -> int:
    """FNV-1, 32 bits (Go's hash/fnv New32)."""
    for byte in data:
        value = (value * FNV32_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def hash_controller_revision(data: Any, probe: int | None = None) -> str:
    """HashControllerRevision: FNV-1 of the data's JSON, then of the decimal probe."""
    value = fnv32(go_json(data)) if data is not None else FNV32_OFFSET
    if probe is not None:
        value = fnv32(str(probe).encode(), value)
    return safe_encode(str(value))


def revision_name(prefix: str, hash_: str) -> str:
    """ControllerRevisionName: `<prefix>-<hash>`, the prefix cut to 223 bytes."""
    return f"{prefix[:223]}-{hash_}"


def new_controller_revision(  # noqa: PLR0917 (upstream's NewControllerRevision parameters)
    parent: Mapping[str, Any],
    api_version: str,
    kind: str,
    template_labels: Mapping[str, str],
    data: JSON,
    revision: int,
    collision_count: int | None,
) -> JSON:
    """NewControllerRevision: the parent's controller reference, the template's labels and the
    hash label, named `<parent>-<hash>`."""
    meta = parent.get("metadata") or {}
    hash_ = hash_controller_revision(data, collision_count)
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": revision_name(str(meta.get("name") or ""), hash_),
            "namespace": meta.get("namespace") or "default",
            "labels": {**template_labels, HASH_LABEL: hash_},
            "ownerReferences": [podutil.controller_ref(parent, api_version, kind)],
        },
        "data": data,
        "revision": revision,
    }


def _revision(obj: Mapping[str, Any]) -> int:
    value = obj.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _created(obj: Mapping[str, Any]) -> float:
    stamp = (obj.get("metadata") or {}).get("creationTimestamp")
    try:
        return parse_time(str(stamp)) if stamp else 0.0
    except ValueError:
        return 0.0


def sort_revisions(revisions: Iterable[JSON]) -> list[JSON]:
    """SortControllerRevisions: by revision, then creation time, then name (stable)."""
    return sorted(
        revisions, key=lambda r: (_revision(r), _created(r), str((r.get("metadata") or {}).get("name") or ""))
    )


def equal_revision(lhs: Mapping[str, Any] | None, rhs: Mapping[str, Any] | None) -> bool:
    """EqualRevision: the same hash label (when both parse as numbers) and the same data."""
    if lhs is None or rhs is None:
        return lhs is rhs
    left = ((lhs.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL)
    right = ((rhs.get("metadata") or {}).get("labels") or {}).get(HASH_LABEL)
    if _is_int(left) and _is_int(right) and int(str(left)) != int(str(right)):
        return False
    return go_json(lhs.get("data")) == go_json(rhs.get("data"))


def _is_int(value: Any) -> bool:
    text = str(value) if value is not None else ""
    stripped = text[1:] if text[:1] in "+-" else text
    return stripped.isascii() and stripped.isdigit()


def find_equal_revisions(revisions: Sequence[JSON], needle: Mapping[str, Any]) -> list[JSON]:
    """FindEqualRevisions, in the order of `revisions`."""
    return [r for r in revisions if equal_revision(r, needle)]


def next_revision(revisions: Sequence[Mapping[str, Any]]) -> int:
    """nextRevision: one more than the last (sorted) revision, 1 for none."""
    return _revision(revisions[-1]) + 1 if revisions else 1


class History:
    """realHistory over a Store and a ControllerRevision informer."""

    def __init__(self, store: Store, informer: Informer) -> None:
        self.store = store
        self.informer = informer

    def list(self, parent: Mapping[str, Any], selector: Mapping[str, Any] | None) -> list[JSON]:
        """ListControllerRevisions: those of the parent's namespace matching the selector and
        controlled by the parent or by nothing."""
        meta = parent.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        try:
            parsed = label_selector_from_dict(selector)
        except StatusError:  # an invalid selector selects nothing
            return []
        if parsed is None:
            return []
        result = []
        for revision in self.informer.items():
            rmeta = revision.get("metadata") or {}
            if rmeta.get("namespace") != namespace or not parsed.matches(rmeta.get("labels") or {}):
                continue
            ref = podutil.controller_ref_of(revision)
            if ref is None or ref.get("uid") == meta.get("uid"):
                result.append(revision)
        return result

    def claim(
        self, parent: Mapping[str, Any], selector: Mapping[str, Any] | None, api_version: str, kind: str
    ) -> builtins.list[JSON]:
        """ClaimControllerRevisions over every revision of the parent's namespace (the DaemonSet
        controller's controlledHistories): those the parent controls and `selector` matches, the
        orphans it matches adopted, and those the parent controls that it no longer matches
        released (their owner reference to the parent removed); while the parent is being
        deleted it neither adopts nor releases."""
        meta = parent.get("metadata") or {}
        namespace, uid = meta.get("namespace") or "default", meta.get("uid")
        deleting = bool(meta.get("deletionTimestamp"))
        try:
            parsed = label_selector_from_dict(selector)
        except StatusError:  # an invalid selector selects nothing
            parsed = None
        claimed: builtins.list[JSON] = []
        for revision in self.informer.items():
            rmeta = revision.get("metadata") or {}
            if rmeta.get("namespace") != namespace:
                continue
            matches = parsed is not None and parsed.matches(rmeta.get("labels") or {})
            ref = podutil.controller_ref_of(revision)
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if matches:
                    claimed.append(revision)
                elif not deleting:
                    self._release(revision, uid)
                continue
            if matches and not deleting and not rmeta.get("deletionTimestamp"):
                adopted = self.adopt(parent, api_version, kind, revision)
                if adopted is not None:
                    claimed.append(adopted)
        return claimed

    def _release(self, revision: JSON, uid: Any) -> None:
        """The release of ClaimControllerRevisions: the owner reference to `uid` removed
        (upstream's deleteOwnerRef patch); a revision already gone is fine."""
        meta = revision.get("metadata") or {}
        owners = [ref for ref in meta.get("ownerReferences") or [] if ref.get("uid") != uid]
        try:
            self.store.update(RESOURCE, {**revision, "metadata": {**meta, "ownerReferences": owners}})
        except StatusError as err:
            if err.code != 404:
                raise

    def create(self, parent: Mapping[str, Any], revision: JSON, collision_count: int) -> tuple[JSON, int]:
        """CreateControllerRevision: (the revision created or found with the same data, the
        collision count, raised for each name taken by other data)."""
        prefix = str((parent.get("metadata") or {}).get("name") or "")
        namespace = (parent.get("metadata") or {}).get("namespace") or "default"
        while True:
            hash_ = hash_controller_revision(revision.get("data"), collision_count)
            meta = {**revision["metadata"], "name": revision_name(prefix, hash_), "namespace": namespace}
            try:
                return self.store.create(RESOURCE, {**revision, "metadata": meta}), collision_count
            except StatusError as err:
                if err.reason != "AlreadyExists":
                    raise
            existing = self.store.get(RESOURCE, namespace, meta["name"])
            if go_json(existing.get("data")) == go_json(revision.get("data")):
                return existing, collision_count
            collision_count += 1

    def update_revision(self, revision: JSON, new_revision: int) -> JSON:
        """UpdateControllerRevision: its revision number set, retried on conflict."""
        current = revision
        for attempt in range(_ATTEMPTS):
            if current.get("revision") == new_revision:
                return current
            try:
                return self.store.update(RESOURCE, {**current, "revision": new_revision})
            except StatusError as err:
                if err.code != 409 or attempt == _ATTEMPTS - 1:
                    raise
            current = self.store.get(RESOURCE, *podutil.key_of(current))
        return current

    def delete(self, revision: Mapping[str, Any]) -> None:
        """DeleteControllerRevision (one already gone is fine)."""
        namespace, name = podutil.key_of(revision)
        try:
            self.store.delete(RESOURCE, namespace, name)
        except StatusError as err:
            if err.code != 404:
                raise

    def adopt(self, parent: Mapping[str, Any], api_version: str, kind: str, revision: JSON) -> JSON | None:
        """AdoptControllerRevision: the parent becomes the controller of an orphan revision."""
        if podutil.controller_ref_of(revision) is not None:
            return None
        meta = revision.get("metadata") or {}
        owners = [*(meta.get("ownerReferences") or []), podutil.controller_ref(parent, api_version, kind)]
        try:
            return self.store.update(RESOURCE, {**revision, "metadata": {**meta, "ownerReferences": owners}})
        except StatusError as err:
            if err.code in (404, 409, 422):
                return None
            raise
