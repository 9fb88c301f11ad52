"""Node affinity validation of pods and pod templates, as data from upstream's TestValidatePod
(pkg/apis/core/validation/validation_test.go: the nodeAffinity error cases) and
ValidateNodeSelectorRequirement / ValidateNodeFieldSelectorRequirement's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

from .builders import pod, workload

REQ = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PREF = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
QNAME_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def _preferred(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def _expr(key: str, operator: str, values: list[Any] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"key": key, "operator": operator}
    if values is not None:
        req["values"] = values
    return {"matchExpressions": [req]}


def _field(key: str, operator: str, values: list[Any] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"key": key, "operator": operator}
    if values is not None:
        req["values"] = values
    return {"matchFields": [req]}


def _strings(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(obj)]


VALID = [
    pytest.param(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "key2", "operator": "In", "values": ["value1", "value2"]},
                                {"key": "key3", "operator": "Exists"},
                                {"key": "key4", "operator": "Gt", "values": ["10"]},
                            ],
                            "matchFields": [
                                {"key": "metadata.name", "operator": "NotIn", "values": ["host1"]}
                            ],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": _expr("foo", "In", ["bar"])},
                    {"weight": 100, "preference": _expr("foo", "DoesNotExist")},
                    {"weight": 1, "preference": {}},
                ],
            }
        },
        id="upstream's valid node affinity with expressions, field selector and preferred terms",
    ),
    pytest.param(_required({}), id="an empty node selector term is allowed"),
    pytest.param(
        _required(_field("metadata.name", "In", ["node-1.example"])), id="a DaemonSet node-name term"
    ),
    pytest.param({}, id="an empty affinity"),
    pytest.param({"nodeAffinity": {}}, id="an empty node affinity"),
    pytest.param(_required(_expr("key", "Lt", ["not-a-number"])), id="Lt values are not checked as integers"),
    pytest.param(_required(_expr("key", "In", ["-bad-label-"])), id="values are not checked as label values"),
]


@pytest.mark.parametrize("affinity", VALID)
def test_valid_node_affinity_is_accepted(affinity: dict[str, Any]) -> None:
    assert validate(pod(affinity=affinity)) == []
    daemon_set = workload("DaemonSet")
    daemon_set["spec"]["template"]["spec"]["affinity"] = affinity
    assert validate(daemon_set) == []


INVALID = [
    pytest.param(
        _required(),
        [f"{REQ}.nodeSelectorTerms: Required value: must have at least one node selector term"],
        id="required node affinity without terms",
    ),
    pytest.param(
        {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}},
        [f"{REQ}.nodeSelectorTerms: Required value: must have at least one node selector term"],
        id="required node affinity with terms left out",
    ),
    pytest.param(
        _required(_expr("key1", "In")),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'"
        ],
        id="In without values",
    ),
    pytest.param(
        _required(_expr("key1", "NotIn", [])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'"
        ],
        id="NotIn with an empty value list",
    ),
    pytest.param(
        _required(_expr("key1", "Exists", ["v"])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        ],
        id="Exists with values",
    ),
    pytest.param(
        _required(_expr("key1", "DoesNotExist", ["v"])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        ],
        id="DoesNotExist with values",
    ),
    pytest.param(
        _required(_expr("key1", "Gt", ["1", "2"])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified single value when `operator` is 'Lt' or 'Gt'"
        ],
        id="Gt with two values",
    ),
    pytest.param(
        _required(_expr("key1", "Lt")),
        [
            f"{REQ}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
            "must be specified single value when `operator` is 'Lt' or 'Gt'"
        ],
        id="Lt without a value",
    ),
    pytest.param(
        _required(_expr("key1", "DoesNotExists")),
        [
            f'{REQ}.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "DoesNotExists": '
            "not a valid selector operator"
        ],
        id="an unknown operator",
    ),
    pytest.param(
        _required(_expr("invalid key ___@#", "Exists")),
        [
            f'{REQ}.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "invalid key ___@#": '
            f"name part {QNAME_REGEX}"
        ],
        id="a key that is not a qualified name",
    ),
    pytest.param(
        _required(_field("metadata.name", "In", ["host1", "host2"])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchFields[0].values: Required value: "
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
        ],
        id="a field selector with two values",
    ),
    pytest.param(
        _required(_field("metadata.name", "Exists")),
        [
            f'{REQ}.nodeSelectorTerms[0].matchFields[0].operator: Invalid value: "Exists": '
            "not a valid selector operator"
        ],
        id="a field selector with Exists",
    ),
    pytest.param(
        _required(_field("metadata.namespace", "In", ["ns1"])),
        [
            f'{REQ}.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.namespace": '
            "not a valid field selector key"
        ],
        id="a field selector on another field",
    ),
    pytest.param(
        _required(_field("metadata.name", "In", ["Host_1"])),
        [f'{REQ}.nodeSelectorTerms[0].matchFields[0].values[0]: Invalid value: "Host_1": {SUBDOMAIN}'],
        id="a field selector value that is not a node name",
    ),
    pytest.param(
        _required(_field("metadata.name", "NotIn", ["a", "B"])),
        [
            f"{REQ}.nodeSelectorTerms[0].matchFields[0].values: Required value: "
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            f'{REQ}.nodeSelectorTerms[0].matchFields[0].values[1]: Invalid value: "B": {SUBDOMAIN}',
        ],
        id="every field selector value is checked as a node name",
    ),
    pytest.param(
        _required({}, _expr("k", "In")),
        [
            f"{REQ}.nodeSelectorTerms[1].matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'"
        ],
        id="the second term's index is reported",
    ),
    pytest.param(
        _preferred({"weight": 199, "preference": _expr("foo", "In", ["bar"])}),
        [f"{PREF}[0].weight: Invalid value: 199: must be in the range 1-100"],
        id="a preferred weight above 100",
    ),
    pytest.param(
        _preferred({"preference": _expr("foo", "In", ["bar"])}),
        [f"{PREF}[0].weight: Invalid value: 0: must be in the range 1-100"],
        id="a preferred term without weight",
    ),
    pytest.param(
        _preferred({"weight": 10, "preference": _expr("foo", "Lt")}),
        [
            f"{PREF}[0].preference.matchExpressions[0].values: Required value: "
            "must be specified single value when `operator` is 'Lt' or 'Gt'"
        ],
        id="a preferred term's bad requirement",
    ),
    pytest.param(
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": -1, "preference": _field("metadata.uid", "In", ["x"])}
                ],
            }
        },
        [
            f"{REQ}.nodeSelectorTerms: Required value: must have at least one node selector term",
            f"{PREF}[0].weight: Invalid value: -1: must be in the range 1-100",
            f'{PREF}[0].preference.matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key',
        ],
        id="required errors come before preferred ones",
    ),
]


@pytest.mark.parametrize(("affinity", "expected"), INVALID)
def test_pod_node_affinity_errors(affinity: dict[str, Any], expected: list[str]) -> None:
    assert _strings(pod(affinity=affinity)) == expected


@pytest.mark.parametrize(("affinity", "expected"), INVALID)
@pytest.mark.parametrize("kind", ["ReplicaSet", "Deployment", "DaemonSet"])
def test_template_node_affinity_errors(kind: str, affinity: dict[str, Any], expected: list[str]) -> None:
    obj = workload(kind)
    obj["spec"]["template"]["spec"]["affinity"] = affinity
    assert _strings(obj) == [e.replace("spec.", "spec.template.spec.", 1) for e in expected]


def test_affinity_errors_come_after_node_selector_and_before_node_name() -> None:
    obj = pod(nodeSelector={"bad key!": "v"}, affinity=_required(), nodeName="Bad_Node")
    fields = [e.field for e in validate(obj)]
    assert fields == ["spec.nodeSelector", f"{REQ}.nodeSelectorTerms", "spec.nodeName"]


def test_affinity_errors_are_field_value_reasons() -> None:
    errs = validate(
        pod(affinity=_required(_expr("k", "Exists", ["v"]), _field("metadata.name", "Gt", ["1"])))
    )
    assert [(e.type, e.reason) for e in errs] == [
        ("Forbidden", "FieldValueForbidden"),
        ("Invalid value", "FieldValueInvalid"),
    ]


def test_pod_update_keeps_checking_affinity() -> None:
    old = pod()
    new = pod(affinity=_required())
    new["metadata"]["resourceVersion"] = "1"
    old["metadata"]["resourceVersion"] = "1"
    fields = [e.field for e in validate(new, old=old)]
    assert f"{REQ}.nodeSelectorTerms" in fields
