"""NamespaceLifecycle, ported from upstream's plugin/pkg/admission/namespace/lifecycle/
admission_test.go (TestAdmissionNamespaceDoesNotExist, TestAdmissionNamespaceActive,
TestAdmissionNamespaceTerminating) as a table, with upstream's messages and Status bodies."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.admission import (
    CREATE,
    DELETE,
    UPDATE,
    AdmissionChain,
    AdmissionError,
    AdmissionSettings,
    Attributes,
    DictLookup,
)
from kubetaint.admission.namespacelifecycle import NamespaceLifecycle

JSON = dict[str, Any]


def namespace(name: str, phase: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": phase}}


def pod(namespace: str = "test", name: str = "123") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "ctr", "image": "image"}]},
    }


LOOKUP = DictLookup({"namespaces": [namespace("test", "Active"), namespace("going", "Terminating")]})


def attrs(operation: str, resource: str, ns: str, name: str, obj: JSON | None = None) -> Attributes:
    old = obj if operation == UPDATE else None
    return Attributes(operation, resource, obj if operation != DELETE else None, old, ns, name)


def run(request: Attributes) -> None:
    plugin = NamespaceLifecycle()
    if plugin.handles(request.operation):
        plugin.admit(request, LOOKUP)
        plugin.validate(request, LOOKUP)


ALLOWED = [
    pytest.param(
        attrs(CREATE, "pods", "test", "123", pod()), id="a create in an active namespace is admitted"
    ),
    pytest.param(
        attrs(UPDATE, "pods", "going", "123", pod("going")),
        id="an update in a terminating namespace proceeds",
    ),
    pytest.param(attrs(DELETE, "pods", "going", "123"), id="a delete in a terminating namespace proceeds"),
    pytest.param(attrs(DELETE, "pods", "missing", "123"), id="a delete in a missing namespace proceeds"),
    pytest.param(
        attrs(DELETE, "namespaces", "", "other"), id="a namespace other than the immortal ones can be deleted"
    ),
    pytest.param(
        attrs(CREATE, "namespaces", "", "fresh", namespace("fresh", "Active")),
        id="namespaces themselves are always admitted",
    ),
    pytest.param(
        attrs(CREATE, "nodes", "", "n1", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        id="cluster-scoped resources are always admitted",
    ),
]


@pytest.mark.parametrize("request_", ALLOWED)
def test_admitted(request_: Attributes) -> None:
    run(request_)


REFUSED = [
    pytest.param(
        attrs(CREATE, "pods", "missing", "123", pod("missing")),
        404,
        "NotFound",
        'namespaces "missing" not found',
        {"name": "missing", "kind": "namespaces"},
        id="a create in a namespace that does not exist is NotFound",
    ),
    pytest.param(
        attrs(UPDATE, "pods", "missing", "123", pod("missing")),
        404,
        "NotFound",
        'namespaces "missing" not found',
        {"name": "missing", "kind": "namespaces"},
        id="an update in a namespace that does not exist is NotFound",
    ),
    pytest.param(
        attrs(CREATE, "pods", "going", "123", pod("going")),
        403,
        "Forbidden",
        'pods "123" is forbidden: unable to create new content in namespace going because it is being terminated',
        {
            "name": "123",
            "kind": "pods",
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": "namespace going is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
        id="a create in a terminating namespace is Forbidden with the NamespaceTerminating cause",
    ),
    *(
        pytest.param(
            attrs(DELETE, "namespaces", "", name),
            403,
            "Forbidden",
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            {"name": name, "kind": "namespaces"},
            id=f"the immortal namespace {name} cannot be deleted",
        )
        for name in ("default", "kube-system", "kube-public")
    ),
]


@pytest.mark.parametrize(("request_", "code", "reason", "message", "details"), REFUSED)
def test_refused(request_: Attributes, code: int, reason: str, message: str, details: JSON) -> None:
    with pytest.raises(AdmissionError) as caught:
        run(request_)
    status = caught.value.status
    assert (status["code"], status["reason"], status["message"]) == (code, reason, message)
    assert status["details"] == details


def test_kube_node_lease_is_not_immortal() -> None:
    run(attrs(DELETE, "namespaces", "", "kube-node-lease"))


def test_the_default_chain_refuses_a_pod_in_a_missing_namespace() -> None:
    with pytest.raises(AdmissionError) as caught:
        AdmissionChain(lookup=LOOKUP).admit(attrs(CREATE, "pods", "missing", "p", pod("missing", "p")))
    assert caught.value.message == 'namespaces "missing" not found'


def test_disabled_it_admits_anything() -> None:
    chain = AdmissionChain(AdmissionSettings(disable_admission_plugins=["NamespaceLifecycle"]), LOOKUP)
    assert chain.admit(attrs(CREATE, "pods", "missing", "p", pod("missing", "p"))) is not None
