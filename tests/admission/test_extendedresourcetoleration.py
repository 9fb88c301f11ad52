"""ExtendedResourceToleration: upstream TestAdmit and TestHandles as data, plus resource naming."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CONNECT, CREATE, DELETE, UPDATE
from kubetaint.admission.extendedresourcetoleration import (
    ExtendedResourceToleration,
    is_extended_resource_name,
)

from .builders import container, lookup, pod, pod_create, tol

CPU = container("cpu", requests={"cpu": "2"})
MEMORY = container("mem", requests={"memory": "2048"})
EK = "example.com/device-ek"
DO = "example.com/device-do"
WANTS_EK = container("ek", requests={EK: "1"})
WANTS_DO = container("do", requests={DO: "2"})


def ext(name: str) -> dict[str, Any]:
    return tol(name, "Exists", effect="NoSchedule")


CASES = [
    pytest.param(pod(containers=[]), None, id="a pod without containers is unchanged"),
    pytest.param(pod(containers=[CPU]), None, id="a container without extended resources changes nothing"),
    pytest.param(pod(containers=[], init_containers=[MEMORY]), None,
                 id="an init container without extended resources changes nothing"),
    pytest.param(pod(containers=[WANTS_EK]), [ext(EK)], id="a container requesting an extended resource gets its toleration"),
    pytest.param(pod(containers=[], init_containers=[WANTS_DO]), [ext(DO)],
                 id="an init container requesting an extended resource gets its toleration"),
    pytest.param(pod(containers=[CPU, WANTS_EK], tolerations=[tol("foo", "Equal", "bar", "NoSchedule")]),
                 [tol("foo", "Equal", "bar", "NoSchedule"), ext(EK)],
                 id="existing tolerations are preserved and the new one appended"),
    pytest.param(pod(containers=[MEMORY, WANTS_EK], init_containers=[CPU, WANTS_DO]), [ext(DO), ext(EK)],
                 id="several extended resources give tolerations sorted by name"),
    pytest.param(pod(containers=[CPU, MEMORY, WANTS_EK], tolerations=[ext(EK)]), [ext(EK)],
                 id="an existing identical toleration is not duplicated"),
    pytest.param(pod(containers=[CPU, MEMORY, WANTS_EK], tolerations=[tol(EK, "Equal", "foo", "NoExecute")]),
                 [tol(EK, "Equal", "foo", "NoExecute"), ext(EK)],
                 id="a toleration with the same key but another effect and value is kept and the new one added"),
    pytest.param(pod(containers=[CPU, MEMORY, WANTS_EK], tolerations=[tol(operator="Exists")]),
                 [tol(operator="Exists"), ext(EK)],
                 id="a wildcard toleration does not stop the addition"),
    pytest.param(pod(containers=[container(requests={"example.com/gpu": "1"})]), [ext("example.com/gpu")],
                 id="a pod requesting example.com/gpu carries the example.com/gpu Exists NoSchedule toleration"),
    pytest.param(pod(containers=[container(requests={EK: "1"}), container("d", requests={EK: "3"})]), [ext(EK)],
                 id="the same resource in two containers gives one toleration"),
    pytest.param(pod(containers=[container(limits={EK: "1"})]), None, id="only requests are looked at, not limits"),
    pytest.param(pod(containers=[WANTS_EK], tolerations=[{**ext(EK), "tolerationSeconds": 5}]), [ext(EK)],
                 id="a matching toleration with seconds is replaced in place"),
]  # fmt: skip


@pytest.mark.parametrize(("requested", "expected"), CASES)
def test_admit(requested: dict[str, Any], expected: list[dict[str, Any]] | None) -> None:
    before = copy.deepcopy(requested)
    admitted = ExtendedResourceToleration().admit(pod_create(requested), lookup())
    assert admitted is not None
    assert admitted["spec"].get("tolerations") == (
        expected if expected is not None else before["spec"].get("tolerations")
    )
    assert requested == before


@pytest.mark.parametrize(
    ("name", "extended"),
    [
        pytest.param("example.com/gpu", True, id="a domain-prefixed name is extended"),
        pytest.param("nvidia.com/gpu", True, id="a vendor device is extended"),
        pytest.param("cpu", False, id="an unprefixed name is native"),
        pytest.param("hugepages-2Mi", False, id="hugepages are native"),
        pytest.param("kubernetes.io/foo", False, id="a kubernetes.io name is native"),
        pytest.param("sub.kubernetes.io/foo", False, id="a name containing kubernetes.io/ is native"),
        pytest.param("requests.example.com/gpu", False, id="a requests.-prefixed name is not extended"),
        pytest.param("example.com/-bad", False, id="an invalid name part is not extended"),
        pytest.param("Example.com/gpu", False, id="an uppercase domain is not a valid prefix"),
        pytest.param("a/b/c", False, id="two slashes are not a qualified name"),
    ],
)
def test_is_extended_resource_name(name: str, extended: bool) -> None:
    assert is_extended_resource_name(name) is extended


@pytest.mark.parametrize(
    ("operation", "handled"),
    [
        pytest.param(CREATE, True, id="create is handled"),
        pytest.param(UPDATE, True, id="update is handled"),
        pytest.param(DELETE, False, id="delete is not handled"),
        pytest.param(CONNECT, False, id="connect is not handled"),
    ],
)
def test_handles(operation: str, handled: bool) -> None:
    assert ExtendedResourceToleration().handles(operation) is handled
