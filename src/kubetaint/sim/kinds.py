"""The kinds a scenario may hold: apiVersion/kind ↔ stored resource, the order objects are loaded
in (what others refer to first), and kind names as users type them (`Pod`, `pods`, `po`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    resource: str  # the store's group-qualified plural
    namespaced: bool
    load_rank: int  # lower loads first: namespaces and classes before the pods that name them
    aliases: tuple[str, ...] = ()


KINDS: tuple[Kind, ...] = (
    Kind("Namespace", "v1", "namespaces", False, 0, ("namespace", "namespaces", "ns")),
    Kind(
        "PriorityClass",
        "scheduling.k8s.io/v1",
        "priorityclasses.scheduling.k8s.io",
        False,
        0,
        ("priorityclass", "priorityclasses", "pc"),
    ),
    Kind(
        "RuntimeClass",
        "node.k8s.io/v1",
        "runtimeclasses.node.k8s.io",
        False,
        0,
        ("runtimeclass", "runtimeclasses"),
    ),
    Kind(
        "StorageClass",
        "storage.k8s.io/v1",
        "storageclasses.storage.k8s.io",
        False,
        0,
        ("storageclass", "storageclasses", "sc"),
    ),
    Kind(
        "CSIDriver", "storage.k8s.io/v1", "csidrivers.storage.k8s.io", False, 0, ("csidriver", "csidrivers")
    ),
    Kind("Node", "v1", "nodes", False, 1, ("node", "nodes", "no")),
    Kind("CSINode", "storage.k8s.io/v1", "csinodes.storage.k8s.io", False, 2, ("csinode", "csinodes")),
    Kind(
        "PersistentVolume",
        "v1",
        "persistentvolumes",
        False,
        2,
        ("persistentvolume", "persistentvolumes", "pv"),
    ),
    Kind(
        "PersistentVolumeClaim",
        "v1",
        "persistentvolumeclaims",
        True,
        2,
        ("persistentvolumeclaim", "persistentvolumeclaims", "pvc"),
    ),
    Kind(
        "PodDisruptionBudget",
        "policy/v1",
        "poddisruptionbudgets.policy",
        True,
        2,
        ("poddisruptionbudget", "poddisruptionbudgets", "pdb"),
    ),
    Kind("Deployment", "apps/v1", "deployments.apps", True, 3, ("deployment", "deployments", "deploy")),
    Kind("ReplicaSet", "apps/v1", "replicasets.apps", True, 3, ("replicaset", "replicasets", "rs")),
    Kind("DaemonSet", "apps/v1", "daemonsets.apps", True, 3, ("daemonset", "daemonsets", "ds")),
    Kind("StatefulSet", "apps/v1", "statefulsets.apps", True, 3, ("statefulset", "statefulsets", "sts")),
    Kind("CronJob", "batch/v1", "cronjobs.batch", True, 3, ("cronjob", "cronjobs", "cj")),
    Kind("Job", "batch/v1", "jobs.batch", True, 3, ("job", "jobs")),
    Kind("Pod", "v1", "pods", True, 4, ("pod", "pods", "po")),
)

_BY_KIND = {k.kind: k for k in KINDS}
_BY_NAME = {alias: k for k in KINDS for alias in (*k.aliases, k.kind.lower(), k.resource)}


class KindError(ValueError):
    """An apiVersion/kind a scenario cannot hold."""


def kind_of(obj: Mapping[str, Any]) -> Kind:
    """The Kind of a manifest; KindError naming apiVersion and kind otherwise."""
    kind_name = obj.get("kind")
    if type(kind_name) is str:  # the usual manifest: its kind and apiVersion strings known
        known = _BY_KIND.get(kind_name)
        if known is not None and known.api_version == obj.get("apiVersion"):
            return known
    kind_name = str(obj.get("kind") or "")
    api_version = str(obj.get("apiVersion") or "")
    if not kind_name:
        raise KindError("kind: Required value: kind not set")
    if not api_version:
        raise KindError("apiVersion: Required value: apiVersion not set")
    kind = _BY_KIND.get(kind_name)
    if kind is None or kind.api_version != api_version:
        supported = ", ".join(f"{k.api_version}/{k.kind}" for k in KINDS)
        raise KindError(
            f'no kind "{kind_name}" is registered for version "{api_version}" (supported: {supported})'
        )
    return kind


def resolve_kind(name: str) -> Kind:
    """`Pod`, `pods`, `po`, `pods` or `replicasets.apps` → Kind; KindError otherwise."""
    kind = _BY_KIND.get(name) or _BY_NAME.get(name.lower())
    if kind is None:
        raise KindError(f'the server doesn\'t have a resource type "{name}"')
    return kind
