"""ValidatePodUpdate: which pod spec fields an update may change (cases ported as data from
upstream's TestValidatePodUpdate in pkg/apis/core/validation/validation_test.go)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetaint.api.validation import validate
from kubetaint.api.validation.podupdate import FORBIDDEN_UPDATE_DETAIL

from .builders import pod

FORBIDDEN = f"spec: Forbidden: {FORBIDDEN_UPDATE_DETAIL}"


def _errors(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(new, old=old)]


def _first_lines(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    return [line.splitlines()[0] for line in _errors(new, old)]


def _pod(**spec: Any) -> dict[str, Any]:
    return pod(**spec)


ALLOWED = [
    pytest.param(_pod(), _pod(), id="an identical spec is allowed"),
    pytest.param(
        _pod(containers=[{"name": "c", "image": "nginx:1.27"}]),
        _pod(),
        id="a container image may change",
    ),
    pytest.param(
        _pod(initContainers=[{"name": "i", "image": "busybox:2"}]),
        _pod(initContainers=[{"name": "i", "image": "busybox:1"}]),
        id="an init container image may change",
    ),
    pytest.param(_pod(activeDeadlineSeconds=30), _pod(), id="activeDeadlineSeconds may be set"),
    pytest.param(
        _pod(activeDeadlineSeconds=10),
        _pod(activeDeadlineSeconds=30),
        id="activeDeadlineSeconds may be lowered",
    ),
    pytest.param(
        _pod(tolerations=[{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]),
        _pod(tolerations=[{"key": "a", "operator": "Exists"}]),
        id="a toleration may be added",
    ),
    pytest.param(
        _pod(
            tolerations=[{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}]
        ),
        _pod(
            tolerations=[{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
        ),
        id="an existing toleration's tolerationSeconds may change",
    ),
    pytest.param(
        _pod(terminationGracePeriodSeconds=1),
        _pod(terminationGracePeriodSeconds=-1),
        id="a negative grace period may be raised to 1",
    ),
    pytest.param(
        _pod(schedulingGates=[{"name": "a"}]),
        _pod(schedulingGates=[{"name": "a"}, {"name": "b"}]),
        id="a scheduling gate may be removed",
    ),
    pytest.param(
        _pod(schedulingGates=[{"name": "a"}], nodeSelector={"disk": "ssd"}),
        _pod(schedulingGates=[{"name": "a"}]),
        id="a gated pod may gain a node selector",
    ),
    pytest.param(
        _pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1000m"}}}]),
        _pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]),
        id="quantities compare by value",
    ),
    pytest.param(
        _pod(hostNetwork=False, nodeSelector={}, tolerations=[]),
        _pod(),
        id="zero values equal absent fields",
    ),
]


@pytest.mark.parametrize(("new", "old"), ALLOWED)
def test_allowed_updates(new: dict[str, Any], old: dict[str, Any]) -> None:
    assert _errors(new, old) == []


FORBIDDEN_CASES = [
    pytest.param(_pod(nodeName="n2"), _pod(nodeName="n1"), [FORBIDDEN], id="nodeName may not change"),
    pytest.param(_pod(nodeName="n1"), _pod(), [FORBIDDEN], id="nodeName may not be set by an update"),
    pytest.param(
        _pod(nodeSelector={"disk": "ssd"}),
        _pod(),
        [FORBIDDEN],
        id="an ungated pod may not gain a node selector",
    ),
    pytest.param(
        _pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "2"}}}]),
        _pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]),
        [FORBIDDEN],
        id="container resources may not change on update",
    ),
    pytest.param(
        _pod(containers=[{"name": "d", "image": "nginx"}]),
        _pod(),
        [FORBIDDEN],
        id="a container may not be renamed",
    ),
    pytest.param(
        _pod(priority=10),
        _pod(priority=5),
        [FORBIDDEN],
        id="priority may not change",
    ),
    pytest.param(
        _pod(terminationGracePeriodSeconds=5),
        _pod(terminationGracePeriodSeconds=30),
        [FORBIDDEN],
        id="a non-negative grace period may not change",
    ),
    pytest.param(
        _pod(activeDeadlineSeconds=60),
        _pod(activeDeadlineSeconds=30),
        ["spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"],
        id="activeDeadlineSeconds may not be raised",
    ),
    pytest.param(
        _pod(),
        _pod(activeDeadlineSeconds=30),
        [
            "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"
        ],
        id="activeDeadlineSeconds may not be unset",
    ),
    pytest.param(
        _pod(activeDeadlineSeconds=-1),
        _pod(),
        [
            "spec.activeDeadlineSeconds: Invalid value: -1: must be between 1 and 2147483647, inclusive",
            "spec.activeDeadlineSeconds: Invalid value: -1: must be between 0 and 2147483647, inclusive",
        ],
        id="a negative activeDeadlineSeconds stops the update checks",
    ),
    pytest.param(
        _pod(activeDeadlineSeconds=0),
        _pod(activeDeadlineSeconds=30),
        ["spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"],
        id="activeDeadlineSeconds may not be lowered to zero (the spec rule wants at least 1)",
    ),
    pytest.param(
        _pod(tolerations=[{"key": "b", "operator": "Exists"}]),
        _pod(tolerations=[{"key": "a", "operator": "Exists"}]),
        ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
        id="an existing toleration may not be removed",
    ),
    pytest.param(
        _pod(schedulingGates=[{"name": "a"}, {"name": "b"}]),
        _pod(schedulingGates=[{"name": "a"}]),
        [
            "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'b'"
        ],
        id="a scheduling gate may not be added",
    ),
]


@pytest.mark.parametrize(("new", "old", "expected"), FORBIDDEN_CASES)
def test_forbidden_updates(new: dict[str, Any], old: dict[str, Any], expected: list[str]) -> None:
    assert _first_lines(new, old) == expected


def test_the_forbidden_error_lists_the_changed_fields() -> None:
    (error,) = _errors(_pod(nodeName="n2", priority=3), _pod(nodeName="n1"))
    assert error.splitlines()[1:] == [
        "  spec.nodeName:",
        '-   "n1"',
        '+   "n2"',
        "  spec.priority:",
        "+   3",
    ]


def test_the_upstream_message_names_every_updatable_field() -> None:
    assert FORBIDDEN_UPDATE_DETAIL == (
        "pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    )


def test_changed_image_and_changed_port_reports_only_the_port() -> None:
    old = _pod(containers=[{"name": "c", "image": "a", "ports": [{"containerPort": 80}]}])
    new = _pod(containers=[{"name": "c", "image": "b", "ports": [{"containerPort": 81}]}])
    (error,) = _errors(new, old)
    assert error.splitlines()[1:] == ["  spec.containers[0].ports[0].containerPort:", "-   80", "+   81"]


_labels = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"]), max_size=3)


@given(labels=_labels, image=st.sampled_from(["nginx", "nginx:1", "busybox"]))
def test_metadata_and_image_changes_never_touch_the_spec_rule(labels: dict[str, str], image: str) -> None:
    old = _pod(nodeName="n1", tolerations=[{"key": "k", "operator": "Exists"}])
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = labels
    new["spec"]["containers"][0]["image"] = image
    assert _errors(new, old) == []


@given(node=st.sampled_from(["n2", "n3", ""]))
def test_any_node_name_change_is_forbidden(node: str) -> None:
    old = _pod(nodeName="n1")
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = node
    assert _first_lines(new, old) == [FORBIDDEN]
