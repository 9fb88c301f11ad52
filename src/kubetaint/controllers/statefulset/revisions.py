"""A StatefulSet's ControllerRevisions, as stateful_set_utils.go (getPatch, newRevision,
ApplyRevision, nextRevision) and stateful_set_control.go (getStatefulSetRevisions,
truncateHistory): the update revision is the set's template, the current revision the one its
status names, and history beyond `revisionHistoryLimit` that no pod uses is deleted."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.controllers import history
from kubetaint.controllers.history import History

JSON = dict[str, Any]
API_VERSION = "apps/v1"
KIND = "StatefulSet"
REVISION_LABEL = "controller-revision-hash"
DEFAULT_REVISION_HISTORY_LIMIT = 10


def get_patch(sts: Mapping[str, Any]) -> JSON:
    """getPatch: `{"spec":{"template":{..., "$patch":"replace"}}}`."""
    template = copy.deepcopy((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def collision_count(sts: Mapping[str, Any]) -> int:
    value = (sts.get("status") or {}).get("collisionCount")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def update_revision_name(sts: Mapping[str, Any]) -> str:
    """The name the set's template gets as a new revision (with its collision count)."""
    name = str((sts.get("metadata") or {}).get("name") or "")
    return history.revision_name(name, history.hash_controller_revision(get_patch(sts), collision_count(sts)))


def new_revision(sts: Mapping[str, Any], revision: int, collisions: int) -> JSON:
    """newRevision: the set's template as a revision, with the set's annotations."""
    labels = ((sts.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    result = history.new_controller_revision(
        sts, API_VERSION, KIND, labels, get_patch(sts), revision, collisions
    )
    annotations = (sts.get("metadata") or {}).get("annotations")
    if annotations:
        result["metadata"]["annotations"] = dict(annotations)
    return result


def template_of(revision: Mapping[str, Any]) -> JSON:
    """The pod template a revision restores (ApplyRevision's spec.template)."""
    data = revision.get("data") or {}
    template = ((data.get("spec") or {}) if isinstance(data, Mapping) else {}).get("template") or {}
    return {k: v for k, v in template.items() if k != "$patch"}


def statefulset_revisions(
    controller_history: History, sts: Mapping[str, Any], revisions: Sequence[JSON]
) -> tuple[JSON, JSON, int]:
    """getStatefulSetRevisions: (current revision, update revision, collision count). The update
    revision is the last revision when equal to the template, an earlier equal one renumbered
    (a rollback), else a new one; the current one is the status' while it exists."""
    collisions = collision_count(sts)
    update = new_revision(sts, history.next_revision(revisions), collisions)
    equal = history.find_equal_revisions(revisions, update)
    if equal and history.equal_revision(revisions[-1], equal[-1]):
        update = revisions[-1]
    elif equal:
        update = controller_history.update_revision(equal[-1], int(update["revision"]))
    else:
        update, collisions = controller_history.create(sts, update, collisions)
    current_name = (sts.get("status") or {}).get("currentRevision")
    current = next((r for r in revisions if r["metadata"].get("name") == current_name), None)
    return (current if current is not None else update), update, collisions


def truncate_history(  # noqa: PLR0917 (upstream's truncateHistory parameters)
    controller_history: History,
    sts: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    revisions: Sequence[JSON],
    current: Mapping[str, Any],
    update: Mapping[str, Any],
) -> None:
    """truncateHistory: delete the oldest revisions that are neither current, update nor a pod's,
    beyond revisionHistoryLimit."""
    live = {current["metadata"].get("name"), update["metadata"].get("name")}
    live.update(((p.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL) for p in pods)
    old = [r for r in revisions if r["metadata"].get("name") not in live]
    limit = (sts.get("spec") or {}).get("revisionHistoryLimit")
    limit = (
        limit if isinstance(limit, int) and not isinstance(limit, bool) else DEFAULT_REVISION_HISTORY_LIMIT
    )
    for revision in old[: max(0, len(old) - limit)]:
        controller_history.delete(revision)
