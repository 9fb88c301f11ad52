"""Encoding objects and changes for etcd v3's JSON gateway (mirrors apiserver
pkg/storage/etcd3/store.go and event.go): values are the object's JSON without resourceVersion
(the version is the key's mod_revision, set on decode), keys and values are base64 in requests,
64-bit integers are decimal strings, and fields at their default value are omitted.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from kubetaint.store.interface import JSON, WatchEvent

#: Resource names for key segments (`/registry/<plural>/...`), which drop the API group.
BUILTIN_RESOURCES = {
    plural.partition(".")[0]: plural
    for plural in (
        "deployments.apps",
        "replicasets.apps",
        "daemonsets.apps",
        "statefulsets.apps",
        "controllerrevisions.apps",
        "poddisruptionbudgets.policy",
        "leases.coordination.k8s.io",
        "jobs.batch",
        "cronjobs.batch",
        "priorityclasses.scheduling.k8s.io",
        "runtimeclasses.node.k8s.io",
        "csinodes.storage.k8s.io",
        "storageclasses.storage.k8s.io",
    )
}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def prefix_end(prefix: str) -> str:
    """The range end that selects every key starting with `prefix` (etcd's prefix convention)."""
    raw = bytearray(prefix.encode())
    raw[-1] += 1
    return base64.b64encode(bytes(raw)).decode()


def encode_value(obj: JSON) -> str:
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    return b64(json.dumps({**obj, "metadata": meta}, separators=(",", ":"), ensure_ascii=False))


def decode_kv(kv: dict[str, Any]) -> JSON:
    """The object stored in `kv`, with resourceVersion = the key's mod_revision."""
    obj: JSON = json.loads(base64.b64decode(kv["value"]))
    obj.setdefault("metadata", {})["resourceVersion"] = str(kv["mod_revision"])
    return obj


def _segments(key: str, prefix: str) -> list[str]:
    """The key's parts after the prefix; a custom resource's `<group>/<plural>` (a group always
    holds a dot, a plural never does) joined into one."""
    parts = key[len(prefix) :].strip("/").split("/")
    if len(parts) >= 2 and "." in parts[0]:
        parts = [f"{parts[0]}/{parts[1]}", *parts[2:]]
    return parts


def resource_of_key(key: str, prefix: str, known: dict[str, str]) -> str:
    segment = _segments(key, prefix)[0]
    group, slash, plural = segment.partition("/")
    return known.get(segment, f"{plural}.{group}" if slash else segment)


def to_watch_event(raw: dict[str, Any], resource: str, prefix: str) -> WatchEvent:
    """An etcd watch event (with prev_kv) as a store WatchEvent (etcd3 event.go parseEvent)."""
    kv = raw["kv"]
    revision = int(kv["mod_revision"])
    prev = raw.get("prev_kv")
    old = decode_kv(prev) if prev and prev.get("value") else None
    if raw.get("type") == "DELETE":
        if old is None:  # the previous value was compacted away: all we know is the key
            namespace, name = _key_names(unb64(kv["key"]), prefix)
            old = {"metadata": {"name": name, **({"namespace": namespace} if namespace else {})}}
        gone = {**old, "metadata": {**old["metadata"], "resourceVersion": str(revision)}}
        return WatchEvent("DELETED", resource, gone, revision, old)
    obj = decode_kv(kv)
    if int(kv.get("create_revision", 0)) == revision:
        return WatchEvent("ADDED", resource, obj, revision)
    return WatchEvent("MODIFIED", resource, obj, revision, old)


def _key_names(key: str, prefix: str) -> tuple[str, str]:
    parts = _segments(key, prefix)  # segment, [namespace,] name
    return (parts[1], parts[2]) if len(parts) >= 3 else ("", parts[-1])
