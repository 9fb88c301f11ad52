"""NodeRestriction in the admission chain: what a `system:node:n1` user may write, with upstream's
messages (plugin/pkg/admission/noderestriction admission_test.go cases, as data)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from kubetaint.admission import AdmissionError, Attributes, DictLookup
from kubetaint.admission.noderestriction import NodeRestriction, Operation, forbidden_labels, is_kubelet_label
from kubetaint.api import errors
from kubetaint.apiserver.authn import CURRENT_USER, UserInfo

JSON = dict[str, Any]
N1 = UserInfo("system:node:n1", "", ("system:nodes", "system:authenticated"))


def node(
    name: str = "n1", *, labels: dict[str, str] | None = None, taints: list[JSON] | None = None, **spec: Any
) -> JSON:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {**({"taints": taints} if taints is not None else {}), **spec},
    }


def pod(name: str = "p", node_name: str = "n1", **meta: Any) -> JSON:
    return {"metadata": {"name": name, "namespace": "default", **meta}, "spec": {"nodeName": node_name}}


def lease(name: str, namespace: str = "kube-node-lease") -> JSON:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {}}


@pytest.fixture
def as_n1() -> Iterator[None]:
    token = CURRENT_USER.set(N1)
    yield
    CURRENT_USER.reset(token)


def admit(operation: Operation, resource: str, subresource: str, obj: JSON, old: JSON | None) -> JSON:
    """The plugin's Admit of the request as the current user makes it (a StatusError when refused)."""
    lookup = DictLookup({"nodes": [{"metadata": {"name": "n1", "uid": "uid-1"}}]})
    meta = (old if operation == "DELETE" else obj).get("metadata") or {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    new = None if operation == "DELETE" else obj
    attrs = Attributes(operation, resource, new, old, namespace, name, subresource, False, CURRENT_USER.get())
    try:
        admitted = NodeRestriction().admit(attrs, lookup)
    except AdmissionError as err:
        raise errors.StatusError.from_status(err.status) from None
    return obj if admitted is None else cast(JSON, admitted)


TAINT = {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("operation", "resource", "subresource", "obj", "old", "message"),
    [
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(taints=[TAINT]),
            node(taints=[TAINT]),
            None,
            id="an update that keeps the taints",
        ),
        pytest.param(
            "UPDATE", "nodes", "", node(taints=[]), node(), None, id="an empty list equals no taints"
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(taints=[]),
            node(taints=[TAINT]),
            'node "n1" is not allowed to modify taints',
            id="removing taints",
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(taints=[{**TAINT, "value": "w"}]),
            node(taints=[TAINT]),
            'node "n1" is not allowed to modify taints',
            id="changing a taint value",
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "status",
            node(taints=[TAINT, TAINT]),
            node(taints=[TAINT]),
            'node "n1" is not allowed to modify taints',
            id="taints through the status subresource hook",
        ),
        pytest.param("CREATE", "nodes", "", node(taints=[TAINT]), None, None, id="registering with taints"),
        pytest.param(
            "CREATE",
            "nodes",
            "",
            node("n2"),
            None,
            'node "n1" is not allowed to modify node "n2"',
            id="registering another node",
        ),
        pytest.param(
            "DELETE",
            "nodes",
            "",
            node("n2"),
            node("n2"),
            'node "n1" is not allowed to modify node "n2"',
            id="deleting another node",
        ),
        pytest.param(
            "CREATE",
            "nodes",
            "",
            node(labels={"node-restriction.kubernetes.io/x": "y"}),
            None,
            'node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/x',
            id="registering with a restricted label",
        ),
        pytest.param(
            "CREATE",
            "nodes",
            "",
            node(configSource={"configMap": {}}),
            None,
            'node "n1" is not allowed to create pods with a non-nil configSource',
            id="registering with a configSource",
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(configSource={"a": 1}),
            node(),
            'node "n1" is not allowed to update configSource to a new non-nil configSource',
            id="setting a configSource",
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(labels={"kubernetes.io/hostname": "h"}),
            node(),
            None,
            id="a kubelet label",
        ),
        pytest.param(
            "UPDATE",
            "nodes",
            "",
            node(labels={}),
            node(labels={"foo.k8s.io/bar": "x"}),
            "is not allowed to modify labels: foo.k8s.io/bar",
            id="removing a k8s.io label",
        ),
        pytest.param(
            "UPDATE",
            "pods",
            "",
            pod(),
            pod(),
            'unexpected operation "UPDATE", node "n1" can only create and delete mirror pods',
            id="updating a pod",
        ),
        pytest.param(
            "UPDATE",
            "pods",
            "status",
            pod(labels={"a": "b"}),
            pod(),
            'node "n1" cannot update labels through pod status',
            id="labels through pod status",
        ),
        pytest.param(
            "UPDATE",
            "pods",
            "binding",
            pod(),
            pod(),
            "unexpected pod subresource \"binding\", only 'status' and 'eviction' are allowed",
            id="binding a pod",
        ),
        pytest.param("DELETE", "pods", "", pod(), pod(), None, id="deleting its own pod"),
        pytest.param(
            "CREATE",
            "pods",
            "eviction",
            {"metadata": {"name": "p"}},
            pod(node_name="n2"),
            "node n1 can only evict pods with spec.nodeName set to itself",
            id="evicting another node's pod",
        ),
        pytest.param(
            "CREATE", "leases.coordination.k8s.io", "", lease("n1"), None, None, id="creating its lease"
        ),
        pytest.param(
            "CREATE",
            "leases.coordination.k8s.io",
            "",
            lease("n1", "default"),
            None,
            'can only access leases in the "kube-node-lease" system namespace',
            id="a lease outside kube-node-lease",
        ),
        pytest.param(
            "UPDATE",
            "leases.coordination.k8s.io",
            "",
            lease("n2"),
            lease("n2"),
            "can only access node lease with the same name as the requesting node",
            id="another node's lease",
        ),
        pytest.param(
            "CREATE",
            "events",
            "",
            {"metadata": {"name": "e"}},
            None,
            None,
            id="other resources are not restricted",
        ),
    ],
)
def test_node_restriction(
    as_n1: None,
    operation: Operation,
    resource: str,
    subresource: str,
    obj: JSON,
    old: JSON | None,
    message: str | None,
) -> None:
    if message is None:
        assert admit(operation, resource, subresource, obj, old) is obj
        return
    with pytest.raises(errors.StatusError) as info:
        admit(operation, resource, subresource, obj, old)
    assert info.value.code == 403
    assert info.value.message.endswith(f"is forbidden: {message}")


MIRROR_OWNER = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "uid-1", "controller": True}


@pytest.mark.parametrize(
    ("meta", "spec", "message"),
    [
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "h"}, "ownerReferences": [MIRROR_OWNER]},
            {},
            None,
            id="a proper mirror pod",
        ),
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "h"}},
            {},
            'node "n1" can only create pods with an owner reference set to itself',
            id="no owner",
        ),
        pytest.param(
            {
                "annotations": {"kubernetes.io/config.mirror": "h"},
                "ownerReferences": [MIRROR_OWNER, MIRROR_OWNER],
            },
            {},
            'node "n1" can only create pods with a single owner reference set to itself',
            id="two owners",
        ),
        pytest.param(
            {
                "annotations": {"kubernetes.io/config.mirror": "h"},
                "ownerReferences": [{**MIRROR_OWNER, "controller": False}],
            },
            {},
            'node "n1" can only create pods with a controller owner reference set to itself',
            id="not a controller reference",
        ),
        pytest.param(
            {
                "annotations": {"kubernetes.io/config.mirror": "h"},
                "ownerReferences": [{**MIRROR_OWNER, "blockOwnerDeletion": True}],
            },
            {},
            'node "n1" must not set blockOwnerDeletion on an owner reference',
            id="blockOwnerDeletion",
        ),
        pytest.param(
            {
                "annotations": {"kubernetes.io/config.mirror": "h"},
                "ownerReferences": [{**MIRROR_OWNER, "uid": "other"}],
            },
            {},
            "node n1 UID mismatch: expected other got uid-1",
            id="a stale node uid",
        ),
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "h"}, "ownerReferences": [MIRROR_OWNER]},
            {"serviceAccountName": "sa"},
            'node "n1" can not create pods that reference a service account',
            id="a service account",
        ),
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "h"}, "ownerReferences": [MIRROR_OWNER]},
            {"containers": [{"name": "c", "envFrom": [{"configMapRef": {"name": "x"}}]}]},
            'node "n1" can not create pods that reference configmaps',
            id="a configmap through envFrom",
        ),
        pytest.param(
            {"annotations": {"kubernetes.io/config.mirror": "h"}, "ownerReferences": [MIRROR_OWNER]},
            {"volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]},
            'node "n1" can not create pods that reference persistentvolumeclaims',
            id="a PVC volume",
        ),
    ],
)
def test_mirror_pod_creation(as_n1: None, meta: JSON, spec: JSON, message: str | None) -> None:
    obj = {"metadata": {"name": "m", "namespace": "default", **meta}, "spec": {"nodeName": "n1", **spec}}
    if message is None:
        assert admit("CREATE", "pods", "", obj, None) is obj
        return
    with pytest.raises(errors.StatusError) as info:
        admit("CREATE", "pods", "", obj, None)
    assert info.value.message == f'pods "m" is forbidden: {message}'


def test_other_users_pass_through() -> None:
    token = CURRENT_USER.set(UserInfo("alice", "", ("system:authenticated",)))
    try:
        obj = node(taints=[])
        assert admit("UPDATE", "nodes", "", obj, node(taints=[TAINT])) is obj
    finally:
        CURRENT_USER.reset(token)


@pytest.mark.parametrize(
    ("key", "kubelet"),
    [
        ("kubernetes.io/hostname", True),
        ("node.kubernetes.io/instance-type", True),
        ("kubelet.kubernetes.io/anything", True),
        ("foo.node.kubernetes.io/bar", True),
        ("node-role.kubernetes.io/worker", False),
        ("topology.kubernetes.io/zone", True),
        ("example.com/x", False),
    ],
)
def test_kubelet_labels(key: str, kubelet: bool) -> None:
    assert is_kubelet_label(key) is kubelet


def test_forbidden_labels_lists_changed_restricted_keys_sorted() -> None:
    old = {"a.k8s.io/x": "1", "team": "a", "kubernetes.io/os": "linux"}
    new = {
        "team": "b",
        "kubernetes.io/os": "windows",
        "z.node-restriction.kubernetes.io/y": "1",
        "b.kubernetes.io/q": "",
    }
    assert forbidden_labels(new, old) == [
        "a.k8s.io/x",
        "b.kubernetes.io/q",
        "z.node-restriction.kubernetes.io/y",
    ]
