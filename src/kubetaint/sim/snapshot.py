"""Snapshots: a live cluster's scheduling-relevant objects as ONE Scenario document
(docs/scenario.md), and the loader `whatif` uses, which also takes a `kubectl get … -o json`
v1 List saved by hand.

The document is `kind: Scenario` whose `spec.objects` hold the captured objects, cleaned into
create requests, and whose `metadata.annotations["kubetaint.dev/snapshot"]` is a JSON object with
the capture time, the server version, the format version and every node's Lease renewTime.

How a snapshot maps onto the simulator (decided here, documented in the report notes):
- Controller ownerReferences (ReplicaSet, Deployment, DaemonSet, Node) are dropped: the
  simulator's controllers adopt the orphans their selectors match, exactly as upstream's
  ClaimPods does, and so get the new uids the simulator gives their owners.
- StatefulSets are kept as objects. When loaded, their pods' references to them are dropped
  (the simulated StatefulSet gets a new uid) and the StatefulSet controller adopts each pod that
  holds one of its ordinals' names; a pod of the captured update revision is relabelled with
  the simulator's name of that revision (`align_stateful_set_revisions`), so it is not rolled.
  A snapshot written before StatefulSets were kept records them only in the annotation
  (`statefulSets`): each such StatefulSet is rebuilt from its lowest-ordinal pod (template and
  selector from the pod's labels, `Parallel`, `OnDelete`).
- Terminating pods (deletionTimestamp set) and finished pods (Succeeded/Failed) are left out.
- The system namespaces and the built-in `system-` PriorityClasses exist in every simulated
  cluster already and are not duplicated.
- A node whose Ready condition is not True gets a fault at t=0 (Unknown → `stop`, False →
  `not-ready`), so its hollow kubelet reports what the real node did.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubetaint.api.jsonview import as_list as _list
from kubetaint.api.strictload import InputError, looks_like_json, parse_yaml, read_input, shown_name
from kubetaint.api.validation.kinds import SYSTEM_PRIORITY_CLASSES
from kubetaint.controlplane import SYSTEM_NAMESPACES
from kubetaint.core.heap import collector_paused
from kubetaint.sim.doccopy import copy_document
from kubetaint.sim.scenario import API_VERSION, Scenario, ScenarioError, load_scenario, parse_scenario
from kubetaint.sim.source import Duplicate, Source, SourceError, load_text
from kubetaint.store.interface import JSON

SNAPSHOT_ANNOTATION = "kubetaint.dev/snapshot"
#: The snapshot format this version writes and reads.
SNAPSHOT_VERSION = 1
#: kind → apiVersion of every kind a snapshot keeps.
KEPT_KINDS: dict[str, str] = {
    "Namespace": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "RuntimeClass": "node.k8s.io/v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "Node": "v1",
    "CSINode": "storage.k8s.io/v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "PodDisruptionBudget": "policy/v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Pod": "v1",
}
_ADOPTING_OWNERS = ("ReplicaSet", "Deployment", "DaemonSet", "Node", "ReplicationController")
_SERVER_META = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink")


class SnapshotError(ValueError):
    """A file that is not a snapshot (or of an unsupported version); one clear line."""


@dataclass
class StatefulSetRef:
    """A StatefulSet recorded only in the annotation (snapshots written before they were kept)."""

    namespace: str
    name: str
    replicas: int


@dataclass
class SnapshotInfo:
    """The annotation of a snapshot: when, from which server, and what it could not hold."""

    captured_at: str | None = None
    server_version: str = ""
    leases: dict[str, str] = field(default_factory=dict)
    stateful_sets: list[StatefulSetRef] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    #: (namespace, StatefulSet name) → the update revision its pods carry in the snapshot
    #: (read from the loaded objects, never written to the annotation).
    revisions: dict[tuple[str, str], str] = field(default_factory=dict)

    def as_json(self) -> JSON:
        return {
            "version": SNAPSHOT_VERSION,
            "capturedAt": self.captured_at,
            "serverVersion": self.server_version,
            "leases": dict(sorted(self.leases.items())),
            "statefulSets": [
                {"namespace": s.namespace, "name": s.name, "replicas": s.replicas} for s in self.stateful_sets
            ],
            "skipped": dict(sorted(self.skipped.items())),
        }


# building ----------------------------------------------------------------------------------------


def build_snapshot(
    objects: Iterable[Mapping[str, Any]], info: SnapshotInfo, *, name: str = "snapshot"
) -> JSON:
    """The Scenario document of captured objects (each with kind and apiVersion set)."""
    kept: list[JSON] = []
    events: list[JSON] = []
    for obj in objects:
        kind = str(obj.get("kind") or "")
        if kind == "Lease":
            _note_lease(obj, info)
            continue
        cleaned = clean_object(obj)
        if cleaned is None:
            info.skipped[kind or "unknown"] = info.skipped.get(kind or "unknown", 0) + 1
            continue
        kept.append(cleaned)
        if kind == "Node":
            events.extend(_node_fault_events(cleaned))
    annotations = {SNAPSHOT_ANNOTATION: json.dumps(info.as_json(), sort_keys=True)}
    spec: JSON = {"objects": kept}
    if events:
        spec["events"] = events
    return {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": name, "annotations": annotations},
        "spec": spec,
    }


def clean_object(obj: Mapping[str, Any]) -> JSON | None:
    """A captured object as a create request, or None when a snapshot leaves it out."""
    kind = str(obj.get("kind") or "")
    if kind not in KEPT_KINDS:
        return None
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_META}
    name = str(meta.get("name") or "")
    if kind == "Namespace" and name in SYSTEM_NAMESPACES:
        return None
    if kind == "PriorityClass" and name in SYSTEM_PRIORITY_CLASSES:
        return None
    out: JSON = {**obj, "apiVersion": KEPT_KINDS[kind], "kind": kind}
    finished = (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    if kind == "Pod" and (meta.get("deletionTimestamp") or finished):
        return None
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("kind") not in _ADOPTING_OWNERS]
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    out["metadata"] = meta
    if kind == "Node":
        status = {k: v for k, v in (obj.get("status") or {}).items() if k not in ("images", "volumesInUse")}
        out["status"] = status
    if kind == "PersistentVolume":
        # the claim gets a new uid when the snapshot is loaded: the binding is kept by the
        # claim's name (the persistent volume controller completes it again)
        spec = dict(obj.get("spec") or {})
        ref = spec.get("claimRef")
        if isinstance(ref, Mapping):
            spec["claimRef"] = {k: v for k, v in ref.items() if k not in ("uid", "resourceVersion")}
            out["spec"] = spec
    return out


def _note_lease(lease: Mapping[str, Any], info: SnapshotInfo) -> None:
    meta = lease.get("metadata") or {}
    renew = (lease.get("spec") or {}).get("renewTime")
    if meta.get("namespace") == "kube-node-lease" and renew:
        info.leases[str(meta.get("name"))] = str(renew)


def _node_fault_events(node: Mapping[str, Any]) -> list[JSON]:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") != "Ready":
            continue
        status = condition.get("status")
        name = node["metadata"]["name"]
        if status == "Unknown":
            return [{"at": 0, "fault": "stop", "node": name}]
        if status == "False":
            return [{"at": 0, "fault": "not-ready", "node": name}]
    return []


# loading -----------------------------------------------------------------------------------------


def from_list(document: Mapping[str, Any], *, name: str = "snapshot") -> JSON:
    """A v1 List (`kubectl get nodes,pods,… -o json`) as a snapshot Scenario document."""
    items = document.get("items")
    if not isinstance(items, list):
        raise SnapshotError("a v1 List needs an items list")
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise SnapshotError(f"items[{index}]: expected a Kubernetes object, got {type(item).__name__}")
    return build_snapshot(items, SnapshotInfo(), name=name)


_POD_IDENTITY_LABELS = (
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
)


def _mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is an object, else an empty one (malformed input is reported by the
    scenario parser, with its line, after this module's rewriting has left it alone)."""
    return value if _is_mapping(value) else {}


def _is_mapping(value: Any) -> bool:
    """isinstance(value, Mapping), a parsed document's plain dict told first."""
    return type(value) is dict or isinstance(value, Mapping)


def _sts_controller(obj: Mapping[str, Any]) -> str | None:
    refs = _mapping(obj.get("metadata")).get("ownerReferences")
    if not refs:  # (most pods: none at all)
        return None
    for ref in _list(refs):
        if _is_mapping(ref) and ref.get("kind") == "StatefulSet" and ref.get("controller"):
            return str(ref.get("name") or "")
    return None


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = _mapping(obj.get("metadata"))
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _ordinal(pod: Mapping[str, Any]) -> int:
    tail = _key(pod)[1].rpartition("-")[2]
    return int(tail) if tail.isdigit() else -1


def _rebuilt_stateful_set(ref: StatefulSetRef, pods: list[Mapping[str, Any]]) -> JSON | None:
    """A StatefulSet recorded only in the annotation, rebuilt from its lowest-ordinal pod; None
    when it has no pod with labels to select by."""
    if not pods:
        return None
    pod = min(pods, key=_ordinal)
    labels = dict(_mapping(_mapping(pod.get("metadata")).get("labels")))
    revision = str(labels.get("controller-revision-hash") or "")
    labels = {k: v for k, v in labels.items() if k not in _POD_IDENTITY_LABELS}
    if not labels:
        return None
    pod_spec = {k: v for k, v in _mapping(pod.get("spec")).items() if k != "nodeName"}
    sts: JSON = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": ref.name, "namespace": ref.namespace},
        "spec": {
            "replicas": ref.replicas,
            "selector": {"matchLabels": labels},
            "serviceName": str(pod_spec.get("subdomain") or ""),
            "podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "OnDelete"},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }
    if revision:
        sts["status"] = {"updateRevision": revision}
    return sts


def with_stateful_sets(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """A snapshot document as it loads: the annotation's StatefulSets without an object rebuilt
    as objects, and pods' references to StatefulSets dropped (their controller adopts them by
    name). Anything else (not a snapshot, no StatefulSet pods) is returned as it is."""
    spec = document.get("spec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("objects"), list):
        return document
    objects: list[Any] = spec["objects"]
    owned: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for obj in objects:
        if type(obj) is dict:  # (the usual object, a pod without owner references, told inline)
            meta = obj.get("metadata")
            if type(meta) is dict and not meta.get("ownerReferences"):
                continue
        if _is_mapping(obj) and obj.get("kind") == "Pod":
            owner = _sts_controller(obj)
            if owner is not None:
                owned.setdefault((_key(obj)[0], owner), []).append(obj)
    raw = _mapping(_mapping(document.get("metadata")).get("annotations")).get(SNAPSHOT_ANNOTATION)
    try:
        recorded = _list(_mapping(json.loads(raw)).get("statefulSets")) if isinstance(raw, str) else []
    except ValueError:
        recorded = []  # (snapshot_info reports it)
    if not owned and not recorded:
        return document
    present = {_key(o) for o in objects if isinstance(o, Mapping) and o.get("kind") == "StatefulSet"}
    added: list[JSON] = []
    for entry in recorded if isinstance(recorded, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("replicas", 0), int):
            continue
        ref = StatefulSetRef(
            str(entry.get("namespace") or "default"), str(entry.get("name")), int(entry.get("replicas") or 0)
        )
        if (ref.namespace, ref.name) in present:
            continue
        rebuilt = _rebuilt_stateful_set(ref, owned.get((ref.namespace, ref.name), []))
        if rebuilt is not None:
            added.append(rebuilt)
    kept: list[Any] = []
    for obj in objects:
        if isinstance(obj, Mapping) and obj.get("kind") == "Pod" and _sts_controller(obj) is not None:
            meta = dict(_mapping(obj.get("metadata")))
            refs = [r for r in _list(meta.get("ownerReferences")) if _mapping(r).get("kind") != "StatefulSet"]
            if refs:
                meta["ownerReferences"] = refs
            else:
                meta.pop("ownerReferences", None)
            kept.append({**obj, "metadata": meta})
        else:
            kept.append(obj)
    return {**document, "spec": {**spec, "objects": kept + added}}


def _revisions(document: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    revisions = {}
    for obj in _list(_mapping(document.get("spec")).get("objects")):
        if _is_mapping(obj) and obj.get("kind") == "StatefulSet":
            revision = _mapping(obj.get("status")).get("updateRevision")
            if isinstance(revision, str) and revision:
                revisions[_key(obj)] = revision
    return revisions


def snapshot_info(scenario: Scenario) -> SnapshotInfo:
    """The snapshot annotation of a loaded scenario (an empty info for a plain scenario)."""
    source = scenario.source
    data = source.data if source is not None else {}
    raw = ((data.get("metadata") or {}).get("annotations") or {}).get(SNAPSHOT_ANNOTATION)
    if raw is None:
        return SnapshotInfo(revisions=_revisions(data))
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        raise SnapshotError(f"metadata.annotations[{SNAPSHOT_ANNOTATION}]: not a JSON object") from None
    if not isinstance(parsed, Mapping):
        raise SnapshotError(f"metadata.annotations[{SNAPSHOT_ANNOTATION}]: not a JSON object")
    version = parsed.get("version")
    if version != SNAPSHOT_VERSION:
        raise SnapshotError(
            f"unsupported snapshot version {version!r} (this kubetaint reads version {SNAPSHOT_VERSION})"
        )
    return SnapshotInfo(
        captured_at=parsed.get("capturedAt"),
        server_version=str(parsed.get("serverVersion") or ""),
        leases=dict(parsed.get("leases") or {}),
        stateful_sets=[
            StatefulSetRef(str(s["namespace"]), str(s["name"]), int(s["replicas"]))
            for s in parsed.get("statefulSets") or []
        ],
        skipped=dict(parsed.get("skipped") or {}),
        revisions=_revisions(data),
    )


def load_snapshot(path: str | Path) -> tuple[Scenario, SnapshotInfo]:
    """A snapshot file (or a scenario, or a saved v1 List) as a scenario plus its snapshot info.

    SnapshotError/ScenarioError name the file when it is not one.
    """
    name = shown_name(str(path))
    try:
        text = read_input(str(path))
    except InputError as err:
        raise SnapshotError(str(err)) from None
    try:
        with collector_paused():  # a large file parses into millions of long-lived objects
            source = _manifests_as_list(text, name) or load_text(text, name)
    except SourceError as err:
        raise SnapshotError(str(err)) from None
    data = source.data
    if not isinstance(data, Mapping):
        raise SnapshotError(f"{name}: not a scenario or snapshot: expected a Scenario or a v1 List object")
    if data.get("kind") == "List" and data.get("apiVersion") == "v1":
        if source.duplicates:
            raise SnapshotError("\n".join(_duplicate_line(source, d.path, d.line) for d in source.duplicates))
        try:
            data = from_list(data, name=Path(name).stem or "snapshot")
        except SnapshotError as err:
            raise SnapshotError(f"{name}: {err}") from None
        with collector_paused():  # as load_scenario; messages name the file
            scenario = parse_scenario(Source(name, copy_document(dict(with_stateful_sets(data)))))
    elif data.get("kind") == "Scenario" or data.get("apiVersion") == API_VERSION:
        # (a scenario with a bad kind gets the scenario parser's message, with its line)
        source.data = with_stateful_sets(data)
        with collector_paused():  # as load_scenario, from the text already parsed
            scenario = parse_scenario(source)
    else:
        raise SnapshotError(
            f"{name}: not a scenario or snapshot: {_kind_shown(data.get('kind'))},"
            " expected Scenario or a v1 List"
        )
    try:
        return scenario, snapshot_info(scenario)
    except SnapshotError as err:
        raise SnapshotError(f"{name}: {err}") from None


def _kind_shown(kind: Any) -> str:
    """The kind a document gives, for a message: `kind "Pod"`, or `no kind`."""
    return f"kind {json.dumps(kind)}" if kind not in (None, "") else "no kind"


def _manifests_as_list(text: str, name: str) -> Source | None:
    """A multi-document YAML file of manifests (`kubectl get ... -o yaml` of several kinds, or
    manifests joined by `---`) read as the v1 List of its documents (Lists expanded); None for
    anything else (one document, or a document that is a Scenario)."""
    if looks_like_json(text, name) or "---" not in text:
        return None
    try:
        documents = [d for d in parse_yaml(text, name) if d.data is not None]
    except InputError as err:
        raise SourceError(str(err)) from None
    if len(documents) < 2:
        return None
    items: list[Any] = []
    for doc in documents:
        data = doc.data
        if not isinstance(data, Mapping) or data.get("kind") == "Scenario":
            return None  # (the scenario loader says what is wrong)
        if str(data.get("kind") or "").endswith("List") and isinstance(data.get("items"), list):
            items.extend(data["items"])
        else:
            items.append(data)
    source = Source(name, {"apiVersion": "v1", "kind": "List", "items": items})
    source.duplicates = [Duplicate([d.key], d.line) for doc in documents for d in doc.yaml_duplicates]
    return source


def _duplicate_line(source: Source, path: list[str | int], line: int | None) -> str:
    if line is not None:
        return f"{source.name}:{line}: duplicate field {json.dumps(path[-1])}"
    dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    return f"{source.where(path)}{dotted}: duplicate field"


def load_snapshot_document(document: Mapping[str, Any]) -> tuple[Scenario, SnapshotInfo]:
    """A snapshot document already in memory (a fresh capture) as a scenario plus its info."""
    scenario = load_scenario(with_stateful_sets(document))
    return scenario, snapshot_info(scenario)


__all__ = [
    "SNAPSHOT_ANNOTATION",
    "SNAPSHOT_VERSION",
    "ScenarioError",
    "SnapshotError",
    "SnapshotInfo",
    "StatefulSetRef",
    "build_snapshot",
    "clean_object",
    "from_list",
    "load_snapshot",
    "load_snapshot_document",
    "snapshot_info",
    "with_stateful_sets",
]
