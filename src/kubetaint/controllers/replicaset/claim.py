"""The writes of ClaimPods (pkg/controller/controller_ref_manager.go) shared by the controllers
that adopt and release pods: a pod with its controller reference set (AdoptPod) or removed
(ReleasePod), and the adoption writes committed together."""

from __future__ import annotations

from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.store.interface import Store, Update

JSON = dict[str, Any]


def with_controller(pod: JSON, ref: JSON | None, only_ref: list[JSON] | None) -> JSON:
    """`pod` with its controller reference replaced by `ref` (removed for None); `only_ref` is
    the reference list `[ref]` to use when the pod has no other references."""
    meta = pod["metadata"]
    if only_ref and not meta.get("ownerReferences"):
        return {**pod, "metadata": {**meta, "ownerReferences": only_ref}}  # no other reference kept
    kept = [r for r in meta.get("ownerReferences") or [] if not r.get("controller")]
    refs = [*kept, ref] if kept and ref is not None else kept or only_ref or []
    new_meta = {**meta, "ownerReferences": refs}
    if not refs:
        del new_meta["ownerReferences"]
    return {**pod, "metadata": new_meta}


def commit_owners(store: Store, patched: list[JSON]) -> list[JSON | StatusError]:
    """One update of each pod of `patched`, in order, committed together: the stored pod or the
    refusal of each."""
    return store.commit([Update("pods", pod) for pod in patched])
