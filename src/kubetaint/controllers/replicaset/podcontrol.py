"""Creating and deleting the pods a workload controller owns, with its events (mirrors
pkg/controller/controller_utils.go RealPodControl.CreatePods/DeletePod); shared by the ReplicaSet
and DaemonSet controllers."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.controllers.replicaset import podutil
from kubetaint.core.names import generate_name
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import JSON, Store

#: A generated name that already exists is retried with a new suffix this many times in all.
_NAME_ATTEMPTS = 3


def create_owned_pod(
    store: Store,
    recorder: EventRecorder,
    rng: random.Random,
    owner: JSON,
    *,
    kind: str,
    template: Mapping[str, Any],
    api_version: str = "apps/v1",
    base: str | None = None,
) -> JSON | None:
    """Create a pod from `template` owned by `owner` (`<base><5 chars>`, `base` by default
    `<owner>-`); SuccessfulCreate or FailedCreate event on the owner. Returns the created pod, or
    None."""
    ref = podutil.controller_ref(owner, api_version, kind)
    base = base if base is not None else str(owner["metadata"]["name"]) + "-"
    for _ in range(_NAME_ATTEMPTS):
        pod = podutil.pod_from_template(template, owner, ref, generate_name(base, rng))
        try:
            created = store.create("pods", pod)
        except StatusError as err:
            if err.reason == "AlreadyExists":
                continue
            recorder.event(owner, "Warning", "FailedCreate", f"Error creating: {err.message}")
            return None
        recorder.event(owner, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
        return created
    return None


def delete_owned_pod(store: Store, recorder: EventRecorder, owner: JSON, pod: JSON) -> bool:
    """Delete `pod` (uid precondition); SuccessfulDelete, or FailedDelete unless it was already
    gone. Returns whether this call deleted it."""
    namespace, name = podutil.key_of(pod)
    try:
        store.delete("pods", namespace, name, uid=str(pod["metadata"].get("uid") or "") or None)
    except StatusError as err:
        if err.code != 404:
            recorder.event(owner, "Warning", "FailedDelete", f"Error deleting: {err.message}")
        return False
    recorder.event(owner, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
    return True
