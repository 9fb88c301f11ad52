"""StatefulSet pod identity and state (mirrors pkg/controller/statefulset/stateful_set_utils.go:
getParentNameAndOrdinal, newStatefulSetPod, updateIdentity, updateStorage, getPersistentVolumeClaimName,
isRunningAndReady, isRunningAndAvailable, isFailed, isSucceeded, isTerminating)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.statefulset import revisions

JSON = dict[str, Any]
REVISION_LABEL = revisions.REVISION_LABEL
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def update_revision(sts: Mapping[str, Any]) -> str:
    """The revision name of the set's current template (`<set>-<hash>`, as getStatefulSetRevisions
    names a new update revision)."""
    return revisions.update_revision_name(sts)


def parent_and_ordinal(pod: Mapping[str, Any]) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("", -1) when the name is not `<parent>-<ordinal>`."""
    name = str((pod.get("metadata") or {}).get("name") or "")
    match = _ORDINAL.match(name)
    if match is None:
        return "", -1
    try:
        return match.group(1), int(match.group(2))
    except ValueError:
        return "", -1


def ordinal_of(pod: Mapping[str, Any]) -> int:
    return parent_and_ordinal(pod)[1]


def is_member(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """isMemberOf: the pod's name is `<set>-<ordinal>`."""
    return parent_and_ordinal(pod)[0] == (sts.get("metadata") or {}).get("name")


def pod_name(sts: Mapping[str, Any], ordinal: int) -> str:
    return f"{(sts.get('metadata') or {}).get('name')}-{ordinal}"


def claim_name(sts: Mapping[str, Any], claim: Mapping[str, Any], ordinal: int) -> str:
    """getPersistentVolumeClaimName: `<claim>-<set>-<ordinal>`."""
    return f"{(claim.get('metadata') or {}).get('name')}-{pod_name(sts, ordinal)}"


def claims_for(sts: Mapping[str, Any], ordinal: int) -> list[JSON]:
    """getPersistentVolumeClaims: each claim template as the claim of one ordinal, named
    `<claim>-<set>-<ordinal>` in the set's namespace, with the set's selector's matchLabels."""
    spec = sts.get("spec") or {}
    match = ((spec.get("selector") or {}).get("matchLabels")) or {}
    namespace = (sts.get("metadata") or {}).get("namespace", "default")
    claims = []
    for template in spec.get("volumeClaimTemplates") or []:
        meta = dict(template.get("metadata") or {})
        meta["name"] = claim_name(sts, template, ordinal)
        meta["namespace"] = namespace
        meta["labels"] = {**(meta.get("labels") or {}), **match}
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": meta,
                "spec": dict(template.get("spec") or {}),
            }
        )
    return claims


def revision_of(pod: Mapping[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(REVISION_LABEL) or "")


def new_pod(sts: Mapping[str, Any], template: Mapping[str, Any], ordinal: int, revision: str) -> JSON:
    """newVersionedStatefulSetPod: the template's pod named `<set>-<ordinal>`, owned by the set,
    with its identity (hostname, subdomain, pod-name and pod-index labels), its claims' volumes
    and the revision label."""
    name = pod_name(sts, ordinal)
    tmeta = template.get("metadata") or {}
    labels = dict(tmeta.get("labels") or {})
    labels[POD_NAME_LABEL] = name
    labels[POD_INDEX_LABEL] = str(ordinal)
    labels[REVISION_LABEL] = revision
    meta: JSON = {
        "name": name,
        "namespace": (sts.get("metadata") or {}).get("namespace", "default"),
        "labels": labels,
        "ownerReferences": [podutil.controller_ref(sts, "apps/v1", "StatefulSet")],
    }
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    spec = dict(template.get("spec") or {})
    spec["hostname"] = name
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        spec["subdomain"] = service
    claims = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
    if claims:
        volumes = {str(v.get("name")): v for v in spec.get("volumes") or []}
        for claim in claims:
            claim_volume = str((claim.get("metadata") or {}).get("name") or "")
            volumes[claim_volume] = {
                "name": claim_volume,
                "persistentVolumeClaim": {"claimName": claim_name(sts, claim, ordinal)},
            }
        spec["volumes"] = list(volumes.values())
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_terminating(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_running_and_ready(pod: Mapping[str, Any]) -> bool:
    return phase(pod) == "Running" and podutil.is_ready(pod)


def is_running_and_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    return phase(pod) == "Running" and podutil.is_available(pod, min_ready_seconds, now)
