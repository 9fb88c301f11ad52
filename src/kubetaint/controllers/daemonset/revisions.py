"""A DaemonSet's ControllerRevisions, as pkg/controller/daemon/update.go (constructHistory,
snapshot, dedupCurHistories, cleanupHistory, Match, getPatch): the current revision is the one
whose data is the DaemonSet's template, named `<daemonset>-<hash>` with the hash its pods carry
in `controller-revision-hash`; the others are its history, of which those no pod uses beyond
`revisionHistoryLimit` are deleted."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.controllers.history import History, go_json, sort_revisions
from kubetaint.controllers.replicaset import podutil
from kubetaint.store.interface import Store

JSON = dict[str, Any]
RESOURCE = "controllerrevisions.apps"
DAEMONSETS = "daemonsets.apps"
API_VERSION = "apps/v1"
KIND = "DaemonSet"
#: DefaultDaemonSetUniqueLabelKey.
UNIQUE_LABEL = "controller-revision-hash"
DEFAULT_REVISION_HISTORY_LIMIT = 10


class StaleCollisionCountError(Exception):
    """A revision name taken by other data: the collision count is raised and the sync retried."""


def get_patch(ds: Mapping[str, Any]) -> JSON:
    """getPatch: `{"spec":{"template":{..., "$patch":"replace"}}}`."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def matches(patch: bytes, revision: Mapping[str, Any]) -> bool:
    """Match: the revision's data is the DaemonSet's template patch (`patch`, its JSON)."""
    return go_json(revision.get("data")) == patch


def _revision(obj: Mapping[str, Any]) -> int:
    value = obj.get("revision")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def construct_history(store: Store, history: History, ds: JSON, hash_: str) -> tuple[JSON, list[JSON]]:
    """constructHistory: (the current revision, the old ones). Revisions without the unique label
    get their name as it; the current one is created (`<ds>-<hash>`) when none matches, or
    renumbered past the old ones."""
    selector = (ds.get("spec") or {}).get("selector")
    patch = go_json(get_patch(ds))
    current: list[JSON] = []
    old: list[JSON] = []
    for claimed in history.claim(ds, selector, API_VERSION, KIND):
        revision = claimed
        labels = (revision.get("metadata") or {}).get("labels") or {}
        if UNIQUE_LABEL not in labels:
            meta = revision["metadata"]
            revision = store.update(
                RESOURCE, {**revision, "metadata": {**meta, "labels": {**labels, UNIQUE_LABEL: meta["name"]}}}
            )
        (current if matches(patch, revision) else old).append(revision)
    next_number = max((_revision(r) for r in old), default=0) + 1
    if not current:
        return _snapshot(store, ds, next_number, hash_, patch), old
    cur = _dedup(store, history, ds, current)
    if _revision(cur) < next_number:
        cur = store.update(RESOURCE, {**cur, "revision": next_number})
    return cur, old


def _snapshot(store: Store, ds: JSON, number: int, hash_: str, patch: bytes) -> JSON:
    """snapshot: create the revision of the DaemonSet's template; a name taken by other data
    raises the DaemonSet's collision count."""
    meta = ds.get("metadata") or {}
    template_labels = ((ds.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    revision_meta: JSON = {
        "name": f"{meta.get('name')}-{hash_}",
        "namespace": meta.get("namespace") or "default",
        "labels": {**template_labels, UNIQUE_LABEL: hash_},
        "ownerReferences": [podutil.controller_ref(ds, API_VERSION, KIND)],
    }
    if meta.get("annotations"):
        revision_meta["annotations"] = dict(meta["annotations"])
    revision = {
        "apiVersion": API_VERSION,
        "kind": "ControllerRevision",
        "metadata": revision_meta,
        "data": get_patch(ds),
        "revision": number,
    }
    try:
        return store.create(RESOURCE, revision)
    except StatusError as err:
        if err.reason != "AlreadyExists":
            raise
    existing = store.get(RESOURCE, revision_meta["namespace"], revision_meta["name"])
    if matches(patch, existing):
        return existing
    latest = store.get(DAEMONSETS, revision_meta["namespace"], str(meta.get("name")))
    status = dict(latest.get("status") or {})
    if status.get("collisionCount") != (ds.get("status") or {}).get("collisionCount"):
        raise StaleCollisionCountError(f"found a stale collision count of DaemonSet {meta.get('name')!r}")
    status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
    store.update(DAEMONSETS, {**latest, "status": status})
    raise StaleCollisionCountError(f"revision {revision_meta['name']!r} already exists with other data")


def _dedup(store: Store, history: History, ds: JSON, current: list[JSON]) -> JSON:
    """dedupCurHistories: the highest revision is kept; the pods of the others are relabelled to
    its hash and the others deleted."""
    if len(current) == 1:
        return current[0]
    ordered = sort_revisions(current)
    keep = ordered[-1]
    keep_hash = ((keep.get("metadata") or {}).get("labels") or {}).get(UNIQUE_LABEL)
    for duplicate in ordered[:-1]:
        dup_hash = ((duplicate.get("metadata") or {}).get("labels") or {}).get(UNIQUE_LABEL)
        namespace = (ds.get("metadata") or {}).get("namespace") or "default"
        for pod in store.list("pods", namespace=namespace).items:
            pmeta = pod.get("metadata") or {}
            ref = podutil.controller_ref_of(pod)
            labels = pmeta.get("labels") or {}
            if (
                ref is None
                or ref.get("uid") != ds["metadata"].get("uid")
                or labels.get(UNIQUE_LABEL) != dup_hash
            ):
                continue
            store.update(
                "pods", {**pod, "metadata": {**pmeta, "labels": {**labels, UNIQUE_LABEL: keep_hash}}}
            )
        history.delete(duplicate)
    return keep


def cleanup_history(
    history: History, ds: Mapping[str, Any], old: Sequence[JSON], pods: Sequence[Mapping[str, Any]]
) -> None:
    """cleanupHistory: delete the oldest revisions no pod uses, beyond revisionHistoryLimit."""
    limit = (ds.get("spec") or {}).get("revisionHistoryLimit")
    limit = (
        limit if isinstance(limit, int) and not isinstance(limit, bool) else DEFAULT_REVISION_HISTORY_LIMIT
    )
    to_kill = len(old) - limit
    if to_kill <= 0:
        return
    live = {((p.get("metadata") or {}).get("labels") or {}).get(UNIQUE_LABEL) for p in pods}
    for revision in sort_revisions(old):
        if to_kill <= 0:
            break
        if ((revision.get("metadata") or {}).get("labels") or {}).get(UNIQUE_LABEL) in live:
            continue
        history.delete(revision)
        to_kill -= 1
