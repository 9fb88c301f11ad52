"""Node taint and toleration validation, as data from upstream's TestValidateNode / TestValidatePod
taint and toleration cases and semantics.md §3-§4."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

from .builders import node, pod

EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
QNAME_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def _strings(obj: dict[str, Any], **kwargs: Any) -> list[str]:
    return [str(e) for e in validate(obj, **kwargs)]


TAINT_CASES = [
    pytest.param(
        [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}], [], id="a well-formed taint is valid"
    ),
    pytest.param(
        [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}],
        [],
        id="the same key with different effects is allowed",
    ),
    pytest.param(
        [{"key": "a", "effect": "Foo"}],
        [f'metadata.taints[0].effect: Unsupported value: "Foo": {EFFECTS}'],
        id="an unknown effect is unsupported",
    ),
    pytest.param(
        [{"key": "a", "effect": "NoScheduleNoAdmit"}],
        [f'metadata.taints[0].effect: Unsupported value: "NoScheduleNoAdmit": {EFFECTS}'],
        id="the commented-out NoScheduleNoAdmit effect is rejected",
    ),
    pytest.param(
        [{"key": "a", "effect": "noschedule"}],
        [f'metadata.taints[0].effect: Unsupported value: "noschedule": {EFFECTS}'],
        id="effects are case sensitive",
    ),
    pytest.param(
        [{"key": "a"}],
        ["metadata.taints[0].effect: Required value"],
        id="a taint without an effect is required",
    ),
    pytest.param(
        [{"key": "", "effect": "NoSchedule"}],
        [
            'metadata.taints[0].key: Invalid value: "": name part must be non-empty',
            f'metadata.taints[0].key: Invalid value: "": name part {QNAME_REGEX}',
        ],
        id="an empty key gives two key errors",
    ),
    pytest.param(
        [{"key": "/x", "effect": "NoSchedule"}],
        ['metadata.taints[0].key: Invalid value: "/x": prefix part must be non-empty'],
        id="an empty prefix is reported",
    ),
    pytest.param(
        [{"key": "a/b/c", "effect": "NoSchedule"}],
        [
            'metadata.taints[0].key: Invalid value: "a/b/c": a qualified name '
            + QNAME_REGEX
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ],
        id="a key with two slashes is one qualified-name error",
    ),
    pytest.param(
        [{"key": "x" * 64, "effect": "NoSchedule"}],
        [
            f'metadata.taints[0].key: Invalid value: "{"x" * 64}": name part must be no more than 63 characters'
        ],
        id="a 64 character key name is too long",
    ),
    pytest.param(
        [{"key": "Example.com/a", "effect": "NoSchedule"}],
        [
            'metadata.taints[0].key: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123 subdomain must '
            "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ],
        id="an uppercase prefix fails as a DNS subdomain",
    ),
    pytest.param(
        [{"key": "a", "value": "-bad", "effect": "NoSchedule"}],
        [f'metadata.taints[0].value: Invalid value: "-bad": {LABEL_VALUE}'],
        id="a taint value must be a label value",
    ),
    pytest.param(
        [{"key": "a", "value": "v" * 64 + "-", "effect": "NoSchedule"}],
        [
            f'metadata.taints[0].value: Invalid value: "{"v" * 64}-": must be no more than 63 characters;{LABEL_VALUE}'
        ],
        id="several value messages are joined by a semicolon in one error",
    ),
    pytest.param(
        [
            {"key": "a", "value": "1", "effect": "NoSchedule"},
            {"key": "a", "value": "2", "effect": "NoSchedule"},
        ],
        [
            'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"2", Effect:"NoSchedule", '
            "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"
        ],
        id="a repeated key and effect is a duplicate on the later index whatever the value",
    ),
    pytest.param(
        [{"key": "a", "effect": "NoSchedule"}] * 3,
        [
            'metadata.taints[1]: Duplicate value: core.Taint{Key:"a", Value:"", Effect:"NoSchedule", '
            "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
            'metadata.taints[2]: Duplicate value: core.Taint{Key:"a", Value:"", Effect:"NoSchedule", '
            "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
        ],
        id="each further repeat gets its own duplicate error",
    ),
    pytest.param(
        [{"key": "a", "effect": "NoExecute", "timeAdded": "not a time"}],
        [],
        id="timeAdded is never validated",
    ),
]


@pytest.mark.parametrize(("taints", "expected"), TAINT_CASES)
def test_node_taints(taints: list[dict[str, Any]], expected: list[str]) -> None:
    assert _strings(node(taints=taints)) == expected


def test_duplicate_taint_error_carries_reason_and_taint() -> None:
    taint = {"key": "a", "effect": "NoSchedule"}
    (err,) = validate(node(taints=[taint, taint]))
    assert (err.field, err.type, err.reason) == (
        "metadata.taints[1]",
        "Duplicate value",
        "FieldValueDuplicate",
    )
    assert err.detail == "taints must be unique by key and effect pair"


EMPTY_KEY = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'
SECONDS = "effect must be 'NoExecute' when `tolerationSeconds` is set"

TOLERATION_CASES = [
    pytest.param(
        [{"operator": "Exists"}], [], id="an empty key with Exists tolerates everything and is valid"
    ),
    pytest.param(
        [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        [],
        id="a full Equal toleration",
    ),
    pytest.param([{"key": "k", "value": "v"}], [], id="an empty operator means Equal"),
    pytest.param(
        [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}],
        [],
        id="negative tolerationSeconds are valid",
    ),
    pytest.param(
        [{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Exists"}],
        [],
        id="duplicate tolerations are valid",
    ),
    pytest.param(
        [{"operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
        [f'spec.tolerations[0].operator: Invalid value: "Equal": {EMPTY_KEY}'],
        id="an empty key requires Exists",
    ),
    pytest.param(
        [{}],
        [f'spec.tolerations[0].operator: Invalid value: "": {EMPTY_KEY}'],
        id="the zero toleration is rejected at the operator",
    ),
    pytest.param(
        [{"key": "nospecialchars^=@", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
        [f'spec.tolerations[0].key: Invalid value: "nospecialchars^=@": name part {QNAME_REGEX}'],
        id="an invalid key",
    ),
    pytest.param(
        [{"key": "foo", "operator": "In", "value": "bar", "effect": "NoSchedule"}],
        ['spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"'],
        id="an unknown operator is unsupported",
    ),
    pytest.param(
        [{"key": "foo", "operator": "exists"}],
        ['spec.tolerations[0].operator: Unsupported value: "exists": supported values: "Equal", "Exists"'],
        id="a lowercase exists is unsupported",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"}],
        [
            "spec.tolerations[0].operator: Invalid value: \"bar\": value must be empty when `operator` is 'Exists'"
        ],
        id="Exists with a value is reported at the operator",
    ),
    pytest.param(
        [{"key": "foo", "operator": "Equal", "value": "bad value"}],
        [f'spec.tolerations[0].operator: Invalid value: "bad value": {LABEL_VALUE}'],
        id="an Equal value error is reported at the operator",
    ),
    pytest.param(
        [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoSchedule",
                "tolerationSeconds": 20,
            }
        ],
        [f'spec.tolerations[0].effect: Invalid value: "NoSchedule": {SECONDS}'],
        id="tolerationSeconds needs NoExecute",
    ),
    pytest.param(
        [{"key": "k", "operator": "Exists", "tolerationSeconds": 20}],
        [f'spec.tolerations[0].effect: Invalid value: "": {SECONDS}'],
        id="tolerationSeconds with an empty effect also fails",
    ),
    pytest.param(
        [{"key": "k", "operator": "Exists", "effect": "Foo"}],
        [f'spec.tolerations[0].effect: Unsupported value: "Foo": {EFFECTS}'],
        id="an unknown toleration effect",
    ),
    pytest.param(
        [{"operator": "In", "effect": "Foo", "tolerationSeconds": 1}],
        [
            f'spec.tolerations[0].operator: Invalid value: "In": {EMPTY_KEY}',
            f'spec.tolerations[0].effect: Invalid value: "Foo": {SECONDS}',
            'spec.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
            f'spec.tolerations[0].effect: Unsupported value: "Foo": {EFFECTS}',
        ],
        id="independent checks all report for one toleration",
    ),
]


@pytest.mark.parametrize(("tolerations", "expected"), TOLERATION_CASES)
def test_pod_tolerations(tolerations: list[dict[str, Any]], expected: list[str]) -> None:
    assert _strings(pod(tolerations=tolerations)) == expected


GATE_ON = {"TaintTolerationComparisonOperators": True}

COMPARISON_CASES = [
    pytest.param("Lt", "100", None, [], id="Lt with a canonical integer is valid when the gate is on"),
    pytest.param("Gt", "-5", None, [], id="Gt with a negative integer is valid when the gate is on"),
    pytest.param(
        "Gt",
        "0100",
        None,
        [
            'spec.tolerations[0].value: Invalid value: "0100": must be a valid decimal integer in canonical form'
        ],
        id="a leading zero is not canonical",
    ),
    pytest.param(
        "Lt",
        "",
        None,
        ['spec.tolerations[0].value: Invalid value: "": must be non-empty'],
        id="an empty comparison value is rejected",
    ),
    pytest.param(
        "Lt",
        "1.5",
        None,
        [
            'spec.tolerations[0].value: Invalid value: "1.5": must be a valid decimal integer in canonical form'
        ],
        id="a decimal fraction is rejected",
    ),
]


@pytest.mark.parametrize(("operator", "value", "old", "expected"), COMPARISON_CASES)
def test_comparison_operators_with_gate(operator: str, value: str, old: Any, expected: list[str]) -> None:
    obj = pod(tolerations=[{"key": "sla", "operator": operator, "value": value, "effect": "NoSchedule"}])
    assert _strings(obj, feature_gates=GATE_ON) == expected


def test_comparison_operators_rejected_without_gate() -> None:
    obj = pod(tolerations=[{"key": "sla", "operator": "Gt", "value": "5"}])
    (err,) = validate(obj)
    assert err.field == "spec.tolerations[0].operator"
    assert err.reason == "FieldValueNotSupported"
    assert err.bad_value == "Gt"


def test_comparison_operators_ratchet_when_old_pod_has_them() -> None:
    old = pod(tolerations=[{"key": "sla", "operator": "Gt", "value": "5"}])
    new = pod(
        tolerations=[
            {"key": "sla", "operator": "Gt", "value": "5"},
            {"key": "b", "operator": "Lt", "value": "x"},
        ]
    )
    # Upstream validates tolerations in ValidatePodSpec and again after the only-added check.
    assert (
        _strings(new, old=old)
        == [
            'spec.tolerations[1].value: Invalid value: "x": must be a valid decimal integer in canonical form'
        ]
        * 2
    )


FORBIDDEN = (
    "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
)
BASE = {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}

UPDATE_CASES = [
    pytest.param([BASE], [BASE, {"key": "x", "operator": "Exists"}], [], id="additions are allowed"),
    pytest.param(
        [BASE, {"key": "x", "operator": "Exists"}],
        [{"key": "x", "operator": "Exists"}, BASE],
        [],
        id="reordering is allowed",
    ),
    pytest.param([BASE], [{**BASE, "tolerationSeconds": 9000}], [], id="tolerationSeconds may increase"),
    pytest.param(
        [BASE],
        [{k: v for k, v in BASE.items() if k != "tolerationSeconds"}],
        [],
        id="tolerationSeconds may become nil",
    ),
    pytest.param([BASE], [], [FORBIDDEN], id="removal is forbidden"),
    pytest.param(
        [BASE],
        [{**BASE, "effect": "NoSchedule", "tolerationSeconds": None}],
        [FORBIDDEN],
        id="an effect change is forbidden",
    ),
    pytest.param(
        [{"key": "k", "value": "v"}],
        [{"key": "k", "operator": "Equal", "value": "v"}],
        [FORBIDDEN],
        id="an empty operator becoming Equal counts as a change",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), UPDATE_CASES)
def test_pod_update_tolerations(
    old: list[dict[str, Any]], new: list[dict[str, Any]], expected: list[str]
) -> None:
    assert _strings(pod(tolerations=new), old=pod(tolerations=old)) == expected
