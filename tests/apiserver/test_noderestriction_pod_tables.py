"""Upstream's NodeRestriction pod tables as data (plugin/pkg/admission/noderestriction/
admission_test.go Test_nodePlugin_Admit: mirror and normal pods bound to the node, to another node
and to none, through the main resource, status and eviction, and pod-status labels), each
refusal checked against upstream's expected error text in the rendered 403.

Left out: the "missing pod" and "unnamed pod" cases (the server answers 404 for a pod it does not
have before admission runs, and every eviction it serves names its pod)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.admission.noderestriction import MIRROR_POD_ANNOTATION, Operation, Write, check
from kubetaint.apiserver.authz import forbidden_error

JSON = dict[str, Any]
NODE = "mynode"


def make_pod(name: str, node: str, *, mirror: bool, labels: dict[str, str] | None = None) -> JSON:
    """makeTestPod: uid pod-uid; a mirror pod has the annotation and a controller reference to
    its node (uid <node>-uid)."""
    meta: JSON = {"name": name, "namespace": "ns", "uid": "pod-uid"}
    if labels is not None:
        meta["labels"] = labels
    if mirror:
        meta["annotations"] = {MIRROR_POD_ANNOTATION: "true"}
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"{node}-uid", "controller": True}
        ]
    return {"metadata": meta, "spec": {"nodeName": node}}


def node_uid(name: str) -> str | None:
    return {NODE: f"{NODE}-uid"}.get(name)


def eviction(name: str) -> JSON:
    return {"metadata": {"name": name, "namespace": "ns"}}


def _cases(kind: str, pod: JSON, bound: str) -> list:
    """The nine writes of one pod: (operation, subresource) x (main, status, eviction)."""
    mirror = kind == "mirror"
    own = bound == "self"
    not_self = "spec.nodeName set to itself"
    unexpected = "forbidden: unexpected operation"
    name = pod["metadata"]["name"]
    create = ("" if own else not_self) if mirror else "can only create mirror pods"
    rows = [
        ("CREATE", "", pod, None, create, f"create a {kind} pod bound to {bound}"),
        ("UPDATE", "", pod, pod, unexpected, f"update of a {kind} pod bound to {bound}"),
        ("DELETE", "", pod, pod, "" if own else not_self, f"delete of a {kind} pod bound to {bound}"),
        ("CREATE", "status", pod, None, unexpected, f"create of {kind} pod status bound to {bound}"),
        (
            "UPDATE",
            "status",
            pod,
            pod,
            "" if own else not_self,
            f"update of {kind} pod status bound to {bound}",
        ),
        ("DELETE", "status", pod, pod, unexpected, f"delete of {kind} pod status bound to {bound}"),
        (
            "CREATE",
            "eviction",
            eviction(name),
            pod,
            "" if own else not_self,
            f"eviction of a {kind} pod bound to {bound}",
        ),
        (
            "UPDATE",
            "eviction",
            eviction(name),
            pod,
            unexpected,
            f"update of an eviction of a {kind} pod bound to {bound}",
        ),
        (
            "DELETE",
            "eviction",
            eviction(name),
            pod,
            unexpected,
            f"delete of an eviction of a {kind} pod bound to {bound}",
        ),
    ]
    return [
        pytest.param(op, sub, obj, old, err, id=("allow " if not err else "forbid ") + what)
        for op, sub, obj, old, err, what in rows
    ]


MY_POD = make_pod("mypod", NODE, mirror=False)
CASES = [
    *_cases("mirror", make_pod("mymirrorpod", NODE, mirror=True), "self"),
    *_cases("mirror", make_pod("othermirrorpod", "othernode", mirror=True), "another"),
    *_cases("mirror", make_pod("unboundmirrorpod", "", mirror=True), "unbound"),
    *_cases("normal", MY_POD, "self"),
    *_cases("normal", make_pod("otherpod", "othernode", mirror=False), "another"),
    *_cases("normal", make_pod("unboundpod", "", mirror=False), "unbound"),
    pytest.param(
        "UPDATE",
        "status",
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a", "label-b": "value-b"}),
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a"}),
        "cannot update labels through pod status",
        id="forbid addition of pod status preexisting labels",
    ),
    pytest.param(
        "UPDATE",
        "status",
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a"}),
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a", "label-b": "value-b"}),
        "cannot update labels through pod status",
        id="forbid deletion of pod status preexisting labels",
    ),
    pytest.param(
        "UPDATE",
        "status",
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a"}),
        MY_POD,
        "cannot update labels through pod status",
        id="forbid deletion of all pod status preexisting labels",
    ),
    pytest.param(
        "UPDATE",
        "status",
        MY_POD,
        make_pod("mypod", NODE, mirror=False, labels={"label-a": "value-a"}),
        "cannot update labels through pod status",
        id="forbid addition of pod status labels",
    ),
]


@pytest.mark.parametrize(("operation", "subresource", "obj", "old", "err"), CASES)
def test_node_restriction_pods(
    operation: Operation, subresource: str, obj: JSON, old: JSON | None, err: str
) -> None:
    write = Write(f"system:node:{NODE}", operation, "pods", subresource, obj, old)
    reason = check(NODE, write, node_uid)
    if not err:
        assert reason == ""
        return
    assert reason
    assert err in forbidden_error("pods", "", write.name, reason).message
