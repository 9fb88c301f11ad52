"""Go's `omitempty` on the wire: the empty values kube-apiserver never writes back, because
decoding into the k8s.io/api Go types and encoding again drops them (`taints: []`,
`unschedulable: false`, `hostNetwork: false`, `nodeName: ""`, ...).

The table follows the struct tags of k8s.io/api/core/v1/types.go and metav1.ObjectMeta for the
objects kubetaint's controllers and clients write most: object metadata, node specs, pod specs
and statuses (and the pod templates of workloads), taints and tolerations, the data of ConfigMaps
and Secrets. A field is omitted when
its tag says `omitempty` and its value is Go's empty value for its type: `""` for a string,
`false` for a bool, `0` for an integer, an empty list or map, or null for a pointer. A pointer to
an empty value (`*bool` false, `*int64` 0) stays, as in Go. Fields without `omitempty` (a taint's
`key` and `effect`, a pod's `containers`) are kept whatever their value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]

#: Go types of omitempty fields: a plain string, bool or integer, a slice or map, a pointer.
STRING, BOOL, INT, COLLECTION, POINTER = "string", "bool", "int", "collection", "pointer"
Field = tuple[str, "Fields | None"]
Fields = dict[str, Field]

OBJECT_META: Fields = {
    **{
        name: (STRING, None)
        for name in ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
    },
    "generation": (INT, None),
    "deletionTimestamp": (POINTER, None),
    "deletionGracePeriodSeconds": (POINTER, None),
    **{
        name: (COLLECTION, None)
        for name in ("labels", "annotations", "ownerReferences", "finalizers", "managedFields")
    },
}
TAINT: Fields = {"value": (STRING, None), "timeAdded": (POINTER, None)}
TOLERATION: Fields = {
    **{name: (STRING, None) for name in ("key", "operator", "value", "effect")},
    "tolerationSeconds": (POINTER, None),
}
NODE_SPEC: Fields = {
    "podCIDR": (STRING, None),
    "podCIDRs": (COLLECTION, None),
    "providerID": (STRING, None),
    "unschedulable": (BOOL, None),
    "taints": (COLLECTION, TAINT),
    "configSource": (POINTER, None),
    "externalID": (STRING, None),
}
POD_SPEC: Fields = {
    **{
        name: (STRING, None)
        for name in (
            "restartPolicy",
            "dnsPolicy",
            "serviceAccountName",
            "serviceAccount",
            "nodeName",
            "hostname",
            "subdomain",
            "schedulerName",
            "priorityClassName",
        )
    },
    **{name: (BOOL, None) for name in ("hostNetwork", "hostPID", "hostIPC")},
    **{
        name: (COLLECTION, None)
        for name in (
            "volumes",
            "initContainers",
            "ephemeralContainers",
            "nodeSelector",
            "imagePullSecrets",
            "hostAliases",
            "readinessGates",
            "overhead",
            "topologySpreadConstraints",
            "schedulingGates",
            "resourceClaims",
        )
    },
    "tolerations": (COLLECTION, TOLERATION),
    **{
        name: (POINTER, None)
        for name in (
            "terminationGracePeriodSeconds",
            "activeDeadlineSeconds",
            "automountServiceAccountToken",
            "shareProcessNamespace",
            "securityContext",
            "affinity",
            "priority",
            "dnsConfig",
            "runtimeClassName",
            "enableServiceLinks",
            "preemptionPolicy",
            "setHostnameAsFQDN",
            "os",
            "hostUsers",
            "resources",
        )
    },
}
POD_STATUS: Fields = {
    **{
        name: (STRING, None)
        for name in (
            "phase",
            "message",
            "reason",
            "nominatedNodeName",
            "hostIP",
            "podIP",
            "qosClass",
            "resize",
        )
    },
    **{
        name: (COLLECTION, None)
        for name in (
            "conditions",
            "hostIPs",
            "podIPs",
            "initContainerStatuses",
            "containerStatuses",
            "ephemeralContainerStatuses",
            "resourceClaimStatuses",
        )
    },
    "startTime": (POINTER, None),
}
POD_TEMPLATE: Fields = {"metadata": (POINTER, OBJECT_META), "spec": (POINTER, POD_SPEC)}
_WORKLOAD: Fields = {
    "metadata": (POINTER, OBJECT_META),
    "spec": (POINTER, {"template": (POINTER, POD_TEMPLATE)}),
}

#: The top-level fields of each kind the table covers; other kinds get their metadata's.
KINDS: dict[str, Fields] = {
    "Node": {"metadata": (POINTER, OBJECT_META), "spec": (POINTER, NODE_SPEC)},
    "Pod": {"metadata": (POINTER, OBJECT_META), "spec": (POINTER, POD_SPEC), "status": (POINTER, POD_STATUS)},
    **{kind: _WORKLOAD for kind in ("Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job")},
    "CronJob": {"metadata": (POINTER, OBJECT_META), "spec": (POINTER, {"jobTemplate": (POINTER, _WORKLOAD)})},
    "ConfigMap": {
        "metadata": (POINTER, OBJECT_META),
        "data": (COLLECTION, None),
        "binaryData": (COLLECTION, None),
    },
    "Secret": {
        "metadata": (POINTER, OBJECT_META),
        "data": (COLLECTION, None),
        "stringData": (COLLECTION, None),
        "type": (STRING, None),
    },
}
_DEFAULT: Fields = {"metadata": (POINTER, OBJECT_META)}


def _empty(kind: str, value: Any) -> bool:
    if value is None:
        return True
    if kind == STRING:
        return bool(value == "")
    if kind == BOOL:
        return value is False
    if kind == INT:
        return bool(value == 0) and not isinstance(value, bool)
    if kind == COLLECTION:
        return isinstance(value, (list, dict)) and not value
    return False


def _omit(obj: Mapping[str, Any], fields: Fields) -> Mapping[str, Any]:
    """`obj` without its empty omitempty fields: the same object when nothing changes, else a
    shallow copy along the changed paths."""
    out: JSON | None = None
    for key, (kind, nested) in fields.items():
        if key not in obj:
            continue
        value = obj[key]
        if _empty(kind, value):
            if out is None:
                out = dict(obj)
            del out[key]
            continue
        if nested is None:
            continue
        if isinstance(value, Mapping):
            new_value: Any = _omit(value, nested)
        elif isinstance(value, list):
            items = [_omit(item, nested) if isinstance(item, Mapping) else item for item in value]
            new_value = items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        else:
            continue
        if new_value is not value:
            if out is None:
                out = dict(obj)
            out[key] = new_value
    return obj if out is None else out


def omit_empty(obj: JSON) -> JSON:
    """The object as kube-apiserver encodes it: empty omitempty fields dropped (the same dict when
    there are none)."""
    fields = KINDS.get(str(obj.get("kind") or ""), _DEFAULT)
    result = _omit(obj, fields)
    return result if isinstance(result, dict) else dict(result)
