"""The NodeRestriction admission plugin: a `system:node:<name>` user may only write its own Node
(never its taints, its configSource or restricted labels), its own Lease in kube-node-lease,
mirror pods bound to itself and the status and evictions of pods bound to itself
(mirrors plugin/pkg/admission/noderestriction/admission.go).

The writer is the request's user (`Attributes.user`): the plugin acts on requests of node users
only; the control plane's own components (no user) and every other user pass. It is in the chain
when the API server authorizes with the Node mode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from kubetaint.admission.attributes import CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.errors import forbidden_resource, not_found
from kubetaint.admission.lookup import ObjectLookup
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.api.jsonview import meta_of

JSON = dict[str, Any]
Operation = Literal["CREATE", "UPDATE", "DELETE", "CONNECT"]
PLUGIN_NAME = "NodeRestriction"
NODE_LEASE_NAMESPACE = "kube-node-lease"
LEASES = "leases.coordination.k8s.io"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
NODE_RESTRICTION_LABEL_NAMESPACE = "node-restriction.kubernetes.io"
#: kubelet/pkg/apis.IsKubeletLabel: the labels a kubelet may set on its Node.
KUBELET_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    }
)
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _spec(obj: JSON | None) -> JSON:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _label_namespace(key: str) -> str:
    prefix, sep, _ = key.partition("/")
    return prefix if sep else ""


def _in_namespace(namespace: str, wanted: str) -> bool:
    return namespace == wanted or namespace.endswith("." + wanted)


def is_kubelet_label(key: str) -> bool:
    namespace = _label_namespace(key)
    return key in KUBELET_LABELS or any(_in_namespace(namespace, ns) for ns in KUBELET_LABEL_NAMESPACES)


def forbidden_labels(new: JSON | None, old: JSON | None) -> list[str]:
    """The added, removed or changed label keys a node may not touch, sorted."""
    a = new if isinstance(new, dict) else {}
    b = old if isinstance(old, dict) else {}
    modified = {k for k in a.keys() | b.keys() if a.get(k) != b.get(k) or (k in a) != (k in b)}
    out = []
    for key in modified:
        namespace = _label_namespace(key)
        kubernetes = any(_in_namespace(namespace, ns) for ns in ("kubernetes.io", "k8s.io"))
        if _in_namespace(namespace, NODE_RESTRICTION_LABEL_NAMESPACE) or (
            kubernetes and not is_kubelet_label(key)
        ):
            out.append(key)
    return sorted(out)


def _pod_references(pod: JSON) -> str | None:
    """The first kind of API object a mirror pod may not reference, or None."""
    spec = _spec(pod)
    if spec.get("serviceAccountName"):
        return "service account"
    containers = [
        c
        for key in ("containers", "initContainers", "ephemeralContainers")
        for c in spec.get(key) or []
        if isinstance(c, dict)
    ]
    env = [e for c in containers for e in c.get("env") or [] if isinstance(e, dict)]
    env_from = [e for c in containers for e in c.get("envFrom") or [] if isinstance(e, dict)]
    volumes = [v for v in spec.get("volumes") or [] if isinstance(v, dict)]
    projected = [
        s for v in volumes for s in (v.get("projected") or {}).get("sources") or [] if isinstance(s, dict)
    ]
    if (
        spec.get("imagePullSecrets")
        or any("secret" in v for v in volumes + projected)
        or any("secretKeyRef" in (e.get("valueFrom") or {}) for e in env)
        or any("secretRef" in e for e in env_from)
    ):
        return "secrets"
    if (
        any("configMap" in v for v in volumes + projected)
        or any("configMapKeyRef" in (e.get("valueFrom") or {}) for e in env)
        or any("configMapRef" in e for e in env_from)
    ):
        return "configmaps"
    if any("clusterTrustBundle" in s for s in projected):
        return "clustertrustbundles"
    if any("persistentVolumeClaim" in v for v in volumes):
        return "persistentvolumeclaims"
    return None


class NodeRestriction(AdmissionPlugin):
    """Refuses a node user's writes beyond its own Node, Lease and pods (upstream's plugin is a
    mutating one that changes nothing: it runs in the Admit phase, before object validation)."""

    name: ClassVar[str] = PLUGIN_NAME
    operations: ClassVar[frozenset[str]] = frozenset({CREATE, UPDATE, DELETE})
    mutating: ClassVar[bool] = True
    resources: ClassVar[frozenset[str] | None] = frozenset({"pods", "nodes", LEASES})
    looks_up = frozenset({"nodes"})
    users_only: ClassVar[bool] = True

    def admit(self, attrs: Attributes, lookup: ObjectLookup) -> Mapping[str, Any] | None:
        user = attrs.user
        node = user.node_name() if user is not None else None
        if node is None or user is None:
            return attrs.object
        old = dict(attrs.old_object) if attrs.old_object is not None else None
        obj = dict(attrs.object) if attrs.object is not None else old
        operation: Operation = attrs.operation  # type: ignore[assignment]
        write = Write(user.name, operation, attrs.resource, attrs.subresource, obj or {}, old)

        def node_uid(name: str) -> str | None:
            found = lookup.get("nodes", "", name)
            return None if found is None else str((found.get("metadata") or {}).get("uid") or "")

        reason = check(node, write, node_uid)
        if reason:
            raise forbidden_resource(attrs.resource, write.name, reason)
        return attrs.object


@dataclass(frozen=True, slots=True)
class Write:
    """admission.Attributes: who writes what (`old` is the stored object, None on CREATE)."""

    user_name: str
    operation: Operation
    resource: str
    subresource: str
    obj: JSON
    old: JSON | None

    @property
    def name(self) -> str:
        return str(meta_of(self.old).get("name") or meta_of(self.obj).get("name") or "")

    @property
    def namespace(self) -> str:
        return str(meta_of(self.old).get("namespace") or meta_of(self.obj).get("namespace") or "")


def check(node: str, write: Write, node_uid: Callable[[str], str | None]) -> str:
    """The reason node `node` may not make this write, or "" when it may."""
    operation, obj, old = write.operation, write.obj, write.old
    if not node:
        return f'could not determine node from user "{write.user_name}"'
    if write.resource == "pods":
        if write.subresource == "":
            return _admit_pod(node, operation, obj, old, node_uid)
        if write.subresource == "status":
            return _admit_pod_status(node, operation, obj, old)
        if write.subresource == "eviction":
            if operation != "CREATE":
                return f"unexpected operation {operation}"
            if _spec(old).get("nodeName") != node:
                return f"node {node} can only evict pods with spec.nodeName set to itself"
            return ""
        return f"unexpected pod subresource \"{write.subresource}\", only 'status' and 'eviction' are allowed"
    if write.resource == "nodes":
        return _admit_node(node, operation, write.name, obj, old)
    if write.resource == LEASES:
        if write.namespace != NODE_LEASE_NAMESPACE:
            return f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        if write.name != node:
            return "can only access node lease with the same name as the requesting node"
    return ""


def _admit_pod(
    node: str, operation: Operation, obj: JSON, old: JSON | None, node_uid: Callable[[str], str | None]
) -> str:
    if operation == "DELETE":
        if _spec(old).get("nodeName") != node:
            return f'node "{node}" can only delete pods with spec.nodeName set to itself'
        return ""
    if operation != "CREATE":
        return f'unexpected operation "{operation}", node "{node}" can only create and delete mirror pods'
    if MIRROR_POD_ANNOTATION not in (meta_of(obj).get("annotations") or {}):
        return (
            f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, '
            f'node "{node}" can only create mirror pods'
        )
    if _spec(obj).get("nodeName") != node:
        return f'node "{node}" can only create pods with spec.nodeName set to itself'
    owners = [o for o in meta_of(obj).get("ownerReferences") or [] if isinstance(o, dict)]
    if len(owners) > 1:
        return f'node "{node}" can only create pods with a single owner reference set to itself'
    if not owners or (owners[0].get("apiVersion"), owners[0].get("kind"), owners[0].get("name")) != (
        "v1",
        "Node",
        node,
    ):
        return f'node "{node}" can only create pods with an owner reference set to itself'
    owner = owners[0]
    if owner.get("controller") is not True:
        return f'node "{node}" can only create pods with a controller owner reference set to itself'
    if owner.get("blockOwnerDeletion") is True:
        return f'node "{node}" must not set blockOwnerDeletion on an owner reference'
    uid = node_uid(node)
    if uid is None:
        raise not_found("nodes", node)
    if owner.get("uid") != uid:
        return f"node {node} UID mismatch: expected {owner.get('uid')} got {uid}"
    referenced = _pod_references(obj)
    if referenced == "service account":
        return f'node "{node}" can not create pods that reference a service account'
    if referenced:
        return f'node "{node}" can not create pods that reference {referenced}'
    return ""


def _admit_pod_status(node: str, operation: Operation, obj: JSON, old: JSON | None) -> str:
    if operation != "UPDATE":
        return f'unexpected operation "{operation}"'
    if _spec(old).get("nodeName") != node:
        return f'node "{node}" can only update pod status for pods with spec.nodeName set to itself'
    if (meta_of(old).get("labels") or {}) != (meta_of(obj).get("labels") or {}):
        return f'node "{node}" cannot update labels through pod status'
    return ""


def _admit_node(node: str, operation: Operation, name: str, obj: JSON, old: JSON | None) -> str:
    if name != node:
        return f'node "{node}" is not allowed to modify node "{name}"'
    labels = meta_of(obj).get("labels")
    if operation == "CREATE":
        if _spec(obj).get("configSource") is not None:
            return f'node "{node}" is not allowed to create pods with a non-nil configSource'
        bad = forbidden_labels(labels, None)
        if bad:
            return f'node "{node}" is not allowed to set the following labels: {", ".join(bad)}'
    elif operation == "UPDATE":
        source = _spec(obj).get("configSource")
        if source is not None and source != _spec(old).get("configSource"):
            return f'node "{node}" is not allowed to update configSource to a new non-nil configSource'
        if (_spec(obj).get("taints") or []) != (_spec(old).get("taints") or []):
            return f'node "{node}" is not allowed to modify taints'
        bad = forbidden_labels(labels, meta_of(old).get("labels"))
        if bad:
            return f"is not allowed to modify labels: {', '.join(bad)}"
    return ""
