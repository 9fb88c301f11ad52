"""DefaultTolerationSeconds: upstream TestForgivenessAdmission and TestHandles as data."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CONNECT, CREATE, DELETE, UPDATE, Attributes
from kubetaint.admission.defaulttolerationseconds import DefaultTolerationSeconds

from .builders import lookup, pod, pod_create, tol

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def default(key: str, seconds: int = 300) -> dict[str, Any]:
    return tol(key, "Exists", effect="NoExecute", seconds=seconds)


CASES = [
    pytest.param([], [default(NOT_READY), default(UNREACHABLE)],
                 id="a pod without tolerations gets not-ready and unreachable NoExecute for 300s"),
    pytest.param([tol("foo", "Equal", "bar", "NoSchedule", 700)],
                 [tol("foo", "Equal", "bar", "NoSchedule", 700), default(NOT_READY), default(UNREACHABLE)],
                 id="unrelated tolerations are kept and both defaults appended"),
    pytest.param([default(NOT_READY, 700)], [default(NOT_READY, 700), default(UNREACHABLE)],
                 id="a pod tolerating not-ready only gets the unreachable default"),
    pytest.param([default(UNREACHABLE, 700)], [default(UNREACHABLE, 700), default(NOT_READY)],
                 id="a pod tolerating unreachable only gets the not-ready default"),
    pytest.param([default(NOT_READY, 700), default(UNREACHABLE, 700)],
                 [default(NOT_READY, 700), default(UNREACHABLE, 700)],
                 id="a pod tolerating both keeps its own seconds and gets nothing"),
    pytest.param([tol(UNREACHABLE, "Exists", seconds=700)],
                 [tol(UNREACHABLE, "Exists", seconds=700), default(NOT_READY)],
                 id="a toleration with an empty effect counts as tolerating NoExecute"),
    pytest.param([tol(operator="Exists", seconds=700)], [tol(operator="Exists", seconds=700)],
                 id="a match-everything toleration counts for both keys"),
    pytest.param([tol(NOT_READY, "Equal", "x", "NoExecute")],
                 [tol(NOT_READY, "Equal", "x", "NoExecute"), default(UNREACHABLE)],
                 id="operator and value are not checked: an Equal toleration for not-ready counts"),
    pytest.param([tol(NOT_READY, "Exists", effect="NoSchedule")],
                 [tol(NOT_READY, "Exists", effect="NoSchedule"), default(NOT_READY), default(UNREACHABLE)],
                 id="a NoSchedule toleration for not-ready does not count"),
]  # fmt: skip


@pytest.mark.parametrize(("tolerations", "expected"), CASES)
def test_default_toleration_seconds(
    tolerations: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> None:
    requested = pod(tolerations=tolerations)
    before = copy.deepcopy(requested)
    admitted = DefaultTolerationSeconds().admit(pod_create(requested), lookup())
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == expected
    assert requested == before


def test_configured_seconds_are_used() -> None:
    plugin = DefaultTolerationSeconds(not_ready_seconds=60, unreachable_seconds=0)
    admitted = plugin.admit(pod_create(pod()), lookup())
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [default(NOT_READY, 60), default(UNREACHABLE, 0)]


def test_subresources_and_other_resources_are_ignored() -> None:
    plugin = DefaultTolerationSeconds()
    p = pod()
    assert plugin.admit(Attributes(UPDATE, "pods", p, subresource="status"), lookup()) is p
    n = {"kind": "Node", "metadata": {"name": "n"}, "spec": {}}
    assert plugin.admit(Attributes(CREATE, "nodes", n), lookup()) is n


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
    assert DefaultTolerationSeconds().handles(operation) is handled
